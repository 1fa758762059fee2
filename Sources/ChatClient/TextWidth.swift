import CShims

/// Terminal column widths of text, measured the way terminals draw it: per
/// code point, with wcwidth(3), not per grapheme cluster. A character after a
/// zero-width joiner is drawn into the joiner's cell (as tmux and emoji-aware
/// terminals do), variation selectors and combining marks take no column,
/// and an emoji modifier after its base takes two more: `👍🏽` is 4 columns,
/// `👩‍💻` 2, `❤️` 1. The chat screen draws exactly the ``Cell``s measured
/// here, so its idea of a row's width and the terminal's agree.
///
/// The program must run with a UTF-8 LC_CTYPE (chatsh sets one, see
/// chatsh(1), "ENVIRONMENT"); where the C library does not know a character,
/// a small table of wide ranges decides.
public enum TextWidth {
  /// What one terminal cell (or a wide pair of cells) shows: a character
  /// that advances the cursor, followed by what the terminal draws into
  /// the same place.
  public struct Cell: Equatable, Sendable {
    public var scalars: [Unicode.Scalar]
    public var width: Int

    public init(scalars: [Unicode.Scalar], width: Int) {
      self.scalars = scalars
      self.width = width
    }
  }

  /// The most code points ncurses keeps in one cell (CCHARW_MAX).
  public static let scalarsPerCell = 5

  public static func of(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x7F { return value < 0x20 ? 0 : 1 }
    if (0x7F...0x9F).contains(value) { return 0 }
    let width = Int(chat_wcwidth(value))
    return width >= 0 ? width : fallback(value)
  }

  /// Whether the C library can draw `scalar`; others are shown as U+FFFD.
  public static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value)
      && (scalar.value < 0x7F || chat_wcwidth(scalar.value) >= 0)
  }

  private static let zeroWidthJoiner: Unicode.Scalar = "\u{200D}"

  /// The cells a character is drawn in. A character is measured on its
  /// own: a joiner at its end joins nothing (it is left out when drawn).
  public static func cells(_ character: Character) -> [Cell] {
    var cells: [Cell] = []
    var afterJoiner = false
    for scalar in character.unicodeScalars {
      let width = of(scalar)
      if !cells.isEmpty && (afterJoiner || width == 0) {
        if cells[cells.count - 1].scalars.count < scalarsPerCell {
          cells[cells.count - 1].scalars.append(scalar)
        }
      } else if width == 0 {
        // Nothing to attach to: drawn nowhere, takes no column.
      } else {
        cells.append(Cell(scalars: [scalar], width: width))
      }
      afterJoiner = scalar == zeroWidthJoiner
    }
    for index in cells.indices {
      while cells[index].scalars.count > 1 && cells[index].scalars.last == zeroWidthJoiner {
        cells[index].scalars.removeLast()
      }
    }
    return cells
  }

  public static func of(_ character: Character) -> Int {
    // The common case without allocating: one scalar.
    let scalars = character.unicodeScalars
    if scalars.count == 1, let scalar = scalars.first { return of(scalar) }
    var total = 0
    for cell in cells(character) { total += cell.width }
    return total
  }

  public static func of<S: StringProtocol>(_ text: S) -> Int {
    var total = 0
    for character in text { total += of(character) }
    return total
  }

  /// The longest prefix of `text` that fits in `columns`.
  public static func prefix(_ text: String, fitting columns: Int) -> String {
    var used = 0
    var result = ""
    for character in text {
      let width = of(character)
      if used + width > columns { break }
      used += width
      result.append(character)
    }
    return result
  }

  /// `text` in at most `columns`: whole when it fits, else cut at a
  /// character (a wide one is never split) and ended with `…`, so a
  /// reader sees that more was there; spaces before the `…` are dropped.
  public static func truncated(_ text: String, fitting columns: Int) -> String {
    guard of(text) > columns else { return text }
    guard columns > 0 else { return "" }
    var kept = prefix(text, fitting: columns - 1)
    while kept.last == " " { kept.removeLast() }
    return kept + "…"
  }

  private static func fallback(_ value: UInt32) -> Int {
    switch value {
    case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return 0
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
      return 2
    default: return 1
    }
  }
}

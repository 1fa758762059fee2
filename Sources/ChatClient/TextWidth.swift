import CShims

/// Terminal column widths of text, from wcwidth(3), so that CJK and emoji
/// take two columns and combining marks none. The program must have called
/// `setlocale(LC_ALL, "")` (or LC_CTYPE) with a UTF-8 locale; where the C
/// library does not know a character, a small table of wide ranges decides.
public enum TextWidth {
  public static func of(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x7F { return value < 0x20 ? 0 : 1 }
    let width = Int(chat_wcwidth(value))
    return width >= 0 ? width : fallback(value)
  }

  public static func of(_ character: Character) -> Int {
    var total = 0
    for scalar in character.unicodeScalars {
      // Emoji presentation selector and zero-width joiner sequences: the
      // terminal shows the cluster as one wide glyph (or its first part).
      total += of(scalar)
      if total >= 2 { return 2 }
    }
    return max(total, character.unicodeScalars.first.map { of($0) } ?? 0)
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

import CNcurses
import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// A key read from the terminal.
enum Key: Equatable {
  case character(Character)
  case control(UInt8)
  case alt(Character)
  case function(Int32)
  case resize
  /// Alt-Enter: a line break in the input, to compose a block.
  case lineBreak
  /// Text pasted while bracketed paste was on (between `ESC [200~` and
  /// `ESC [201~`): one insertion, its line breaks kept, never a key each.
  case paste(String)
}

/// The terminal, through ncursesw: full-screen drawing of styled rows and
/// reading of keys. Nothing else in chatsh touches the terminal.
final class Screen {
  // Attribute bits of curses.h (NCURSES_BITS), which Swift cannot import as macros.
  private static let underline: Int32 = 1 << 17
  private static let reverse: Int32 = 1 << 18
  private static let dim: Int32 = 1 << 20
  private static let bold: Int32 = 1 << 21

  private var hasColor = false
  /// The standard screen, as initscr(3) returns it (the global `stdscr` is
  /// shared mutable state to Swift 6).
  private let window: UnsafeMutablePointer<WINDOW>

  /// `color`: false for `--color never` or `NO_COLOR`; then styles are
  /// attributes only (bold, dim, reverse, underline).
  init(color: Bool) {
    window = initscr()!
    raw()
    noecho()
    nonl()
    keypad(window, true)
    set_escdelay(25)
    timeout(0)
    // Bracketed paste: the terminal marks what is pasted, so that several
    // lines become one input rather than several Enters (chatsh(1)).
    writeAll(1, Self.bracketedPasteOn)
    if color && has_colors() {
      start_color()
      use_default_colors()
      hasColor = true
      // Pairs 1-6: user colours red .. cyan; 7 separators; 8 errors; 9 status.
      for color: Int16 in 1...6 { init_pair(color, color, -1) }
      init_pair(7, Int16(COLOR_CYAN), -1)
      init_pair(8, Int16(COLOR_RED), -1)
      init_pair(9, Int16(COLOR_BLACK), Int16(COLOR_CYAN))
      init_pair(10, Int16(COLOR_BLACK), Int16(COLOR_YELLOW))
    }
  }

  func end() {
    endwin()
    writeAll(1, Self.bracketedPasteOff)
  }

  private static let bracketedPasteOn = "\u{1B}[?2004h"
  private static let bracketedPasteOff = "\u{1B}[?2004l"
  /// The most of one paste kept, in UTF-8 bytes: a block is at most 4096
  /// bytes on the wire; what is beyond is read and dropped.
  static let pasteLimit = 65536

  var height: Int { Int(getmaxy(window)) }
  var width: Int { Int(getmaxx(window)) }

  private func pair(_ number: Int32) -> Int32 {
    hasColor ? number << 8 : 0
  }

  private func attributes(_ style: Style) -> Int32 {
    switch style {
    case .plain: 0
    case .dim: Self.dim
    case .user(let index): pair(Int32(index) + 1) | Self.bold
    case .ownName: Self.dim
    case .own: 0
    case .mention: pair(10) | Self.bold | (hasColor ? 0 : Self.reverse)
    case .link: pair(4) | Self.underline
    case .room: pair(6)
    case .separator: pair(7) | Self.dim
    case .notice: Self.dim
    case .error: pair(8) | Self.bold
    case .status: pair(9) | (hasColor ? 0 : Self.reverse)
    case .statusUnread: pair(9) | Self.bold | (hasColor ? 0 : Self.reverse)
    }
  }

  func clear() {
    erase()
  }

  /// Draws `row` at screen line `y`, clipped hard at the last column: each
  /// cell is measured as ``TextWidth`` measures it and put with add_wch(3),
  /// so ncurses' idea of the cursor and the terminal's agree, and nothing
  /// any text holds can wrap into the next row.
  func draw(_ row: Row, at y: Int, x start: Int = 0, fill: Style? = nil) {
    var x = start
    let width = self.width
    guard y >= 0 && y < height else { return }
    if let fill {
      attrset(attributes(fill))
      mvhline(
        Int32(y), 0, chtype(UInt8(ascii: " ")) | chtype(UInt32(attributes(fill))), Int32(width))
    }
    move(Int32(y), Int32(x))
    drawing: for segment in row.segments {
      let attributes = self.attributes(segment.style)
      for character in segment.text {
        for cell in TextWidth.cells(character) {
          guard x + cell.width <= width else { break drawing }
          put(cell, attributes: attributes, y: y, x: x)
          x += cell.width
        }
      }
    }
    attrset(0)
  }

  /// One cell: its first code point with the ones the terminal draws into
  /// the same place (joined emoji, combining marks, variation selectors),
  /// written into the cchar_t directly (setcchar(3) would keep only
  /// zero-width followers, and the terminal would then draw a joined
  /// emoji narrower than ncurses thinks).
  private func put(_ cell: TextWidth.Cell, attributes: Int32, y: Int, x: Int) {
    let pairBits: Int32 = 0xFF << 8
    let pairNumber = Int16((attributes & pairBits) >> 8)
    let attributeBits = attr_t(UInt32(bitPattern: attributes & ~pairBits))
    guard TextWidth.isPrintable(cell.scalars[0]) else {
      // What the C library cannot measure is shown as U+FFFD, padded.
      for offset in 0..<cell.width {
        put(
          TextWidth.Cell(scalars: [offset == 0 ? "\u{FFFD}" : " "], width: 1),
          attributes: attributes, y: y, x: x + offset)
      }
      return
    }
    var character = cchar_t()
    var base: [wchar_t] = [wchar_t(bitPattern: cell.scalars[0].value), 0]
    setcchar(&character, &base, attributeBits, pairNumber, nil)
    withUnsafeMutableBytes(of: &character.chars) { raw in
      let slots = raw.bindMemory(to: wchar_t.self)
      for (index, scalar) in cell.scalars.enumerated().dropFirst() where index < slots.count {
        slots[index] = wchar_t(bitPattern: scalar.value)
      }
    }
    mvadd_wch(Int32(y), Int32(x), &character)
  }

  func moveCursor(y: Int, x: Int) {
    move(Int32(y), Int32(x))
  }

  /// Ctrl-L: repaint everything on the next refresh.
  func repaintAll() {
    clearok(window, true)
  }

  func refreshScreen() {
    refresh()
  }

  func bell() {
    beep()
  }

  /// The next key, or nil when none is waiting.
  func readKey() -> Key? {
    var value: wint_t = 0
    let result = get_wch(&value)
    if result == ERR { return nil }
    if result == KEY_CODE_YES {
      return Int32(value) == KEY_RESIZE ? .resize : .function(Int32(value))
    }
    if value == 27 {
      // Alt-x arrives as ESC x.
      var next: wint_t = 0
      guard get_wch(&next) == OK else { return .control(27) }
      if next == 13 || next == 10 { return .lineBreak }
      if next == wint_t(UInt8(ascii: "[")), let key = controlSequence() { return key }
      if let scalar = Unicode.Scalar(UInt32(next)), next >= 32 {
        return .alt(Character(scalar))
      }
      return .control(27)
    }
    if value < 32 || value == 127 { return .control(UInt8(value)) }
    guard let scalar = Unicode.Scalar(UInt32(value)) else { return nil }
    return .character(Character(scalar))
  }

  /// After `ESC [` that curses did not know: the start of a paste, read
  /// whole, or `Alt-[` as before for anything else (what followed is read
  /// again as keys).
  private func controlSequence() -> Key? {
    var parameters: [wint_t] = []
    var next: wint_t = 0
    // The rest of the sequence may come a moment later: wait a little.
    timeout(25)
    defer { timeout(0) }
    while parameters.count < 4, get_wch(&next) == OK {
      parameters.append(next)
    }
    guard parameters == "200~".unicodeScalars.map({ wint_t($0.value) }) else {
      for value in parameters.reversed() { unget_wch(wchar_t(value)) }
      return .alt("[")
    }
    return .paste(readPaste())
  }

  /// What comes up to `ESC [201~`, the end of a paste, waiting a little for
  /// the rest of a long one; at most ``pasteLimit`` bytes of it are kept.
  private func readPaste() -> String {
    let end = Array("\u{1B}[201~".unicodeScalars)
    var scalars: [Unicode.Scalar] = []
    var bytes = 0
    var recent: [Unicode.Scalar] = []
    timeout(200)
    defer { timeout(0) }
    var value: wint_t = 0
    while get_wch(&value) != ERR {
      guard let scalar = Unicode.Scalar(UInt32(value)) else { continue }
      recent.append(scalar)
      if recent.count > end.count { recent.removeFirst() }
      if recent == end {
        // The marker's first scalars were taken for text, unless past the limit.
        if scalars.suffix(end.count - 1).elementsEqual(end.dropLast()) {
          scalars.removeLast(end.count - 1)
        }
        break
      }
      bytes += scalar.utf8.count
      if bytes <= Self.pasteLimit { scalars.append(scalar) }
    }
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars)
    return String(text)
  }
}

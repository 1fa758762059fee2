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
  }

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
      if get_wch(&next) == OK, let scalar = Unicode.Scalar(UInt32(next)), next >= 32 {
        return .alt(Character(scalar))
      }
      return .control(27)
    }
    if value < 32 || value == 127 { return .control(UInt8(value)) }
    guard let scalar = Unicode.Scalar(UInt32(value)) else { return nil }
    return .character(Character(scalar))
  }
}

import LineProtocol

/// Cleans what a program wrote for a terminal (a build, a test run) into
/// lines a chat can hold, as `chatsh say` sends them (chatsh(1), "say"):
/// escape sequences (CSI, OSC, DCS and the other string sequences) go,
/// a line overwritten with carriage returns keeps only what was left
/// visible (its last segment), BEL and backspace go, other control
/// characters but TAB become U+FFFD, and a line too long for one request
/// is split at character boundaries instead of being refused.
public enum BuildOutput {
  /// One input line (without its line feed) as the text to send; empty
  /// when nothing visible is left.
  public static func clean(_ line: String) -> String {
    var text = stripEscapes(line)
    // CR LF ends a line; any other CR overwrote what came before it.
    while text.unicodeScalars.last == "\r" { text.unicodeScalars.removeLast() }
    if let lastReturn = text.unicodeScalars.lastIndex(of: "\r") {
      text = String(text.unicodeScalars[text.unicodeScalars.index(after: lastReturn)...])
    }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x07, 0x08, 0x7F: continue  // BEL, BS, DEL: nothing to show
      case 0x09: result.append(scalar)
      case 0x00...0x1F, 0x80...0x9F: result.append("\u{FFFD}")
      default: result.append(scalar)
      }
    }
    let cleaned = String(result)
    return cleaned.allSatisfy { $0 == " " || $0 == "\t" } ? "" : cleaned
  }

  /// Removes ESC sequences: CSI (`ESC [` ... final byte), OSC, DCS, SOS, PM
  /// and APC (`ESC ]`, `P`, `X`, `^`, `_` ... up to ST or, for OSC, BEL),
  /// and the short ones (`ESC` intermediates final, as `ESC ( B`); the
  /// C1 forms (U+009B CSI, U+009D OSC, ...) likewise.
  static func stripEscapes(_ text: String) -> String {
    guard
      text.unicodeScalars.contains(where: { $0 == "\u{1B}" || (0x80...0x9F).contains($0.value) })
    else { return text }
    var result = String.UnicodeScalarView()
    let scalars = Array(text.unicodeScalars)
    var index = 0
    func skipString(from start: Int) -> Int {
      // Up to ST (ESC \ or U+009C) or BEL; an unterminated one runs to the end.
      var position = start
      while position < scalars.count {
        let scalar = scalars[position]
        if scalar == "\u{07}" || scalar == "\u{9C}" { return position + 1 }
        if scalar == "\u{1B}" {
          return position + 1 < scalars.count && scalars[position + 1] == "\\"
            ? position + 2 : position
        }
        position += 1
      }
      return position
    }
    func skipControlSequence(from start: Int) -> Int {
      var position = start
      while position < scalars.count {
        let value = scalars[position].value
        position += 1
        if (0x40...0x7E).contains(value) { break }
        if value < 0x20 || value > 0x7E { return position - 1 }  // malformed: stop here
      }
      return position
    }
    while index < scalars.count {
      let scalar = scalars[index]
      switch scalar.value {
      case 0x1B:
        guard index + 1 < scalars.count else {
          index += 1
          continue
        }
        let next = scalars[index + 1]
        switch next {
        case "[": index = skipControlSequence(from: index + 2)
        case "]", "P", "X", "^", "_": index = skipString(from: index + 2)
        default:
          // ESC, intermediates (0x20-0x2F), then one final character.
          var position = index + 1
          while position < scalars.count && (0x20...0x2F).contains(scalars[position].value) {
            position += 1
          }
          index = min(position + 1, scalars.count)
        }
      case 0x9B: index = skipControlSequence(from: index + 1)
      case 0x90, 0x98, 0x9D, 0x9E, 0x9F: index = skipString(from: index + 1)
      default:
        result.append(scalar)
        index += 1
      }
    }
    return String(result)
  }

  /// The messages that `SAY target text` becomes: one, or for a text
  /// longer than a request line holds (chatbroker(7), "Transport and
  /// framing"), several of the longest that fit, in order. The one rule
  /// for `say` and the chat screen alike (chatsh(1)).
  public static func messages(saying text: String, to target: Target) -> [String] {
    split(text, maximumBytes: LineCodec.textCapacity(of: .say(target, text: "")))
  }

  /// `text` in pieces of at most `maximumBytes` bytes of UTF-8, cut between
  /// characters (between code points only where one character alone is
  /// longer), so a long line arrives whole, in order, over several messages.
  public static func split(_ text: String, maximumBytes: Int) -> [String] {
    guard text.utf8.count > maximumBytes else { return [text] }
    let limit = max(maximumBytes, 4)
    var pieces: [String] = []
    var piece = ""
    var pieceBytes = 0
    func add(_ part: String, bytes: Int) {
      if pieceBytes + bytes > limit && !piece.isEmpty {
        pieces.append(piece)
        piece = ""
        pieceBytes = 0
      }
      piece += part
      pieceBytes += bytes
    }
    for character in text {
      let bytes = character.utf8.count
      if bytes <= limit {
        add(String(character), bytes: bytes)
      } else {
        for scalar in character.unicodeScalars {
          add(String(scalar), bytes: scalar.utf8.count)
        }
      }
    }
    if !piece.isEmpty { pieces.append(piece) }
    return pieces
  }
}

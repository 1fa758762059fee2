/// Multi-line messages (since 1.6; chatbroker(7), `BLOCK`): one message of
/// several lines, a code block or a log excerpt. Inside the broker its text
/// holds line feeds; on the line protocol, where a line feed ends a line,
/// `BLOCK <target> <text>` and the `BLOCK` word of `MSG` and `HIST` lines
/// write each line feed as `\n` and each backslash as `\\`.
public enum MessageBlock {
  /// The most lines one message holds; the request line's 4096 bytes
  /// bound its size.
  public static let maximumLines = 100

  /// Whether `text` is a block: a text of more than one line.
  public static func isBlock(_ text: String) -> Bool {
    text.utf8.contains(UInt8(ascii: "\n"))
  }

  /// How many lines `text` holds.
  public static func lineCount(_ text: String) -> Int {
    text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
  }

  /// `text` as the line protocol writes a block: `\` as `\\`, line feeds
  /// as `\n`.
  public static func escaped(_ text: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count + 16)
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
      case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
      default: bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The text a written block stands for: `\n` a line feed, `\\` a
  /// backslash; any other backslash is itself, so that a path or a
  /// regular expression typed with single backslashes still reads.
  public static func unescaped(_ written: String) -> String {
    guard written.utf8.contains(UInt8(ascii: "\\")) else { return written }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(written.utf8.count)
    var escaping = false
    for byte in written.utf8 {
      if escaping {
        switch byte {
        case UInt8(ascii: "n"): bytes.append(UInt8(ascii: "\n"))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
        default: bytes += [UInt8(ascii: "\\"), byte]
        }
        escaping = false
      } else if byte == UInt8(ascii: "\\") {
        escaping = true
      } else {
        bytes.append(byte)
      }
    }
    if escaping { bytes.append(UInt8(ascii: "\\")) }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Why `text`, read from a block, is no message: blank, or of more than
  /// ``maximumLines`` lines; nil when it is one.
  public static func problem(_ text: String, verb: String) -> RequestError? {
    if text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }) {
      return RequestError(verb: verb, code: .empty, text: "the text is empty")
    }
    if lineCount(text) > maximumLines {
      return RequestError(
        verb: verb, code: .tooLong,
        text: "the block has more than \(maximumLines) lines; send the rest as another")
    }
    return nil
  }
}

import Glibc

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
    var text = text
    return text.withUTF8 { bytes in
      guard let base = bytes.baseAddress else { return false }
      return memchr(base, 0x0A, bytes.count) != nil
    }
  }

  /// How many lines `text` holds.
  public static func lineCount(_ text: String) -> Int {
    text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
  }

  /// `text` as the line protocol writes a block: `\` as `\\`, line feeds
  /// as `\n`.
  public static func escaped(_ text: String) -> String {
    var bytes: [UInt8] = []
    appendEscaped(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends `text` written as a block to `bytes`: runs between the bytes
  /// to escape are copied whole (found with memchr), as a HISTORY of
  /// blocks writes megabytes of them. Each kind of byte is looked for
  /// again only once the last one found is written, so a text of many
  /// backslashes and one line feed is read once, not once per backslash.
  public static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
    var text = text
    text.withUTF8 { source in
      guard let base = source.baseAddress else { return }
      bytes.reserveCapacity(bytes.count + source.count + 16)
      /// The next `byte` at or after `start`, or the end.
      func next(_ byte: UInt8, from start: Int) -> Int {
        guard let found = memchr(base + start, Int32(byte), source.count - start) else {
          return source.count
        }
        return UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
      }
      var start = 0
      var feed = next(0x0A, from: 0)
      var slash = next(0x5C, from: 0)
      while start < source.count {
        let stop = min(feed, slash)
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[start..<stop]))
        guard stop < source.count else { break }
        bytes.append(0x5C)
        bytes.append(stop == feed ? UInt8(ascii: "n") : 0x5C)
        start = stop + 1
        if stop == feed { feed = next(0x0A, from: start) } else { slash = next(0x5C, from: start) }
      }
    }
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

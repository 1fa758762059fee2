/// JSON string literals, written one way for the journal (chatbroker(8),
/// "JOURNAL"), chatsh's `--json` output (chatsh(1), "Output") and the log's
/// quoted values (chatbroker(8), "LOGGING").
///
/// Escaped: the quote, the backslash, every C0 and C1 control character and
/// DEL (TAB, LF and CR as `\t`, `\n`, `\r`, the rest as `\u00XX`), and the
/// line and paragraph separators U+2028 and U+2029, which JavaScript reads
/// as line ends. Nothing else: the rest of Unicode is written as UTF-8.
public enum JSONString {
  /// Appends `text`, quoted. Runs of bytes that need no escape (nearly all
  /// of them) are copied in bulk, not byte by byte: the journal writes
  /// every message through here.
  public static func append(_ text: String, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { source in
      var runStart = 0
      var index = 0
      let raw = UnsafeRawPointer(source.baseAddress)
      while index < source.count {
        // Eight bytes none of which can start an escape are skipped at
        // once: byte by byte, this scan was a third of a message record's
        // JSON (`perf record`, durable SAY from 100 clients).
        if index + 8 <= source.count,
          !mayStartEscape(raw!.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        {
          index += 8
          continue
        }
        let length = escapedLength(source, at: index)
        guard length > 0 else {
          index += 1
          continue
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<index]))
        appendEscape(scalar(source, at: index, length: length), to: &bytes)
        index += length
        runStart = index
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// `text` as a quoted JSON string.
  public static func quoted(_ text: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count + 2)
    append(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Whether any of eight bytes is below 20, a quote, a backslash, 7F, or
  /// C2 or E2 (the lead bytes of the C1 controls and of U+2028 and
  /// U+2029): the bytes ``escapedLength(_:at:)`` looks at.
  @inline(__always)
  private static func mayStartEscape(_ word: UInt64) -> Bool {
    ByteWord.hasByte(below: 0x20, in: word) | ByteWord.has(0x22, in: word)
      | ByteWord.has(0x5C, in: word) | ByteWord.has(0x7F, in: word)
      | ByteWord.has(0xC2, in: word) | ByteWord.has(0xE2, in: word) != 0
  }

  /// The UTF-8 length of the scalar at `index` when it must be escaped, else 0.
  private static func escapedLength(_ source: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
    let byte = source[index]
    if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F {
      return 1
    }
    // C1 controls: U+0080 to U+009F are C2 80 to C2 9F.
    if byte == 0xC2, index + 1 < source.count, source[index + 1] <= 0x9F {
      return 2
    }
    // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
    if byte == 0xE2, index + 2 < source.count, source[index + 1] == 0x80,
      source[index + 2] == 0xA8 || source[index + 2] == 0xA9
    {
      return 3
    }
    return 0
  }

  private static func scalar(_ source: UnsafeBufferPointer<UInt8>, at index: Int, length: Int)
    -> UInt32
  {
    switch length {
    case 1: UInt32(source[index])
    case 2: UInt32(source[index + 1])
    default: 0x2028 + UInt32(source[index + 2] - 0xA8)
    }
  }

  private static func appendEscape(_ scalar: UInt32, to bytes: inout [UInt8]) {
    switch scalar {
    case 0x22: bytes.append(contentsOf: "\\\"".utf8)
    case 0x5C: bytes.append(contentsOf: "\\\\".utf8)
    case 0x09: bytes.append(contentsOf: "\\t".utf8)
    case 0x0A: bytes.append(contentsOf: "\\n".utf8)
    case 0x0D: bytes.append(contentsOf: "\\r".utf8)
    default:
      let hex = Array("0123456789abcdef".utf8)
      bytes.append(contentsOf: "\\u".utf8)
      for shift in stride(from: 12, through: 0, by: -4) {
        bytes.append(hex[Int((scalar >> UInt32(shift)) & 0xF)])
      }
    }
  }
}

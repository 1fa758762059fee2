import Glibc
import LineProtocol

/// The small JSON the journal needs: one flat object per line whose values
/// are strings or integers. Hand-written because Foundation's coders are
/// slow on the hot path (measured in the README), and because a record must
/// be encoded in one pass straight into the bytes that go to disk.
struct JSONLineWriter {
  private(set) var bytes: [UInt8] = []
  private var fieldCount = 0

  /// `capacity`: the expected length of the line, so it grows only once.
  init(capacity: Int = 160) {
    bytes.reserveCapacity(capacity)
    bytes.append(UInt8(ascii: "{"))
  }

  mutating func field(_ key: StaticString, _ value: String) {
    startField(key)
    JSONString.append(value, to: &bytes)
  }

  /// A time, written straight from its milliseconds as RFC 3339.
  mutating func field(_ key: StaticString, _ value: Timestamp) {
    startField(key)
    bytes.append(UInt8(ascii: "\""))
    value.appendRFC3339(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  mutating func field(_ key: StaticString, _ value: MessageID) {
    startField(key)
    bytes.append(UInt8(ascii: "\""))
    value.appendDescription(to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  mutating func field(_ key: StaticString, _ value: Int64) {
    startField(key)
    bytes.append(contentsOf: String(value).utf8)
  }

  /// Writes a line at the end of `buffer`, which is moved in (not
  /// copied) and handed back by ``finish(into:)``: the journal encodes an
  /// event's records straight into the bytes of its one `pwrite(2)`.
  init(appendingTo buffer: inout [UInt8]) {
    swap(&bytes, &buffer)
    bytes.append(UInt8(ascii: "{"))
  }

  /// Closes the object and ends the line.
  mutating func finish() -> [UInt8] {
    bytes.append(UInt8(ascii: "}"))
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// Closes the object, ends the line and hands the bytes back to the
  /// buffer given to ``init(appendingTo:)``.
  mutating func finish(into buffer: inout [UInt8]) {
    bytes.append(UInt8(ascii: "}"))
    bytes.append(UInt8(ascii: "\n"))
    swap(&bytes, &buffer)
  }

  private mutating func startField(_ key: StaticString) {
    if fieldCount > 0 { bytes.append(UInt8(ascii: ",")) }
    fieldCount += 1
    bytes.append(UInt8(ascii: "\""))
    key.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: "\":".utf8)
  }
}

/// A value of a flat JSON object.
enum JSONScalar {
  case string(JSONText)
  case integer(Int64)
  case other
}

/// A string value, as cheaply as it can be had: most values are read as
/// bytes (an id, a time, a record type) and never need a `String`.
enum JSONText {
  /// The bytes between the quotes of a string without escapes, in a line
  /// checked as valid UTF-8 as a whole, and only valid while it is read.
  case bytes(UnsafeBufferPointer<UInt8>)
  /// A string with escapes, or from a line with invalid UTF-8 somewhere.
  case decoded(String)

  var string: String {
    switch self {
    case .bytes(let bytes): String(decoding: bytes, as: UTF8.self)
    case .decoded(let text): text
    }
  }

  func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    switch self {
    case .bytes(let bytes):
      return body(bytes)
    case .decoded(let text):
      var text = text
      return text.withUTF8(body)
    }
  }
}

/// Why a journal line could not be read.
struct JSONLineError: Error, Equatable {
  var reason: String
}

/// Reads one flat JSON object, calling `field` for each key (as its UTF-8
/// bytes: making a String of every key measured as a tenth of replay time)
/// and value. Nested objects and arrays are refused: the journal never
/// writes them.
func readJSONObject(
  _ line: UnsafeBufferPointer<UInt8>,
  field: (UnsafeBufferPointer<UInt8>, JSONScalar) throws(JSONLineError) -> Void
) throws(JSONLineError) {
  var reader = JSONReader(bytes: line, isValidUTF8: isValidUTF8(line))
  reader.skipSpace()
  try reader.expect(UInt8(ascii: "{"))
  reader.skipSpace()
  if reader.peek() == UInt8(ascii: "}") {
    reader.position += 1
  } else {
    while true {
      reader.skipSpace()
      let key = try reader.key()
      reader.skipSpace()
      try reader.expect(UInt8(ascii: ":"))
      reader.skipSpace()
      let value = try reader.scalar()
      switch key {
      case .raw(let bytes):
        try field(bytes, value)
      case .decoded(let text):
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBufferPointer { buffer throws(JSONLineError) in
          try field(buffer, value)
        }
      }
      reader.skipSpace()
      if reader.peek() == UInt8(ascii: ",") {
        reader.position += 1
        continue
      }
      try reader.expect(UInt8(ascii: "}"))
      break
    }
  }
  reader.skipSpace()
  guard reader.position == line.count else { throw JSONLineError(reason: "text after the object") }
}

/// Whether a whole line is valid UTF-8: then a string without escapes cut
/// out of it at its quotes is valid too, and needs no check of its own
/// (checking each string measured as a twentieth of start-up's parsing).
private func isValidUTF8(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
  if isASCII(line) { return true }
  // Decoding repairs invalid UTF-8: valid exactly when nothing changed.
  var text = String(decoding: line, as: UTF8.self)
  return text.withUTF8 { decoded in
    decoded.count == line.count && memcmp(decoded.baseAddress!, line.baseAddress!, line.count) == 0
  }
}

/// Whether any of eight bytes is a quote, a backslash or a control byte
/// (below 20): the bytes a string's fast scan must stop at.
@inline(__always)
private func mayEndString(_ word: UInt64) -> Bool {
  ByteWord.has(0x22, in: word) | ByteWord.has(0x5C, in: word)
    | ByteWord.hasByte(below: 0x20, in: word) != 0
}

private struct JSONReader {
  let bytes: UnsafeBufferPointer<UInt8>
  /// The line is valid UTF-8: strings need no check of their own.
  let isValidUTF8: Bool
  var position = 0

  func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

  mutating func skipSpace() {
    while let byte = peek(),
      byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    {
      position += 1
    }
  }

  mutating func expect(_ byte: UInt8) throws(JSONLineError) {
    guard peek() == byte else {
      throw JSONLineError(
        reason: "expected '\(Character(Unicode.Scalar(byte)))' at byte \(position)")
    }
    position += 1
  }

  enum Key {
    case raw(UnsafeBufferPointer<UInt8>)
    case decoded(String)
  }

  /// A key as the bytes between its quotes, unless it has escapes.
  mutating func key() throws(JSONLineError) -> Key {
    let start = position + 1
    var end = start
    while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\") {
      end += 1
    }
    if peek() == UInt8(ascii: "\""), end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
      position = end + 1
      return .raw(UnsafeBufferPointer(rebasing: bytes[start..<end]))
    }
    return .decoded(try string())
  }

  mutating func scalar() throws(JSONLineError) -> JSONScalar {
    switch peek() ?? 0 {
    case UInt8(ascii: "\""):
      return .string(try text())
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try number()
    case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
      while let byte = peek(), byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") {
        position += 1
      }
      return .other
    default:
      throw JSONLineError(reason: "unexpected value at byte \(position)")
    }
  }

  mutating func number() throws(JSONLineError) -> JSONScalar {
    var negative = false
    if peek() == UInt8(ascii: "-") {
      negative = true
      position += 1
    }
    var value: Int64 = 0
    var digits = 0
    while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
      let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflowB) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
      guard !overflowA && !overflowB else { throw JSONLineError(reason: "number out of range") }
      value = sum
      digits += 1
      position += 1
    }
    guard digits > 0 else { throw JSONLineError(reason: "bad number at byte \(position)") }
    if let byte = peek(), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") {
      throw JSONLineError(reason: "only whole numbers are expected")
    }
    return .integer(negative ? -value : value)
  }

  /// A string value: its bytes when it has no escapes and the line is
  /// valid UTF-8, else decoded as ``string()`` does.
  mutating func text() throws(JSONLineError) -> JSONText {
    guard isValidUTF8 else { return .decoded(try string()) }
    let start = position
    position += 1
    skipPlainBytes()
    guard peek() == UInt8(ascii: "\"") else {
      position = start
      return .decoded(try string())
    }
    position += 1
    return .bytes(UnsafeBufferPointer(rebasing: bytes[start + 1..<position - 1]))
  }

  /// Moves past bytes that neither end a string nor start an escape, eight
  /// at a time while it can.
  private mutating func skipPlainBytes() {
    if let base = bytes.baseAddress {
      let raw = UnsafeRawPointer(base)
      while position + 8 <= bytes.count,
        !mayEndString(raw.loadUnaligned(fromByteOffset: position, as: UInt64.self))
      {
        position += 8
      }
    }
    while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 {
      position += 1
    }
  }

  mutating func string() throws(JSONLineError) -> String {
    try expect(UInt8(ascii: "\""))
    let start = position
    // Fast path: no escapes, the bytes are the string.
    skipPlainBytes()
    if let byte = peek(), byte < 0x20 {
      throw JSONLineError(reason: "control byte inside a string")
    }
    if peek() == UInt8(ascii: "\"") {
      let text = try validated(UnsafeBufferPointer(rebasing: bytes[start..<position]))
      position += 1
      return text
    }
    var decoded = Array(bytes[start..<position])
    while true {
      guard let byte = peek() else { throw JSONLineError(reason: "unterminated string") }
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        return try decoded.withUnsafeBufferPointer { buffer throws(JSONLineError) in
          try validated(buffer)
        }
      case UInt8(ascii: "\\"):
        try unescape(into: &decoded)
      case 0..<0x20:
        throw JSONLineError(reason: "control byte inside a string")
      default:
        decoded.append(byte)
      }
    }
  }

  /// Decoding repairs invalid UTF-8, so the bytes were valid exactly when
  /// decoding left them unchanged: a memcmp, much cheaper than
  /// `String(validating:as:)` (measured on start-up replay).
  private func validated(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONLineError) -> String {
    var text = String(decoding: buffer, as: UTF8.self)
    let unchanged = text.withUTF8 { decoded in
      decoded.count == buffer.count
        && (buffer.isEmpty || memcmp(decoded.baseAddress!, buffer.baseAddress!, buffer.count) == 0)
    }
    guard unchanged else { throw JSONLineError(reason: "a string is not valid UTF-8") }
    return text
  }

  private mutating func unescape(into decoded: inout [UInt8]) throws(JSONLineError) {
    guard let escape = peek() else { throw JSONLineError(reason: "unterminated escape") }
    position += 1
    switch escape {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
    case UInt8(ascii: "b"): decoded.append(0x08)
    case UInt8(ascii: "f"): decoded.append(0x0C)
    case UInt8(ascii: "n"): decoded.append(0x0A)
    case UInt8(ascii: "r"): decoded.append(0x0D)
    case UInt8(ascii: "t"): decoded.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try hex4()
      if (0xD800..<0xDC00).contains(scalar) {
        guard peek() == UInt8(ascii: "\\") else { throw JSONLineError(reason: "lone surrogate") }
        position += 1
        try expect(UInt8(ascii: "u"))
        let low = try hex4()
        guard (0xDC00..<0xE000).contains(low) else { throw JSONLineError(reason: "bad surrogate") }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      }
      guard let unicode = Unicode.Scalar(scalar) else {
        throw JSONLineError(reason: "bad \\u escape")
      }
      decoded.append(contentsOf: String(Character(unicode)).utf8)
    default:
      throw JSONLineError(reason: "bad escape at byte \(position)")
    }
  }

  private mutating func hex4() throws(JSONLineError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = peek() else { throw JSONLineError(reason: "short \\u escape") }
      position += 1
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw JSONLineError(reason: "bad \\u escape")
      }
      value = value << 4 | digit
    }
    return value
  }
}

extension UnsafeBufferPointer<UInt8> {
  /// The bytes are exactly `text`.
  func equals(_ text: StaticString) -> Bool {
    count == text.utf8CodeUnitCount
      && (count == 0 || memcmp(baseAddress!, text.utf8Start, count) == 0)
  }
}

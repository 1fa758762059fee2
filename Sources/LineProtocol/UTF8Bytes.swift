/// Runs `body` on the UTF-8 bytes of `text` in place when they are stored
/// contiguously (native strings and their substrings), else on a copy. The
/// parsers work on these bytes: walking `String.UTF8View` indices and cutting
/// `Substring`s costs several times more than the checks themselves.
@inline(__always)
func withUTF8Bytes<S: StringProtocol, Result>(
  _ text: S, _ body: (UnsafeBufferPointer<UInt8>) -> Result
) -> Result {
  if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
  return Array(text.utf8).withUnsafeBufferPointer(body)
}

/// Tests on eight bytes at once, read as one word: the scans of the line
/// parser, the journal's reader and its writer skip the bytes that need
/// no attention with them. Each test is the classic "has a zero byte" or
/// "has a byte less than" bit trick: its result is nonzero exactly when
/// some byte of the word passes (never a false alarm for the word as a
/// whole), so the results of several tests are or-ed and compared with 0
/// once.
public enum ByteWord {
  /// Nonzero when some byte of `word` is `byte`.
  @inlinable @inline(__always)
  public static func has(_ byte: UInt8, in word: UInt64) -> UInt64 {
    // Literals, not stored constants: those would be read through another
    // module's accessor in every scan that inlines this.
    let matched = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
    return (matched &- 0x0101_0101_0101_0101) & ~matched & 0x8080_8080_8080_8080
  }

  /// Nonzero when some byte of `word` is below `bound` (at most 80).
  @inlinable @inline(__always)
  public static func hasByte(below bound: UInt8, in word: UInt64) -> UInt64 {
    (word &- 0x0101_0101_0101_0101 &* UInt64(bound)) & ~word & 0x8080_8080_8080_8080
  }
}

/// Whether every byte is below 80, eight at a time: the journal's reader
/// checks whole lines with it, and `SEARCH`'s word index every text.
public func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
  guard let base = bytes.baseAddress else { return true }
  let raw = UnsafeRawPointer(base)
  var index = 0
  var high: UInt64 = 0
  while index + 8 <= bytes.count {
    high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
    index += 8
  }
  while index < bytes.count {
    high |= UInt64(base[index])
    index += 1
  }
  return high & 0x8080_8080_8080_8080 == 0
}

/// A `String` from bytes cut out of valid UTF-8 at ASCII bytes, so that they
/// are valid UTF-8 themselves.
@inline(__always)
func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
  String(decoding: bytes, as: UTF8.self)
}

/// `byte` is an ASCII letter equal to `upper` in either case.
@inline(__always)
func isLetter(_ byte: UInt8, caseInsensitively upper: UInt8) -> Bool {
  byte & 0xDF == upper
}

extension UnsafeBufferPointer<UInt8> {
  /// The bytes from `start` up to `end`.
  @inline(__always)
  func slice(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: self[start..<end])
  }

  /// The bytes equal `word` (upper-case ASCII letters) in any letter case.
  func equals(caseInsensitive word: StaticString) -> Bool {
    guard count == word.utf8CodeUnitCount else { return false }
    let letters = word.utf8Start
    for index in 0..<count where !isLetter(self[index], caseInsensitively: letters[index]) {
      return false
    }
    return true
  }
}

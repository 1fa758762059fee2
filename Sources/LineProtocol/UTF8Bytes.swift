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

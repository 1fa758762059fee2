/// Lower-case hexadecimal, as the journal writes keys and hashes
/// (`dedup_key`, `web_token`; chatbroker(8), JOURNAL FORMAT) and as the
/// web door's tokens are shown: two digits per byte, no prefix.
enum LowerHex {
  /// `bytes`, two digits each.
  static func string(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0xf)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// `value` big-endian, all of its digits (16 for a UInt64).
  static func string<Number: FixedWidthInteger>(_ value: Number) -> String {
    string(
      stride(from: Number.bitWidth - 8, through: 0, by: -8).map {
        UInt8(truncatingIfNeeded: value >> $0)
      })
  }

  /// Whether `text` is `count` lower-case hexadecimal digits.
  static func isDigits(_ text: some StringProtocol, count: Int) -> Bool {
    text.utf8.count == count
      && text.utf8.allSatisfy {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
      }
  }
}

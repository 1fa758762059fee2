extension Timestamp {
  /// Reads back exactly what ``description`` writes,
  /// `YYYY-MM-DDTHH:MM:SS.mmmZ`: the fast path for the journal, where every
  /// time has that one form. `nil` for anything else, year 0 included.
  public init?<S: StringProtocol>(rfc3339 text: S) {
    guard let time = withUTF8Bytes(text, Timestamp.init(rfc3339UTF8:)) else { return nil }
    self = time
  }

  /// The same from UTF-8 bytes, with no array in between: the journal
  /// holds a time or two in every record.
  public init?(rfc3339UTF8 bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
      bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
      bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
      bytes[23] == UInt8(ascii: "Z")
    else { return nil }
    /// The digits at `range` as a number, -1 when a byte is no digit:
    /// inlined, with no optional, since the journal reads a million times
    /// (a closure returning `Int?` per field measured as 3% of start-up).
    @inline(__always) func number(_ range: Range<Int>) -> Int {
      var value = 0
      var isDigits = true
      for index in range {
        let digit = bytes[index] &- UInt8(ascii: "0")
        isDigits = isDigits && digit <= 9
        value = value &* 10 &+ Int(digit)
      }
      return isDigits ? value : -1
    }
    let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
    let (hour, minute, second) = (number(11..<13), number(14..<16), number(17..<19))
    let millisecond = number(20..<23)
    guard year >= 1, (1...12).contains(month),
      (1...CivilDate.daysInMonth(year: year, month: month)).contains(day), (0..<24).contains(hour),
      (0..<60).contains(minute), (0..<60).contains(second), millisecond >= 0
    else { return nil }
    let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
    let seconds = days * 86400 + Int64(hour * 3600 + minute * 60 + second)
    self.init(milliseconds: seconds * 1000 + Int64(millisecond))
  }

  /// A UTC time as the broker writes it, `YYYY-MM-DDTHH:MM:SS.mmmZ`, read
  /// with any number of fraction digits, none included (`...:SSZ`), for
  /// chatsh, which reads times from brokers and scripts alike. Digits past
  /// the millisecond are cut off. Read by ``init(rfc3339:)``, once the
  /// fraction is brought to three digits.
  public init?<S: StringProtocol>(utc text: S) {
    let bytes = Array(text.utf8)
    guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
    var canonical = Array(bytes[0..<19]) + Array(".".utf8)
    if bytes.count > 20 {
      let fraction = bytes[20..<bytes.count - 1]
      guard bytes[19] == UInt8(ascii: "."), !fraction.isEmpty,
        fraction.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      else { return nil }
      canonical += fraction.prefix(3)
    } else {
      guard bytes[19] == UInt8(ascii: "Z") else { return nil }
    }
    while canonical.count < 23 { canonical.append(UInt8(ascii: "0")) }
    canonical.append(UInt8(ascii: "Z"))
    self.init(rfc3339: String(decoding: canonical, as: UTF8.self))
  }
}

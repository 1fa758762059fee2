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
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for index in range {
        let byte = bytes[index]
        guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      let millisecond = number(20..<23), year >= 1, (1...12).contains(month),
      (1...CivilDate.daysInMonth(year: year, month: month)).contains(day), hour < 24,
      minute < 60, second < 60
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

extension Timestamp {
  /// Reads back exactly what ``description`` writes,
  /// `YYYY-MM-DDTHH:MM:SS.mmmZ`: the fast path for the journal, where every
  /// time has that one form. `nil` for anything else, year 0 included.
  public init?<S: StringProtocol>(rfc3339 text: S) {
    let bytes = Array(text.utf8)
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
}

import Foundation

/// Resolves the `<when>` word of `SAYAT` (chatbroker(7), "Scheduled
/// messages") to the instant it names. It has no clock of its own: "now" and
/// the time zone that local clock times are read in are passed in, so tests
/// can pin them. Any word, now and horizon give an answer or an error, never
/// a trap: all arithmetic on the word saturates.
public enum WhenParser {
  /// 366 days, the default schedule horizon.
  public static let defaultHorizonMilliseconds: Int64 = 366 * 86_400_000

  /// The due instant for `word`, which must lie after `now` and at most
  /// `horizonMilliseconds` ahead of it, in years 1 to 9999.
  public static func resolve(
    _ word: String, now: Timestamp, timeZone: TimeZone,
    horizonMilliseconds: Int64 = defaultHorizonMilliseconds, verb: Verb = .sayAt
  ) throws(RequestError) -> Timestamp {
    let reader = Reader(word: word, verb: verb)
    let due: Timestamp
    switch word.utf8.first {
    case UInt8(ascii: "+"):
      due = try reader.relative(now: now)
    case UInt8(ascii: "@"):
      due = try reader.unixSeconds()
    default:
      if word.utf8.contains(UInt8(ascii: "-")) {
        due = try reader.dateTime()
      } else {
        due = try reader.localClockTime(now: now, timeZone: timeZone)
      }
    }
    // `due` may lie outside years 1 to 9999 (arithmetic saturates rather
    // than traps): it is then only compared, never formatted.
    let shown = quotedWhen(word)
    let inRange = due.isInCalendarRange
    if due <= now || due < Timestamp.earliest {
      throw RequestError(
        verb: verb.rawValue, code: .past,
        text: "\(shown) is \(inRange ? "\(due), " : "")not in the future (now is \(now)); "
          + "pick a later time")
    }
    let ahead = due.milliseconds.subtractingReportingOverflow(now.milliseconds)
    if !inRange || ahead.overflow || ahead.partialValue > horizonMilliseconds {
      throw RequestError(
        verb: verb.rawValue, code: .tooFar,
        text: "\(shown) is \(inRange ? "\(due), " : "")more than "
          + "\(horizonMilliseconds / 86_400_000) days ahead; pick an earlier time")
    }
    return due
  }

  /// The `<when>` word as the user sent it, for error texts: quoted when it
  /// is printable, cut short when it is long.
  static func quotedWhen(_ word: String) -> String {
    if containsControlCharacter(word) { return "that time" }
    let characters = word.count
    return characters <= 48
      ? "\"\(word)\"" : "\"\(word.prefix(40))...\" (\(characters) characters)"
  }
}

/// Reads one `<when>` word in each of its forms.
private struct Reader {
  let word: String
  let verb: Verb

  func badTime(_ detail: String) -> RequestError {
    RequestError(
      verb: verb.rawValue, code: .badTime,
      text:
        "\(WhenParser.quotedWhen(word)) \(detail); "
        + "use 18:00, 07:30:15, +90s, +1h30m, @1798131600 or 2026-12-24T18:00:00+01:00")
  }

  /// `+1d2h3m4s`: units d, h, m, s, largest first, each at most once.
  func relative(now: Timestamp) throws(RequestError) -> Timestamp {
    let units: [(UInt8, Int64)] = [
      (UInt8(ascii: "d"), 86_400_000), (UInt8(ascii: "h"), 3_600_000),
      (UInt8(ascii: "m"), 60_000), (UInt8(ascii: "s"), 1000),
    ]
    var nextUnit = 0
    var number: Int64? = nil
    var total: Int64 = 0
    for byte in word.utf8.dropFirst() {
      if let digit = digitValue(byte) {
        // Saturate: a huge amount is too far ahead, not unreadable.
        let current = number ?? 0
        number = current > 1_000_000_000 ? current : current * 10 + digit
        continue
      }
      guard let amount = number,
        let unitIndex = units[nextUnit...].firstIndex(where: { $0.0 == byte })
      else {
        throw badTime("is not + then numbers with units d, h, m, s, largest first")
      }
      // At most about 10^10 days: no overflow, but the sum may.
      total = saturatingSum(total, amount * units[unitIndex].1)
      nextUnit = unitIndex + 1
      number = nil
    }
    guard number == nil, nextUnit > 0 else {
      throw badTime("needs a unit after each number (d, h, m, s)")
    }
    return Timestamp(milliseconds: saturatingSum(now.milliseconds, total))
  }

  /// `@1798131600` or `@1798131600.25`, seconds since the Unix epoch; a
  /// negative number (before 1970) is read too, as `date -d @-1` does.
  func unixSeconds() throws(RequestError) -> Timestamp {
    var seconds: Int64 = 0
    var fraction: Int64 = 0
    var fractionDigits = 0
    var inFraction = false
    var digits = 0
    var bytes = word.utf8.dropFirst()
    let negative = bytes.first == UInt8(ascii: "-")
    if negative { bytes = bytes.dropFirst() }
    for byte in bytes {
      if byte == UInt8(ascii: ".") && !inFraction && digits > 0 {
        inFraction = true
        continue
      }
      guard let digit = digitValue(byte) else { throw badTime("is not @ then Unix seconds") }
      if inFraction {
        if fractionDigits < 3 {
          fraction = fraction * 10 + digit
          fractionDigits += 1
        }
      } else {
        digits += 1
        // Saturate: a huge number of seconds is outside years 1 to 9999,
        // not unreadable. 10^13 seconds is 300,000 years.
        seconds = seconds > 1_000_000_000_000 ? seconds : seconds * 10 + digit
      }
    }
    guard digits > 0 else { throw badTime("is not @ then Unix seconds") }
    while fractionDigits < 3 {
      fraction *= 10
      fractionDigits += 1
    }
    let milliseconds = seconds * 1000 + fraction
    return Timestamp(milliseconds: negative ? -milliseconds : milliseconds)
  }

  /// RFC 3339: `YYYY-MM-DDTHH:MM[:SS[.fff]]` and `Z` or `±HH:MM`. Year 0000
  /// is read (and is in the past); the numbers are all short, so nothing
  /// can overflow.
  func dateTime() throws(RequestError) -> Timestamp {
    var scanner = DigitScanner(bytes: Array(word.utf8))
    let invalid = "is not a date and time with a zone"
    guard let year = scanner.number(digits: 4), scanner.skip("-"),
      let month = scanner.number(digits: 2), scanner.skip("-"),
      let day = scanner.number(digits: 2), scanner.skip("T") || scanner.skip("t"),
      let hour = scanner.number(digits: 2), scanner.skip(":"),
      let minute = scanner.number(digits: 2)
    else { throw badTime(invalid) }
    var second = 0
    var milliseconds = 0
    if scanner.skip(":") {
      guard let value = scanner.number(digits: 2) else { throw badTime(invalid) }
      second = value
      if scanner.skip(".") || scanner.skip(",") {
        guard let fraction = scanner.fractionMilliseconds() else { throw badTime(invalid) }
        milliseconds = fraction
      }
    }
    let offsetMinutes: Int
    if scanner.skip("Z") || scanner.skip("z") {
      offsetMinutes = 0
    } else if let sign = scanner.sign() {
      guard let hours = scanner.number(digits: 2) else { throw badTime(invalid) }
      _ = scanner.skip(":")
      let minutes = scanner.atEnd ? 0 : scanner.number(digits: 2)
      guard let minutes, hours < 24, minutes < 60 else { throw badTime(invalid) }
      offsetMinutes = sign * (hours * 60 + minutes)
    } else if scanner.atEnd {
      throw badTime("needs a zone: add Z or an offset such as +01:00")
    } else {
      throw badTime(invalid)
    }
    guard scanner.atEnd, (1...12).contains(month),
      (1...CivilDate.daysInMonth(year: year, month: month)).contains(day),
      hour < 24, minute < 60, second < 60
    else { throw badTime(invalid) }
    let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
    let secondsOfDay = Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
    return Timestamp(milliseconds: (days * 86400 + secondsOfDay) * 1000 + Int64(milliseconds))
  }

  /// `HH:MM[:SS]`: the next time the clock in `timeZone` shows it, today or
  /// tomorrow, counted in calendar days so a DST change does not shift it. A
  /// reading that a DST change skips is next shown a day later; one that it
  /// shows twice is due at whichever showing comes first after now.
  func localClockTime(now: Timestamp, timeZone: TimeZone) throws(RequestError) -> Timestamp {
    var scanner = DigitScanner(bytes: Array(word.utf8))
    let invalid = "is not a time of day"
    guard let hour = scanner.number(digits: 1...2), scanner.skip(":"),
      let minute = scanner.number(digits: 2)
    else { throw badTime(invalid) }
    var second = 0
    if scanner.skip(":") {
      guard let value = scanner.number(digits: 2) else { throw badTime(invalid) }
      second = value
    }
    guard scanner.atEnd, hour < 24, minute < 60, second < 60 else { throw badTime(invalid) }

    // A clock outside years 1 to 9999 is read as their edge, which keeps
    // the arithmetic small; the caller then finds the answer out of range.
    let base = min(max(now, Timestamp.earliest), Timestamp.latest)
    // Today's date as the local clock shows it now.
    let nowSeconds = Timestamp.floorDivide(base.milliseconds, 1000).0
    let today = Timestamp.floorDivide(nowSeconds + offset(of: timeZone, at: nowSeconds), 86_400).0
    let secondsOfDay = Int64(hour * 3600 + minute * 60 + second)
    // Today, else tomorrow; a third day covers a time the clock skips tomorrow.
    for day in today...today + 2 {
      for instant in instants(whenClockShows: day * 86_400 + secondsOfDay, in: timeZone)
      where instant > base {
        return instant
      }
    }
    throw badTime(invalid)
  }

  /// The instants at which the clock of `timeZone` shows `local` (a clock
  /// reading counted in seconds as if it were UTC), earliest first: none when
  /// a DST change skips that reading, two when a change shows it twice.
  private func instants(whenClockShows local: Int64, in timeZone: TimeZone) -> [Timestamp] {
    // The offsets in force a day before and a day after; zones change their
    // offset at most once in between.
    let earlier = offset(of: timeZone, at: local - 86_400)
    let later = offset(of: timeZone, at: local + 86_400)
    var result: [Timestamp] = []
    // The larger offset reaches the reading at the earlier instant.
    for candidate in earlier == later ? [earlier] : [max(earlier, later), min(earlier, later)] {
      let instant = local - candidate
      if offset(of: timeZone, at: instant) == candidate {
        result.append(Timestamp(milliseconds: instant * 1000))
      }
    }
    return result
  }

  /// Seconds east of UTC that the clock of `timeZone` shows at `seconds`
  /// since the epoch.
  private func offset(of timeZone: TimeZone, at seconds: Int64) -> Int64 {
    Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
  }
}

/// `a + b`, or the nearest end of `Int64` when that overflows.
private func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
  let (sum, overflow) = a.addingReportingOverflow(b)
  return overflow ? (b > 0 ? .max : .min) : sum
}

private func digitValue(_ byte: UInt8) -> Int64? {
  byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte - UInt8(ascii: "0")) : nil
}

/// Reads fixed-width numbers and punctuation from an ASCII word.
private struct DigitScanner {
  let bytes: [UInt8]
  var position = 0

  var atEnd: Bool { position == bytes.count }

  mutating func skip(_ character: Unicode.Scalar) -> Bool {
    guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
    position += 1
    return true
  }

  mutating func number(digits: Int) -> Int? {
    number(digits: digits...digits)
  }

  /// A number of `digits` digits, as many as are there up to the maximum.
  mutating func number(digits: ClosedRange<Int>) -> Int? {
    var value = 0
    var count = 0
    while count < digits.upperBound, position < bytes.count, let digit = digitValue(bytes[position])
    {
      value = value * 10 + Int(digit)
      count += 1
      position += 1
    }
    return digits.contains(count) ? value : nil
  }

  /// One or more fraction digits, read as milliseconds (truncated).
  mutating func fractionMilliseconds() -> Int? {
    var value = 0
    var count = 0
    while position < bytes.count, let digit = digitValue(bytes[position]) {
      if count < 3 { value = value * 10 + Int(digit) }
      count += 1
      position += 1
    }
    guard count > 0 else { return nil }
    for _ in count..<max(count, 3) { value *= 10 }
    return value
  }

  mutating func sign() -> Int? {
    if skip("+") { return 1 }
    if skip("-") { return -1 }
    return nil
  }
}

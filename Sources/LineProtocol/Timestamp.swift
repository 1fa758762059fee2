/// An instant on the wall clock, in whole milliseconds since the Unix epoch.
///
/// The protocol shows every time as RFC 3339 in UTC with milliseconds, so
/// milliseconds are the natural unit; an `Int64` keeps arithmetic exact and
/// formatting cheap (no Foundation on the per-message path).
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
  public var milliseconds: Int64

  public init(milliseconds: Int64) {
    self.milliseconds = milliseconds
  }

  /// `0001-01-01T00:00:00.000Z`, the first instant the protocol can show.
  public static let earliest = Timestamp(milliseconds: -62_135_596_800_000)
  /// `9999-12-31T23:59:59.999Z`, the last instant the protocol can show:
  /// RFC 3339 years have four digits.
  public static let latest = Timestamp(milliseconds: 253_402_300_799_999)

  /// Whether the instant lies in years 1 to 9999, the ones RFC 3339 can
  /// write. Every time the broker shows or stores is; anything else is a
  /// request's mistake (chatbroker(7) `PAST`, `TOOFAR`) or journal damage.
  public var isInCalendarRange: Bool {
    self >= Self.earliest && self <= Self.latest
  }

  public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
    lhs.milliseconds < rhs.milliseconds
  }

  public static func + (lhs: Timestamp, rhs: Int64) -> Timestamp {
    Timestamp(milliseconds: lhs.milliseconds + rhs)
  }

  /// `2026-11-30T18:00:00.000Z`
  public var description: String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    appendRFC3339(to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes) without allocating.
  /// Outside ``isInCalendarRange`` the year gets as many digits as it needs
  /// and a `-` when negative: never shown to users, but never a trap.
  public func appendRFC3339(to bytes: inout [UInt8]) {
    let (days, msOfDay) = Self.floorDivide(milliseconds, 86_400_000)
    let civil = CivilDate(daysSinceEpoch: days)
    let seconds = msOfDay / 1000
    guard civil.year >= 0 && civil.year <= 9999 else {
      appendOutOfRange(civil, msOfDay: msOfDay, to: &bytes)
      return
    }
    // Every time a line carries renders here, three times per SAY (its
    // OK, its MSG, its journal record): the 24 bytes are written in place
    // with constant divisors and appended at once, not digit by digit
    // through `append` and a divisor loop (`perf record`, durable SAY
    // from 100 clients: 4% of the serving thread before).
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { out in
      // A plain loop, not `stride`: unspecialized in a debug build, the
      // generic iterator made this a quarter of the serving thread under
      // chatfuzz (`perf record`), and the tests and fuzzers run debug.
      func put(_ value: Int, _ digits: Int, at end: Int) {
        var rest = value
        var position = end
        while position > end - digits {
          position -= 1
          out[position] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
          rest /= 10
        }
      }
      put(Int(civil.year), 4, at: 4)
      out[4] = UInt8(ascii: "-")
      put(Int(civil.month), 2, at: 7)
      out[7] = UInt8(ascii: "-")
      put(Int(civil.day), 2, at: 10)
      out[10] = UInt8(ascii: "T")
      put(Int(seconds / 3600), 2, at: 13)
      out[13] = UInt8(ascii: ":")
      put(Int(seconds / 60 % 60), 2, at: 16)
      out[16] = UInt8(ascii: ":")
      put(Int(seconds % 60), 2, at: 19)
      out[19] = UInt8(ascii: ".")
      put(Int(msOfDay % 1000), 3, at: 23)
      out[23] = UInt8(ascii: "Z")
      bytes.append(contentsOf: UnsafeBufferPointer(out))
    }
  }

  /// A year before 0 or after 9999: as many digits as it needs, and a `-`
  /// when negative.
  private func appendOutOfRange(_ civil: CivilDate, msOfDay: Int64, to bytes: inout [UInt8]) {
    let seconds = msOfDay / 1000
    appendDigits(Int64(civil.year), width: 4, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendDigits(Int64(civil.month), width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendDigits(Int64(civil.day), width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "T"))
    appendDigits(seconds / 3600, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(seconds / 60 % 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(seconds % 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "."))
    appendDigits(msOfDay % 1000, width: 3, to: &bytes)
    bytes.append(UInt8(ascii: "Z"))
  }

  static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let quotient = value / divisor
    let remainder = value % divisor
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
  }
}

/// Appends `value` in decimal with at least `width` digits; a negative
/// value (only a year outside 1 to 9999 can be one) gets a `-` first.
private func appendDigits(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
  if value < 0 { bytes.append(UInt8(ascii: "-")) }
  let magnitude = value.magnitude
  var divisor: UInt64 = 1
  for _ in 1..<width { divisor *= 10 }
  // More digits than `width` only for a year past 9999.
  while magnitude / divisor >= 10 { divisor *= 10 }
  var rest = magnitude
  while divisor > 0 {
    bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
    rest %= divisor
    divisor /= 10
  }
}

/// A proleptic Gregorian calendar date, converted to and from days since
/// 1970-01-01 with Howard Hinnant's branch-light algorithms. Public for
/// chatsh's local calendar, which counts days the same way.
public struct CivilDate: Equatable, Sendable {
  public var year: Int
  public var month: Int
  public var day: Int

  public init(year: Int, month: Int, day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  public init(daysSinceEpoch: Int64) {
    let z = daysSinceEpoch + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
    month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
    year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
  }

  public var daysSinceEpoch: Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  static func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2:
      let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
      return leap ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }
}

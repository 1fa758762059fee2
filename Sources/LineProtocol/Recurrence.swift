import Foundation

/// The rule of a series (`SAYEVERY`, chatbroker(7) "Series"): which local
/// days and time of day, or which interval, in which time zone, and when the
/// series ends. Pure: it has no clock; the broker passes the instants in.
///
/// Zone arithmetic uses only `TimeZone.secondsFromGMT(for:)`, the same way
/// ``WhenParser`` reads local clock times, and runs once per occurrence, off
/// the per-message path.
public struct Recurrence: Equatable, Sendable, CustomStringConvertible {
  public enum Pattern: Equatable, Sendable {
    /// On the local days in `weekdays` (bit 0 Monday to bit 6 Sunday).
    case weekly(weekdays: UInt8)
    /// On this day of each month (1 to 31); a shorter month uses its last day.
    case monthly(day: Int)
    /// Every so many milliseconds, on elapsed time, counted from the first.
    case interval(milliseconds: Int64)
    /// An RFC 5545 recurrence rule, in local wall time.
    case calendar(CalendarRule)
  }

  public enum End: Equatable, Sendable {
    /// The last local date (inclusive) on which an occurrence may fall.
    case until(year: Int, month: Int, day: Int)
    /// How many occurrences in all.
    case count(Int)
  }

  public var pattern: Pattern
  /// Seconds after local midnight; unused for ``Pattern/interval(milliseconds:)``.
  public var secondsOfDay: Int
  public var timeZone: TimeZone
  /// The zone's name as the rule gave it (Foundation spells `UTC` as `GMT`).
  public var zoneName: String
  public var end: End?

  public static let allWeekdays: UInt8 = 0b111_1111
  static let workdays: UInt8 = 0b001_1111
  static let weekend: UInt8 = 0b110_0000
  static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

  public init(
    pattern: Pattern, secondsOfDay: Int = 0, timeZone: TimeZone, zoneName: String? = nil,
    end: End? = nil
  ) {
    self.pattern = pattern
    self.secondsOfDay = secondsOfDay
    self.timeZone = timeZone
    self.zoneName = zoneName ?? timeZone.identifier
    self.end = end
  }

  /// The occurrence count of an ``End/count(_:)`` end, if it has one.
  public var count: Int? {
    if case .count(let count) = end { return count }
    return nil
  }

  /// The canonical form, with the zone: `weekdays@09:00/Europe/Berlin`; an
  /// elapsed-time rule has a zone only when its `until:` date needs one.
  /// It is what `SCHED` lines and the journal show, and parses back to the
  /// same rule.
  public var description: String {
    var text: String
    var showsZone = true
    switch pattern {
    case .weekly(let weekdays):
      switch weekdays {
      case Self.allWeekdays: text = "daily"
      case Self.workdays: text = "weekdays"
      case Self.weekend: text = "weekends"
      default:
        text = (0..<7).filter { weekdays & (1 << $0) != 0 }.map { Self.dayNames[$0] }
          .joined(separator: ",")
      }
      text += "@" + Self.clock(secondsOfDay)
    case .monthly(let day):
      text = "monthly:\(day)@" + Self.clock(secondsOfDay)
    case .interval(let milliseconds):
      text = "every:" + Self.duration(milliseconds)
      if case .until = end {} else { showsZone = false }
    case .calendar(let rule):
      text = rule.description
    }
    if showsZone { text += "/" + zoneName }
    switch end {
    case .until(let year, let month, let day):
      text += ",until:" + pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    case .count(let count): text += ",count:\(count)"
    case nil: break
    }
    return text
  }

  private static func clock(_ seconds: Int) -> String {
    let time = pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2)
    return seconds % 60 == 0 ? time : time + ":" + pad(seconds % 60, 2)
  }

  private static func duration(_ milliseconds: Int64) -> String {
    var rest = milliseconds / 1000
    var text = ""
    for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60), ("s", 1)]
    where rest >= size {
      text += "\(rest / size)\(unit)"
      rest %= size
    }
    return text
  }

  // MARK: - Occurrences

  /// The first occurrence strictly after `instant`, or nil when the series'
  /// `until` date is past by then. `reference` is an earlier occurrence
  /// (the current due instant), from which intervals are counted.
  ///
  /// A local time that a DST change skips falls on the first instant after
  /// the gap (02:30 on the night the clocks go from 02:00 to 03:00 comes at
  /// 03:00); a local time shown twice counts once, at its first showing.
  public func next(after instant: Timestamp, reference: Timestamp) -> Timestamp? {
    let candidate: Timestamp
    switch pattern {
    case .interval(let step):
      if reference > instant {
        candidate = reference
      } else {
        let steps = (instant.milliseconds - reference.milliseconds) / step + 1
        candidate = reference + steps * step
      }
    case .weekly(let weekdays):
      let today = localDay(of: instant)
      guard
        let found = (today - 1...today + 8).lazy.filter({
          weekdays & (1 << Self.weekday(ofDay: $0)) != 0
        }).map({ self.instant(onDay: $0) }).first(where: { $0 > instant })
      else { return nil }
      candidate = found
    case .monthly(let day):
      let today = CivilDate(daysSinceEpoch: localDay(of: instant))
      var found: Timestamp?
      for offset in -1...13 {
        let months = today.year * 12 + today.month - 1 + offset
        let (year, month) = (months / 12, months % 12 + 1)
        let date = CivilDate(
          year: year, month: month,
          day: min(day, CivilDate.daysInMonth(year: year, month: month)))
        let time = self.instant(onDay: date.daysSinceEpoch)
        if time > instant {
          found = time
          break
        }
      }
      guard let found else { return nil }
      candidate = found
    case .calendar(let rule):
      guard
        let found = rule.next(
          after: instant, zone: { self.instant(local: $0) }, local: { self.localSeconds(of: $0) })
      else { return nil }
      candidate = found
    }
    if case .until(let year, let month, let day) = end,
      localDay(of: candidate) > CivilDate(year: year, month: month, day: day).daysSinceEpoch
    {
      return nil
    }
    // The protocol and the journal write years 1 to 9999 only: a series
    // ends with the last occurrence before year 10000.
    guard candidate <= Timestamp.latest else { return nil }
    return candidate
  }

  /// The first occurrence of a new series created at `now`: for a calendar
  /// rule the next matching local time, for an interval `now` plus one step.
  public func first(after now: Timestamp) -> Timestamp? {
    if case .interval(let step) = pattern {
      return next(after: now, reference: now + step)
    }
    return next(after: now, reference: now)
  }

  /// Monday 0 to Sunday 6; 1970-01-01 was a Thursday.
  static func weekday(ofDay day: Int64) -> Int {
    Int(Timestamp.floorDivide(day + 3, 7).1)
  }

  /// The local calendar day (days since 1970-01-01) that the clock of the
  /// zone shows at `instant`.
  func localDay(of instant: Timestamp) -> Int64 {
    Timestamp.floorDivide(localSeconds(of: instant), 86_400).0
  }

  /// The clock reading of the zone at `instant`, in seconds counted as if
  /// it were UTC.
  func localSeconds(of instant: Timestamp) -> Int64 {
    let seconds = Timestamp.floorDivide(instant.milliseconds, 1000).0
    return seconds + offset(at: seconds)
  }

  /// When the local clock shows `secondsOfDay` on `day`.
  func instant(onDay day: Int64) -> Timestamp {
    instant(local: day * 86_400 + Int64(secondsOfDay))
  }

  /// When the local clock shows `local` (seconds counted as if it were
  /// UTC): the first showing if it shows it twice, the end of the gap if it
  /// skips it.
  func instant(local: Int64) -> Timestamp {
    let before = offset(at: local - 86_400)
    let after = offset(at: local + 86_400)
    let candidates = before == after ? [before] : [max(before, after), min(before, after)]
    for candidate in candidates where offset(at: local - candidate) == candidate {
      return Timestamp(milliseconds: (local - candidate) * 1000)
    }
    // Skipped: the offset changes between these two instants; find the
    // first second on the new offset.
    var low = local - max(before, after)
    var high = local - min(before, after)
    let lowOffset = offset(at: low)
    while high - low > 1 {
      let middle = low + (high - low) / 2
      if offset(at: middle) == lowOffset { low = middle } else { high = middle }
    }
    return Timestamp(milliseconds: high * 1000)
  }

  private func offset(at seconds: Int64) -> Int64 {
    Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
  }
}

private func pad(_ value: Int, _ width: Int) -> String {
  let digits = String(value)
  return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

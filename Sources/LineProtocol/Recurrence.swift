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
    /// On the `ordinal`th (1 to 5, or -1 for the last) `weekday` (Monday 0)
    /// of each month; a month without a 5th has none.
    case monthlyWeekday(ordinal: Int, weekday: Int)
    /// On this date each year; 29 February is 28 February in other years.
    case yearly(month: Int, day: Int)
    /// On the local days in `weekdays` of every `weeks`th week (Monday to
    /// Sunday), counted from the week of ``Recurrence/start``.
    case weeks(every: Int, weekdays: UInt8)
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
  /// Seconds after local midnight, ascending, at least a minute apart; unused
  /// for ``Pattern/interval(milliseconds:)`` and ``Pattern/calendar(_:)``.
  public var timesOfDay: [Int]
  /// The first local date that may have an occurrence (`from:`).
  public var start: CivilDate?
  public var timeZone: TimeZone
  /// The zone's name as the rule gave it (Foundation spells `UTC` as `GMT`).
  public var zoneName: String
  public var end: End?

  public static let allWeekdays: UInt8 = 0b111_1111
  static let workdays: UInt8 = 0b001_1111
  static let weekend: UInt8 = 0b110_0000
  static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

  public init(
    pattern: Pattern, secondsOfDay: Int = 0, timesOfDay: [Int]? = nil, timeZone: TimeZone,
    zoneName: String? = nil, start: CivilDate? = nil, end: End? = nil
  ) {
    self.pattern = pattern
    self.timesOfDay = timesOfDay ?? [secondsOfDay]
    self.start = start
    self.timeZone = timeZone
    self.zoneName = zoneName ?? timeZone.identifier
    self.end = end
  }

  /// The first time of day.
  public var secondsOfDay: Int { timesOfDay.first ?? 0 }

  /// The occurrence count of an ``End/count(_:)`` end, if it has one.
  public var count: Int? {
    if case .count(let count) = end { return count }
    return nil
  }

  /// The canonical form, with the zone: `weekdays@09:00/Europe/Berlin`; an
  /// elapsed-time rule has a zone only when a `from:` or `until:` date needs
  /// one.
  /// It is what `SCHED` lines and the journal show, and parses back to the
  /// same rule.
  public var description: String {
    var text: String
    var showsZone = true
    let clocks = timesOfDay.map(Self.clock).joined(separator: ",")
    switch pattern {
    case .weekly(let weekdays):
      switch weekdays {
      case Self.allWeekdays: text = "daily"
      case Self.workdays: text = "weekdays"
      case Self.weekend: text = "weekends"
      default: text = Self.days(weekdays)
      }
      text += "@" + clocks
    case .monthly(let day):
      text = "monthly:\(day)@" + clocks
    case .monthlyWeekday(let ordinal, let weekday):
      let ordinals = ["1st", "2nd", "3rd", "4th", "5th"]
      text =
        "monthly:" + (ordinal < 0 ? "last" : ordinals[ordinal - 1]) + "-"
        + Self.dayNames[weekday] + "@" + clocks
    case .yearly(let month, let day):
      text = "yearly:" + pad(month, 2) + "-" + pad(day, 2) + "@" + clocks
    case .weeks(let every, let weekdays):
      text = "every:\(every)w:" + Self.days(weekdays) + "@" + clocks
    case .interval(let milliseconds):
      text = "every:" + Self.duration(milliseconds)
      if case .until = end {} else if start == nil { showsZone = false }
    case .calendar(let rule):
      text = rule.description
    }
    if showsZone { text += "/" + zoneName }
    if let start {
      text += ",from:" + pad(start.year, 4) + "-" + pad(start.month, 2) + "-" + pad(start.day, 2)
    }
    switch end {
    case .until(let year, let month, let day):
      text += ",until:" + pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    case .count(let count): text += ",count:\(count)"
    case nil: break
    }
    return text
  }

  private static func days(_ weekdays: UInt8) -> String {
    (0..<7).filter { weekdays & (1 << $0) != 0 }.map { dayNames[$0] }.joined(separator: ",")
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
  ///
  /// `budget` pays for the work (``RecurrenceBudget``): an `rrule:` is
  /// expanded by libical within it, and throws when it runs out first;
  /// the other forms cost a few steps, in Swift, whatever the rule.
  public func next(after instant: Timestamp, reference: Timestamp, budget: RecurrenceBudget)
    throws(RecurrenceBudget.Exceeded) -> Timestamp?
  {
    let candidate: Timestamp
    // Nothing before the local midnight that starts `from:`.
    var after = instant
    if let start {
      let first = self.instant(local: start.daysSinceEpoch * 86_400)
      if first.milliseconds - 1 > after.milliseconds {
        after = Timestamp(milliseconds: first.milliseconds - 1)
      }
    }
    if case .calendar = pattern {} else { try budget.charge(shortFormSteps) }
    switch pattern {
    case .interval(let step):
      if reference > instant {
        candidate = reference
      } else {
        let steps = (instant.milliseconds - reference.milliseconds) / step + 1
        candidate = reference + steps * step
      }
    case .weekly(let weekdays):
      let today = localDay(of: after)
      guard
        let found = firstTime(
          after: after,
          onDays: (today - 1...today + 8).lazy.filter {
            weekdays & (1 << Self.weekday(ofDay: $0)) != 0
          })
      else { return nil }
      candidate = found
    case .weeks(let every, let weekdays):
      let today = localDay(of: after)
      // Weeks start on Monday; the week of `start` is week 0.
      let anchor = (start ?? CivilDate(daysSinceEpoch: today)).daysSinceEpoch
      let monday = anchor - Int64(Self.weekday(ofDay: anchor))
      guard
        let found = firstTime(
          after: after,
          onDays: (today - 1...today + 7 * Int64(every) + 8).lazy.filter {
            weekdays & (1 << Self.weekday(ofDay: $0)) != 0
              && Timestamp.floorDivide(Timestamp.floorDivide($0 - monday, 7).0, Int64(every)).1
                == 0
          })
      else { return nil }
      candidate = found
    case .monthly, .monthlyWeekday, .yearly:
      let today = CivilDate(daysSinceEpoch: localDay(of: after))
      // Enough months for a 5th weekday or a yearly 29 February to come.
      let months = pattern.isYearly ? 12 * 9 : 15
      let days = (-1...months).lazy.compactMap { offset -> Int64? in
        let index = today.year * 12 + today.month - 1 + offset
        return self.day(inYear: index / 12, month: index % 12 + 1)
      }
      guard let found = firstTime(after: after, onDays: days) else { return nil }
      candidate = found
    case .calendar(let rule):
      guard
        let found = try rule.next(
          after: after, zone: { self.instant(local: $0) }, local: { self.localSeconds(of: $0) },
          budget: budget)
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
  /// rule the next matching local time, for an interval `now` plus one step,
  /// or the start of its `from:` date if that is later.
  public func first(after now: Timestamp, budget: RecurrenceBudget)
    throws(RecurrenceBudget.Exceeded) -> Timestamp?
  {
    if case .interval(let step) = pattern {
      if let start {
        let first = instant(local: start.daysSinceEpoch * 86_400)
        if first > now + step { return try next(after: now, reference: first, budget: budget) }
      }
      return try next(after: now, reference: now + step, budget: budget)
    }
    return try next(after: now, reference: now, budget: budget)
  }

  /// Whether the rule is too sparse for its FREQ to be expanded within a
  /// budget (``RecurrenceBudget``), or never matches, as far as can be
  /// told without calling libical (``DayFilters``): for a rule the
  /// journal kept, which a start-up reports but does not expand.
  public var isTooSparse: Bool {
    guard case .calendar(let rule) = pattern else { return false }
    return (try? rule.checkDays()) != true
  }

  /// What finding one occurrence of a form other than `rrule:` costs, in
  /// steps of libical's (``RecurrenceBudget``): measured, `SCHEDULED <id>
  /// NEXT 100` of `daily@` with 12 times of day took 1.1 ms, 11 µs each.
  var shortFormSteps: Int { 3 }

  /// The first of `timesOfDay` on the first of `days` (ascending local
  /// days) that falls after `instant`.
  private func firstTime(after instant: Timestamp, onDays days: some Sequence<Int64>)
    -> Timestamp?
  {
    for day in days {
      for time in timesOfDay {
        let candidate = self.instant(local: day * 86_400 + Int64(time))
        if candidate > instant { return candidate }
      }
    }
    return nil
  }

  /// The day (since 1970-01-01) of a monthly or yearly pattern in that month,
  /// or nil when the month has none.
  private func day(inYear year: Int, month: Int) -> Int64? {
    let length = CivilDate.daysInMonth(year: year, month: month)
    switch pattern {
    case .monthly(let day):
      return CivilDate(year: year, month: month, day: min(day, length)).daysSinceEpoch
    case .yearly(let wanted, let day):
      guard month == wanted else { return nil }
      return CivilDate(year: year, month: month, day: min(day, length)).daysSinceEpoch
    case .monthlyWeekday(let ordinal, let weekday):
      if ordinal < 0 {
        let last = CivilDate(year: year, month: month, day: length).daysSinceEpoch
        return last - Int64((Self.weekday(ofDay: last) - weekday + 7) % 7)
      }
      let first = CivilDate(year: year, month: month, day: 1).daysSinceEpoch
      let day = first + Int64((weekday - Self.weekday(ofDay: first) + 7) % 7 + 7 * (ordinal - 1))
      return day - first < length ? day : nil
    default:
      return nil
    }
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

extension Recurrence.Pattern {
  var isYearly: Bool {
    if case .yearly = self { return true }
    return false
  }
}

private func pad(_ value: Int, _ width: Int) -> String {
  let digits = String(value)
  return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

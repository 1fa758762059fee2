/// The days a rule's coarser parts let through when they filter rather
/// than add (``RuleShape/filters``): `BYMONTH`, `BYMONTHDAY`, `BYDAY` and
/// `BYYEARDAY` of a `MINUTELY` to `DAILY` rule, `BYMONTH` of a `WEEKLY`
/// one, as libical 3.0 checks them (`check_contracting_rules`: the plain
/// value, so a negative month day, a negative year day or an ordinal
/// weekday never matches). Worked out without libical, in microseconds,
/// over the 400 years after which the Gregorian calendar repeats: the
/// longest run of days none of which passes is what libical steps through
/// at least, somewhere, between two occurrences. That proves a rule too
/// sparse for the budget before it is expanded, whatever the date, and
/// finds one that never matches (`BYYEARDAY=1;BYMONTH=2`) at once.
struct DayFilters {
  private let months: Set<Int>?
  private let monthDays: Set<Int>?
  /// Monday 0 to Sunday 6.
  private let weekdays: Set<Int>?
  private let yearDays: Set<Int>?

  /// nil when the rule filters no days.
  init?(_ shape: RuleShape) {
    func numbers(_ name: String, _ filters: Bool) -> Set<Int>? {
      guard filters, shape.has(name) else { return nil }
      return Set(shape.values(name).compactMap { Int($0) })
    }
    let frequency = shape.frequency
    let dayLevel = frequency <= .daily
    months = numbers("BYMONTH", frequency <= .weekly)
    monthDays = numbers("BYMONTHDAY", dayLevel)
    yearDays = numbers("BYYEARDAY", frequency <= .hourly)
    if dayLevel, shape.has("BYDAY") {
      weekdays = Set(shape.values("BYDAY").compactMap { RuleShape.weekdayNames.firstIndex(of: $0) })
    } else {
      weekdays = nil
    }
    if months == nil && monthDays == nil && yearDays == nil && weekdays == nil { return nil }
  }

  /// The longest run of days that none passes, in any 400 years; nil when
  /// no day ever passes.
  func longestGap() -> Int? {
    // Per kind of month (which month, leap year, weekday of the 1st): its
    // days without a pass before the first, between two, after the last.
    var runs = [(first: Int, inner: Int, last: Int)?](repeating: nil, count: 12 * 2 * 7)
    var gap = 0
    var longest = 0
    var passed = false
    var weekday = Recurrence.weekday(ofDay: CivilDate(year: 2000, month: 1, day: 1).daysSinceEpoch)
    // Two rounds, so that a run across the end of one is counted whole.
    for index in 0..<(2 * 4800) {
      let year = 2000 + index / 12 % 400
      let month = index % 12 + 1
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      let length = CivilDate.daysInMonth(year: year, month: month)
      let key = ((month - 1) * 2 + (leap ? 1 : 0)) * 7 + weekday
      let run: (first: Int, inner: Int, last: Int)
      if let known = runs[key] {
        run = known
      } else {
        run = Self.runs(mask(month: month, leap: leap, firstWeekday: weekday), length: length)
        runs[key] = run
      }
      if run.first == length {
        gap += length
      } else {
        passed = true
        longest = max(longest, gap + run.first, run.inner)
        gap = run.last
      }
      longest = max(longest, gap)
      weekday = (weekday + length) % 7
    }
    return passed ? longest : nil
  }

  /// A month's days without a pass before its first, between two, after
  /// its last (all of them, three times, when none passes).
  private static func runs(_ mask: UInt32, length: Int) -> (first: Int, inner: Int, last: Int) {
    guard mask != 0 else { return (length, length, length) }
    var inner = 0
    var current = 0
    var seen = false
    for day in 0..<length {
      if mask & (1 << day) != 0 {
        if seen { inner = max(inner, current) }
        seen = true
        current = 0
      } else {
        current += 1
      }
    }
    return (mask.trailingZeroBitCount, inner, current)
  }

  /// Bit d - 1 for each day d of such a month that passes.
  private func mask(month: Int, leap: Bool, firstWeekday: Int) -> UInt32 {
    if let months, !months.contains(month) { return 0 }
    let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    let before = lengths.prefix(month - 1).reduce(0, +)
    var mask: UInt32 = 0
    for day in 1...lengths[month - 1] {
      if let monthDays, !monthDays.contains(day) { continue }
      if let weekdays, !weekdays.contains((firstWeekday + day - 1) % 7) { continue }
      if let yearDays, !yearDays.contains(before + day) { continue }
      mask |= 1 << (day - 1)
    }
    return mask
  }
}

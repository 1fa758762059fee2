import CICal

/// Which months of a `MONTHLY` rule, or years of a `YEARLY` one, libical
/// finds no day in, and so how many it may lay out, one after another,
/// before it finds one: libical does that inside a single call, past any
/// `UNTIL` (`next_yearday` and `__iterator_set_start` in icalrecur.c, up
/// to the year 20000 when no period has a day), so the broker must know it
/// before it calls. `BYMONTHDAY=31;BYSETPOS=2` has no day in any month, and
/// libical lays out 216,000 of them (2.4 s) to find that out.
///
/// Whether a month has a day depends on the rule and on the month's
/// length and weekday of its first: 28 kinds of month; for a year, on
/// whether it is a leap year and the weekday of 1 January: 14 kinds. libical
/// itself says, for one month or year of each kind, with the rule's
/// `INTERVAL` made 32767 so that it never lays out a second one.
struct CalendarPeriods: Sendable {
  let isYearly: Bool
  /// For each kind, whether libical finds a day in such a period.
  let hasDays: [Bool]
  /// The most steps libical spends on periods without a day in a row,
  /// those it skips for `BYMONTH` included; nil when no period the rule
  /// visits has a day.
  let longestEmptyRun: Int?

  /// The kind of the month `month` (1-12) of `year`, or of the year.
  static func kind(year: Int, month: Int?) -> Int {
    if let month {
      let length = CivilDate.daysInMonth(year: year, month: month)
      let first = CivilDate(year: year, month: month, day: 1).daysSinceEpoch
      return (length - 28) * 7 + Recurrence.weekday(ofDay: first)
    }
    let leap = CivilDate.daysInMonth(year: year, month: 2) == 29
    return (leap ? 7 : 0)
      + Recurrence.weekday(ofDay: CivilDate(year: year, month: 1, day: 1).daysSinceEpoch)
  }

  /// A month of each kind, in years libical expands (before 2582).
  private static let sampleMonths: [(year: Int, month: Int)] = {
    var found = [(year: Int, month: Int)?](repeating: nil, count: 28)
    for year in 2001...2400 {
      for month in 1...12 where found[kind(year: year, month: month)] == nil {
        found[kind(year: year, month: month)] = (year, month)
      }
    }
    return found.map { $0! }
  }()

  private static let sampleYears: [Int] = {
    var found = [Int?](repeating: nil, count: 14)
    for year in 2001...2400 where found[kind(year: year, month: nil)] == nil {
      found[kind(year: year, month: nil)] = year
    }
    return found.map { $0! }
  }()

  /// Asks libical about a period of each kind; the caller holds libical's
  /// lock. `startDay` and `startMonth` are DTSTART's, which give a rule
  /// without days its day (and a `YEARLY` one laying out month days its
  /// month).
  static func probe(
    _ shape: RuleShape, startMonth: Int, startDay: Int, budget: RecurrenceBudget
  ) throws(RecurrenceBudget.Exceeded) -> [Bool] {
    let yearly = shape.frequency == .yearly
    var removed: Set<String> = ["COUNT", "INTERVAL"]
    var added = ["INTERVAL=32767"]
    // A month is laid out the same whichever months BYMONTH lets through.
    if !yearly { removed.insert("BYMONTH") }
    // DTSTART gives the days when no part does; the sample's DTSTART is
    // the period's first day, so they are named.
    let daysNamed = shape.has("BYDAY") || shape.has("BYYEARDAY") || shape.has("BYWEEKNO")
    if !daysNamed && !shape.has("BYMONTHDAY") { added.append("BYMONTHDAY=\(startDay)") }
    // A YEARLY rule's month days are laid out in its BYMONTH months, and
    // without one in DTSTART's month alone (libical's `expand_year_days`),
    // unless the days come from BYYEARDAY, BYWEEKNO or a BYDAY no
    // BYMONTHDAY limits. So such a sample year starts in DTSTART's month:
    // `BYMONTHDAY=6;BYDAY=1FR` from a February has no day in any year,
    // where a sample from 1 January would find one. (Naming the month in
    // a BYMONTH would not do: BYDAY=1FR would then be February's first.)
    let monthDaysOnly =
      yearly && !shape.has("BYMONTH") && !shape.has("BYYEARDAY") && !shape.has("BYWEEKNO")
      && (shape.has("BYMONTHDAY") || !daysNamed)
    let text = shape.text(without: removed, adding: added)
    let samples =
      yearly
      ? sampleYears.map { ($0, monthDaysOnly ? startMonth : 1) }
      : sampleMonths.map { ($0.year, $0.month) }
    // An empty sample year is the only one laid out (the next is past the
    // year 20000); after an empty sample month libical lays out one every
    // 32767 months up to the year 20000: 7 in all.
    let full = RuleShape.iteratorSteps + (yearly ? RuleShape.yearSteps : RuleShape.monthSteps) + 1
    let empty =
      RuleShape.iteratorSteps + (yearly ? 1 : 7)
      * (yearly ? RuleShape.yearSteps : RuleShape.monthSteps)
    var hasDays: [Bool] = []
    for (year, month) in samples {
      guard budget.remaining >= max(full, empty) else { throw budget.exhaust() }
      let start: [Int32] = [Int32(year), Int32(month), 1, 0, 0, 0]
      var fields: [Int32] = [0, 0, 0, 0, 0, 0]
      var found = false
      if let iterator = chat_rrule_iterator(text, start) {
        // A day past the period can only be a YEARLY week's, in January.
        found = chat_rrule_next(iterator, &fields) != 0 && Int(fields[0]) <= year + 1
        icalrecur_iterator_free(iterator)
      }
      budget.record(found ? full : empty)
      hasDays.append(found)
    }
    return hasDays
  }

  init(_ shape: RuleShape, hasDays: [Bool], startYear: Int, startMonth: Int) {
    isYearly = shape.frequency == .yearly
    self.hasDays = hasDays
    let months = Set(shape.values("BYMONTH").compactMap { Int($0) })
    // The periods libical visits repeat every 400 years, so two rounds of
    // them show every run of empty ones, a run across the end too.
    let cycle = isYearly ? 400 : 4800
    let step = max(1, shape.interval)
    let visits = cycle / Self.gcd(step, cycle)
    var run = 0
    var longest = 0
    var found = false
    for visit in 0..<(2 * visits) {
      let steps: Int
      let full: Bool
      if isYearly {
        let year = startYear + visit * step
        steps = RuleShape.yearSteps
        full = hasDays[Self.kind(year: Self.sample(year), month: nil)]
      } else {
        let index = (startYear * 12 + startMonth - 1) + visit * step
        let (year, month) = (index / 12, index % 12 + 1)
        if !months.isEmpty && !months.contains(month) {
          steps = RuleShape.skippedMonthSteps
          full = false
        } else {
          steps = RuleShape.monthSteps
          full = hasDays[Self.kind(year: Self.sample(year), month: month)]
        }
      }
      if full {
        found = true
        run = 0
      } else {
        run += steps
        longest = max(longest, run)
      }
    }
    longestEmptyRun = found ? longest : nil
  }

  /// A year of the same kind as `year` within the 400-year cycle that
  /// ``kind(year:month:)``'s arithmetic handles.
  private static func sample(_ year: Int) -> Int {
    2000 + ((year - 2000) % 400 + 400) % 400
  }

  private static func gcd(_ a: Int, _ b: Int) -> Int {
    b == 0 ? a : gcd(b, a % b)
  }
}

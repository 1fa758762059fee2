import CICal
import Foundation

/// What expanding a rule taught, kept with the rule (and its copies) so
/// that it is learned once: which months or years have days, where a COUNT
/// ends. A cache: two equal rules are equal whatever each has learned.
/// Read and written under ``CalendarRule/lock``.
final class ExpansionFacts: Equatable, @unchecked Sendable {
  /// Whether libical takes the rule and some day passes its filters.
  var checkedDays: Bool?
  var periods: CalendarPeriods?
  /// The local time of the COUNT's last occurrence; `.some(nil)` when the
  /// rule has none.
  var countEnd: Int64??

  static func == (lhs: ExpansionFacts, rhs: ExpansionFacts) -> Bool { true }
}

/// Expanding a rule with libical within a budget (``RecurrenceBudget``):
/// every call into libical is bounded before it is made.
///
/// libical's iterator steps through the times the rule's frequency and
/// finer parts make (every minute of `FREQ=MINUTELY`) and returns those
/// its coarser parts let through; between two it returns it may step
/// through any number, up to the year 2582. So a rule with such a filter
/// (``RuleShape/filters``) gets an `UNTIL` no later than the budget pays
/// for at the most times a period can have, and a search that reaches it
/// without an answer is over budget. A `MONTHLY` or `YEARLY` rule has no
/// such filter: each time libical steps through is returned and paid for
/// as it comes, and the months or years without a day that libical lays
/// out in between are known beforehand (``CalendarPeriods``).
extension CalendarRule {
  /// The last local time libical expands (its `MAX_TIME_T_YEAR`, 2582).
  static let lastLocalTime = CivilDate(year: 2583, month: 1, day: 1).daysSinceEpoch * 86_400 - 1

  /// Whether the rule has an occurrence at all, as far as can be known
  /// before one is sought: false when no month or year it visits has a
  /// day, or its COUNT has none. Learns what the search needs.
  func hasDays(budget: RecurrenceBudget) throws(RecurrenceBudget.Exceeded) -> Bool {
    Self.lock.lock()
    defer { Self.lock.unlock() }
    return try learn(budget: budget)
  }

  /// Runs `visit` on the rule's local times from `from` (or DTSTART, if
  /// later) on, in order, until it returns true (then true), the rule ends
  /// (false), or the budget runs out (throws). `end` is a local time after
  /// which nothing can come (an UNTIL).
  func walk(
    from: Int64, end: Int64, budget: RecurrenceBudget, _ visit: (Int64) -> Bool
  ) throws(RecurrenceBudget.Exceeded) -> Bool {
    Self.lock.lock()
    defer { Self.lock.unlock() }
    guard try learn(budget: budget) else { return false }
    var last = min(end, Self.lastLocalTime)
    var text = rule
    if count != nil, case .some(.some(let countEnd)) = facts.countEnd {
      // Once the last occurrence is known, the rule ends there: libical
      // can then start anywhere, which it cannot with a COUNT.
      last = min(last, countEnd)
      text = shape.text(without: ["COUNT"])
    }
    let outcome = try run(text, from: max(from, start), through: last, budget: budget, visit)
    return outcome == .stopped
  }

  /// Learns which periods have days and where a COUNT ends, once; false
  /// when the rule has no occurrence.
  private func learn(budget: RecurrenceBudget) throws(RecurrenceBudget.Exceeded) -> Bool {
    if shape.frequency < .monthly, facts.checkedDays == nil {
      // Whether libical takes the parts together at all (a BYWEEKNO goes
      // only with YEARLY): making the iterator lays out nothing.
      try budget.charge(RuleShape.iteratorSteps)
      guard let iterator = chat_rrule_iterator(rule, Self.fields(start)) else {
        facts.checkedDays = false
        return false
      }
      icalrecur_iterator_free(iterator)
      facts.checkedDays = try checkDays()
    }
    if facts.checkedDays == false { return false }
    if shape.frequency >= .monthly {
      if facts.periods == nil {
        let date = CivilDate(daysSinceEpoch: Timestamp.floorDivide(start, 86_400).0)
        let hasDays = try CalendarPeriods.probe(
          shape, startMonth: date.month, startDay: date.day, budget: budget)
        facts.periods = CalendarPeriods(
          shape, hasDays: hasDays, startYear: date.year, startMonth: date.month)
      }
      guard facts.periods?.longestEmptyRun != nil else { return false }
    }
    if let count, facts.countEnd == nil {
      var found = 0
      var lastFound: Int64?
      _ = try run(rule, from: start, through: Self.lastLocalTime, budget: budget) { local in
        found += 1
        lastFound = local
        return found >= count
      }
      facts.countEnd = .some(lastFound)
    }
    if case .some(.none) = facts.countEnd { return false }
    return true
  }

  /// Whether any day passes the rule's day filters (``DayFilters``);
  /// throws when the longest run of days without one makes libical step
  /// through more times than a whole budget pays for: the rule is too
  /// sparse for its FREQ, whatever the date it is given on.
  func checkDays() throws(RecurrenceBudget.Exceeded) -> Bool {
    guard let filters = DayFilters(shape) else { return true }
    guard let gap = filters.longestGap() else { return false }
    let (seconds, times) = shape.period
    let perDay = Double(times) * 86_400 / Double(seconds)
    if Double(gap) * perDay > Double(RecurrenceBudget.stepsPerRequest) {
      throw RecurrenceBudget.Exceeded(limit: RecurrenceBudget.stepsPerRequest)
    }
    return true
  }

  private enum Outcome: Equatable {
    /// `visit` said stop.
    case stopped
    /// libical has no more.
    case ended
  }

  /// One iterator over `text` from `from` to `last` (local seconds), with
  /// the work bounded as the type's comment says.
  private func run(
    _ text: String, from: Int64, through last: Int64, budget: RecurrenceBudget,
    _ visit: (Int64) -> Bool
  ) throws(RecurrenceBudget.Exceeded) -> Outcome {
    let (periodSeconds, timesPerPeriod) = shape.period
    let emptyRun = facts.periods?.longestEmptyRun ?? 0
    let moved = from > start
    // Where a moved iterator starts again: a month or year is laid out
    // from its first day, or from DTSTART within DTSTART's own.
    var skipTo = from
    if moved && shape.frequency >= .monthly {
      let date = CivilDate(daysSinceEpoch: Timestamp.floorDivide(from, 86_400).0)
      let firstDay =
        shape.frequency == .monthly
        ? CivilDate(year: date.year, month: date.month, day: 1)
        : CivilDate(year: date.year, month: 1, day: 1)
      skipTo = max(start, firstDay.daysSinceEpoch * 86_400)
    }
    // Before the first time it returns, libical lays out the months or
    // years without a day from DTSTART's, and again from where it is
    // moved to, and steps over every time of the first period before
    // where it starts: a month's or a year's when that is not the
    // period's first day (`BYDAY=SU` with every minute of the day from 5
    // December passes 70,000 times, 86 ms).
    var fixed = RuleShape.iteratorSteps + (moved ? 2 : 1) * emptyRun
    switch shape.frequency {
    case .secondly, .minutely, .hourly: break  // DTSTART moves instead (below)
    case .daily, .weekly: fixed += timesPerPeriod
    case .monthly, .yearly:
      if !moved || skipTo == start {
        fixed += (timesPerPeriod + RuleShape.passedTimesPerStep - 1) / RuleShape.passedTimesPerStep
      }
    }
    try budget.charge(fixed)

    // MINUTELY and HOURLY: libical's set_start misses the INTERVAL's step
    // across days, so DTSTART itself moves on by whole steps of it.
    var first = start
    if shape.frequency <= .hourly && moved {
      first = start + (from - start) / periodSeconds * periodSeconds
    }
    let windowStart = shape.frequency <= .hourly ? first : from
    var through = last
    let windowed = shape.filters
    if windowed {
      // As many periods as the budget pays for, the first and last partly
      // outside the window (see ``steps(from:to:_:)``).
      let periods = Int64(budget.remaining / max(1, timesPerPeriod)) - 2
      guard periods >= 1 else { throw budget.exhaust() }
      let (window, overflow) = periods.multipliedReportingOverflow(by: periodSeconds)
      if !overflow, windowStart + window < through { through = windowStart + window }
    }
    let bounded = through < Self.lastLocalTime ? ";UNTIL=" + Self.spell(through) : ""
    guard let iterator = chat_rrule_iterator(text + bounded, Self.fields(first)) else {
      return .ended
    }
    defer { icalrecur_iterator_free(iterator) }
    if moved && shape.frequency > .hourly {
      _ = chat_rrule_skip_to(iterator, Self.fields(skipTo))
    }

    var fields: [Int32] = [0, 0, 0, 0, 0, 0]
    var previousPeriod: Int?
    let periodSteps = shape.frequency == .yearly ? RuleShape.yearSteps : RuleShape.monthSteps
    while true {
      if !windowed {
        // This call may lay out a run of months or years without a day.
        guard budget.remaining >= 1 + emptyRun + periodSteps else { throw budget.exhaust() }
      }
      guard chat_rrule_next(iterator, &fields) != 0 else { break }
      let day = CivilDate(year: Int(fields[0]), month: Int(fields[1]), day: Int(fields[2]))
      let local =
        day.daysSinceEpoch * 86_400 + Int64(fields[3]) * 3600 + Int64(fields[4]) * 60
        + Int64(fields[5])
      if !windowed {
        var steps = 1
        if shape.frequency >= .monthly {
          let period = shape.frequency == .yearly ? day.year : day.year * 12 + day.month
          if let previousPeriod, period > previousPeriod {
            steps += (period - previousPeriod) / max(1, shape.interval) * periodSteps
          }
          previousPeriod = period
        }
        budget.record(steps)
      }
      if visit(local) {
        if windowed { budget.record(Self.steps(from: windowStart, to: local, shape)) }
        return .stopped
      }
    }
    if windowed {
      budget.record(Self.steps(from: windowStart, to: through, shape))
      // Nothing before the end of what the budget paid for.
      if through < last { throw budget.exhaust() }
    }
    return .ended
  }

  /// The most times libical steps through from `from` to `to`.
  private static func steps(from: Int64, to: Int64, _ shape: RuleShape) -> Int {
    let (seconds, times) = shape.period
    let periods = max(0, to - from) / seconds + 2
    return Int(min(periods, Int64(Int32.max))) * times
  }
}

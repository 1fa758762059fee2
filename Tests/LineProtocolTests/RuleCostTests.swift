import Foundation
import Testing

@testable import LineProtocol

/// What expanding a rule costs and what it is known to cost beforehand
/// (chatbroker(7), "Series": what a rule may cost): the days a rule's
/// filters let through, the months and years libical lays out without a
/// day, and a search within a budget.
@Suite("Rule cost: day filters, empty periods, the budget")
struct RuleCostTests {
  static func shape(_ rule: String) throws -> RuleShape {
    let parsed = try Recurrence.parse(
      "rrule:" + rule + ";DTSTART=20260201T000000/UTC", defaultZone: TimeZone(identifier: "UTC")!,
      verb: .sayEvery, budget: nil)
    guard case .calendar(let calendar) = parsed.pattern else { throw CancellationError() }
    return calendar.shape
  }

  @Test(
    "the longest run of days a rule's filters let none through, over 400 years",
    arguments: [
      // The days between 29 February 2096 and 2104, 2921 days apart.
      ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", 2920),
      ("FREQ=HOURLY;BYYEARDAY=366", 2920),
      ("FREQ=MINUTELY;BYMONTH=11;BYMONTHDAY=1", 365),
      ("FREQ=MINUTELY;BYDAY=MO,TU,WE,TH,FR", 2),
      ("FREQ=DAILY;BYMONTHDAY=13;BYDAY=FR", 426),  // 14 months apart at most
      ("FREQ=WEEKLY;BYMONTH=3", 335),  // April to February of a leap year
    ])
  func dayGaps(rule: String, gap: Int) throws {
    let found = DayFilters(try Self.shape(rule))?.longestGap()
    #expect(found == gap, "\(String(describing: found))")
  }

  @Test("a rule no day of which can match: negative month days, ordinal weekdays of a DAILY rule")
  func neverMatches() throws {
    for rule in [
      "FREQ=HOURLY;BYYEARDAY=1;BYMONTH=2", "FREQ=DAILY;BYDAY=1MO", "FREQ=DAILY;BYMONTHDAY=-1",
      "FREQ=MINUTELY;BYYEARDAY=-1",
    ] {
      let filters = try #require(DayFilters(try Self.shape(rule)), "\(rule)")
      #expect(filters.longestGap() == nil, "\(rule)")
    }
    #expect(DayFilters(try Self.shape("FREQ=DAILY;BYHOUR=9")) == nil, "no day filter")
    #expect(DayFilters(try Self.shape("FREQ=MONTHLY;BYMONTHDAY=-1")) == nil, "adds days")
  }

  @Test(
    "the months or years without a day libical lays out in a row, in steps",
    arguments: [
      ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", 7 * 5),  // 2097 to 2103
      ("FREQ=MONTHLY;BYMONTHDAY=31", 3),  // one month at a time
      ("FREQ=MONTHLY;BYMONTHDAY=30;BYMONTH=2,3", 10 * 1 + 3),  // 10 skipped, a February
      ("FREQ=MONTHLY;BYDAY=MO", 0),
    ])
  func emptyRuns(rule: String, steps: Int) throws {
    let shape = try Self.shape(rule)
    let hasDays = try CalendarRule.lock.withLock { () throws(RecurrenceBudget.Exceeded) in
      try CalendarPeriods.probe(shape, startMonth: 2, startDay: 1, budget: RecurrenceBudget())
    }
    let periods = CalendarPeriods(shape, hasDays: hasDays, startYear: 2026, startMonth: 2)
    #expect(periods.longestEmptyRun == steps)
  }

  @Test("no month or year with a day: libical is not asked for an occurrence")
  func noPeriodWithDays() throws {
    for rule in [
      "FREQ=MONTHLY;BYMONTHDAY=31;BYSETPOS=2", "FREQ=MONTHLY;BYSETPOS=32",
      "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYSETPOS=2", "FREQ=MONTHLY;INTERVAL=12;BYMONTH=3",
    ] {
      let shape = try Self.shape(rule)
      let hasDays = try CalendarRule.lock.withLock { () throws(RecurrenceBudget.Exceeded) in
        try CalendarPeriods.probe(shape, startMonth: 2, startDay: 1, budget: RecurrenceBudget())
      }
      let periods = CalendarPeriods(shape, hasDays: hasDays, startYear: 2026, startMonth: 2)
      #expect(periods.longestEmptyRun == nil, "\(rule)")
    }
  }

  @Test(
    "a YEARLY rule without BYMONTH lays out its month days in DTSTART's month alone",
    arguments: [
      // 6 January is the year's first Friday every few years; no 6
      // February or 6 December is.
      ("FREQ=YEARLY;BYMONTHDAY=6;BYDAY=1FR", 1, true),
      ("FREQ=YEARLY;BYMONTHDAY=6;BYDAY=1FR", 2, false),
      ("FREQ=YEARLY;BYMONTHDAY=-15,6;BYDAY=1FR,5FR,53SA,-5SA;BYMINUTE=0,30", 12, false),
      // A BYDAY no month day limits is the year's, whatever DTSTART's month.
      ("FREQ=YEARLY;BYDAY=1FR", 12, true),
      ("FREQ=YEARLY;BYYEARDAY=6;BYDAY=1FR", 12, true),
    ])
  func yearlyMonthDays(rule: String, startMonth: Int, hasDays: Bool) throws {
    let shape = try Self.shape(rule)
    let found = try CalendarRule.lock.withLock { () throws(RecurrenceBudget.Exceeded) in
      try CalendarPeriods.probe(
        shape, startMonth: startMonth, startDay: 1, budget: RecurrenceBudget())
    }
    let periods = CalendarPeriods(shape, hasDays: found, startYear: 2026, startMonth: startMonth)
    #expect((periods.longestEmptyRun != nil) == hasDays)
  }

  @Test("a YEARLY rule whose DTSTART month has no day is refused as having none, at once")
  func yearlyWithoutDaysFromDTSTART() throws {
    // libical itself would lay out every year to 2582 before saying so:
    // 0.2 s of the serving thread.
    let budget = RecurrenceBudget()
    let error = #expect(throws: RequestError.self) {
      try Recurrence.parse(
        "rrule:FREQ=YEARLY;BYMONTHDAY=6;BYDAY=1FR;DTSTART=20261205T000000/UTC",
        defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery, budget: budget)
    }
    #expect(error?.code == .badTime)
    #expect(error?.text.contains("has no occurrences") == true)
    #expect(budget.spent < RecurrenceBudget.stepsPerRequest / 10, "\(budget.spent) steps")
  }

  @Test("a MONTHLY or YEARLY rule pays for every time of its period libical passes before DTSTART")
  func timesBeforeStart() throws {
    let hours = (0...23).map(String.init).joined(separator: ",")
    let minutes = (0...59).map(String.init).joined(separator: ",")
    let days = (1...28).map(String.init).joined(separator: ",")
    let now = Timestamp(rfc3339: "2026-12-05T05:20:00.000Z")!
    func next(_ rule: String) throws -> Timestamp? {
      let parsed = try Recurrence.parse(
        "rrule:" + rule + ";DTSTART=20261205T000000/UTC",
        defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery)
      return try parsed.next(after: now, reference: now, budget: RecurrenceBudget())
    }
    // libical looks at every minute of every Sunday since 1 January (86
    // ms), or of every day since 1 December, before its first answer.
    #expect(throws: RecurrenceBudget.Exceeded.self) {
      try next("FREQ=YEARLY;BYHOUR=\(hours);BYMINUTE=\(minutes);BYDAY=SU")
    }
    #expect(throws: RecurrenceBudget.Exceeded.self) {
      try next("FREQ=MONTHLY;BYHOUR=\(hours);BYMINUTE=\(minutes);BYMONTHDAY=\(days)")
    }
    // As WEEKLY, twice a day, or on one day a year, it costs what others do.
    #expect(
      try next("FREQ=WEEKLY;BYHOUR=\(hours);BYMINUTE=\(minutes);BYDAY=SU")
        == Timestamp(rfc3339: "2026-12-06T00:00:00.000Z"))
    #expect(
      try next("FREQ=YEARLY;BYHOUR=9,17;BYDAY=SU")
        == Timestamp(rfc3339: "2026-12-06T09:00:00.000Z"))
    #expect(
      try next("FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25;BYHOUR=\(hours);BYMINUTE=\(minutes)")
        == Timestamp(rfc3339: "2026-12-25T00:00:00.000Z"))
  }

  @Test("HOURLY and MINUTELY keep the INTERVAL's step across days, however late the search")
  func intervalAcrossDays() throws {
    let rule = try Recurrence.parse(
      "rrule:FREQ=HOURLY;INTERVAL=7;DTSTART=20261203T000000/UTC",
      defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery)
    // 168 hours after DTSTART: an occurrence; the next is 7 hours on.
    let instant = Timestamp(rfc3339: "2026-12-10T00:00:00.000Z")!
    #expect(
      try rule.next(after: instant, reference: instant)
        == Timestamp(rfc3339: "2026-12-10T07:00:00.000Z"))
    let minutely = try Recurrence.parse(
      "rrule:FREQ=MINUTELY;INTERVAL=7;DTSTART=20261203T000000/UTC",
      defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery)
    // 10,080 minutes, a multiple of 7: the next is 7 minutes on.
    #expect(
      try minutely.next(after: instant, reference: instant)
        == Timestamp(rfc3339: "2026-12-10T00:07:00.000Z"))
  }

  @Test("a search stops when its budget runs out, having spent no more than it")
  func searchWithinBudget() throws {
    let rule = try Recurrence.parse(
      "rrule:FREQ=MINUTELY;BYHOUR=9;DTSTART=20261203T000000/UTC",
      defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery)
    let ten = Timestamp(rfc3339: "2026-12-03T10:00:00.000Z")!
    // 23 hours of minutes to the next 09:00: within a whole budget...
    let budget = RecurrenceBudget()
    #expect(
      try rule.next(after: ten, reference: ten, budget: budget)
        == Timestamp(rfc3339: "2026-12-04T09:00:00.000Z"))
    #expect(budget.spent > 23 * 60 && budget.spent <= budget.limit)
    // ...and not within a smaller one.
    let small = RecurrenceBudget(limit: 1000)
    #expect(throws: RecurrenceBudget.Exceeded(limit: 1000)) {
      try rule.next(after: ten, reference: ten, budget: small)
    }
    #expect(small.spent == small.limit)
  }
}

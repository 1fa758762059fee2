import Foundation
import LineProtocol
import Testing

@Suite("Recurrence: the rules of SAYEVERY and when they fall")
struct RecurrenceTests {
  static let berlin = TimeZone(identifier: "Europe/Berlin")!

  static func rule(_ word: String, zone: TimeZone = berlin) throws -> Recurrence {
    try Recurrence.parse(word, defaultZone: zone, verb: .sayEvery)
  }

  @Test(
    "a rule reads back in its canonical form, with the zone spelled out",
    arguments: [
      ("daily@09:00", "daily@09:00/Europe/Berlin"),
      ("Weekdays@9:00/America/New_York", "weekdays@09:00/America/New_York"),
      ("mon-fri@09:00", "weekdays@09:00/Europe/Berlin"),
      ("sat,sun@10:30", "weekends@10:30/Europe/Berlin"),
      ("wed,mon@18:00:30", "mon,wed@18:00:30/Europe/Berlin"),
      ("fri-mon@08:00", "mon,fri,sat,sun@08:00/Europe/Berlin"),
      ("monthly:31@09:00,until:2027-03-01", "monthly:31@09:00/Europe/Berlin,until:2027-03-01"),
      // Elapsed time has no zone, unless an until: date needs one.
      ("every:15m,count:10", "every:15m,count:10"),
      ("every:1h30m/UTC", "every:1h30m"),
      ("every:60s,count:1000000", "every:1m,count:1000000"),
      ("every:2h,until:2027-03-01", "every:2h/Europe/Berlin,until:2027-03-01"),
    ])
  func canonical(_ typed: String, _ shown: String) throws {
    let parsed = try Self.rule(typed)
    #expect(parsed.description == shown)
    #expect(try Self.rule(shown, zone: TimeZone(identifier: "UTC")!) == parsed, "round trip")
  }

  @Test(
    "a rule that cannot be read is BADTIME with the grammar in the text",
    arguments: [
      "every:30s", "every:15", "every:m", "daily@25:00", "daily@09:60", "funday@09:00",
      "daily@09:00/Mars/Olympus", "monthly:32@09:00", "monthly:0@09:00", "daily@09:00,count:0",
      "daily@09:00,count:2,until:2027-01-01", "daily", "daily@09:00,until:2027-02-30",
      "daily@9", "mon,,wed@09:00", "daily@09:00,count:1000001", "every:59s",
      // Found by tools/fuzz: Foundation read the name only up to the NUL,
      // and the reply echoed the NULs.
      "weekdays@09:00/Europe/Berlin\u{0}\u{0}", "daily@09:00/Europe/Berlin\u{1B}[2J",
    ])
  func refused(_ word: String) {
    #expect {
      try Recurrence.parse(word, defaultZone: Self.berlin, verb: .sayEvery)
    } throws: { error in
      guard let error = error as? RequestError else { return false }
      return error.code == .badTime && error.verb == "SAYEVERY"
        && error.text.contains("a rule is daily@09:00")
    }
  }

  @Test("a rule is told apart from a <when> by its shape")
  func ruleOrWhen() {
    for rule in ["daily@09:00", "every:15m", "monthly:1@08:00", "mon@18:00"] {
      #expect(Recurrence.isRule(rule), "\(rule)")
    }
    for when in ["18:00", "+10m", "@1798131600", "2026-12-24T18:00Z"] {
      #expect(!Recurrence.isRule(when), "\(when)")
    }
  }

  /// The occurrences after `start`, one after another.
  static func occurrences(_ word: String, after start: String, count: Int) throws -> [String] {
    let parsed = try rule(word)
    var instant = utc(start)
    var reference = try parsed.first(after: instant)!
    var result = [reference.description]
    while result.count < count, let next = try parsed.next(after: reference, reference: reference) {
      instant = reference
      reference = next
      result.append(next.description)
    }
    return result
  }

  @Test("Europe/Berlin: 02:30 on the night that skips it comes at 03:00, a repeated 02:30 once")
  func berlinDST() throws {
    // 2027-03-28 02:00 CET becomes 03:00 CEST (01:00Z).
    #expect(
      try Self.occurrences("daily@02:30", after: "2027-03-27T12:00:00Z", count: 2) == [
        "2027-03-28T01:00:00.000Z", "2027-03-29T00:30:00.000Z",
      ])
    // 2026-10-25 03:00 CEST becomes 02:00 CET (01:00Z): 02:30 shows twice.
    #expect(
      try Self.occurrences("daily@02:30", after: "2026-10-24T12:00:00Z", count: 3) == [
        "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z", "2026-10-27T01:30:00.000Z",
      ])
    // 09:00 stays 09:00 on the local clock across the change.
    #expect(
      try Self.occurrences("weekdays@09:00", after: "2026-10-23T06:00:00Z", count: 2) == [
        "2026-10-23T07:00:00.000Z", "2026-10-26T08:00:00.000Z",
      ])
  }

  @Test("America/New_York: the skipped 02:30 at 03:00 EDT, the repeated 01:30 only in EDT")
  func newYorkDST() throws {
    let zone = "/America/New_York"
    // 2027-03-14 02:00 EST becomes 03:00 EDT (07:00Z).
    #expect(
      try Self.occurrences("daily@02:30" + zone, after: "2027-03-13T12:00:00Z", count: 2) == [
        "2027-03-14T07:00:00.000Z", "2027-03-15T06:30:00.000Z",
      ])
    // 2026-11-01 02:00 EDT becomes 01:00 EST (06:00Z): 01:30 shows twice.
    #expect(
      try Self.occurrences("daily@01:30" + zone, after: "2026-10-31T12:00:00Z", count: 2) == [
        "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z",
      ])
  }

  @Test("monthly:31 falls on the last day of shorter months, 29 February in a leap year")
  func monthEnds() throws {
    #expect(
      try Self.occurrences("monthly:31@09:00/UTC", after: "2027-01-30T00:00:00Z", count: 5) == [
        "2027-01-31T09:00:00.000Z", "2027-02-28T09:00:00.000Z", "2027-03-31T09:00:00.000Z",
        "2027-04-30T09:00:00.000Z", "2027-05-31T09:00:00.000Z",
      ])
    #expect(
      try Self.occurrences("monthly:30@09:00/UTC", after: "2028-02-01T00:00:00Z", count: 2) == [
        "2028-02-29T09:00:00.000Z", "2028-03-30T09:00:00.000Z",
      ])
  }

  @Test("given weekdays come in order; an interval counts from its first occurrence")
  func weekdaysAndIntervals() throws {
    // 2026-11-30 is a Monday; 18:00 in Berlin is 17:00Z.
    #expect(
      try Self.occurrences("mon,wed@18:00", after: "2026-11-30T17:00:00Z", count: 3) == [
        "2026-12-02T17:00:00.000Z", "2026-12-07T17:00:00.000Z", "2026-12-09T17:00:00.000Z",
      ])
    let every = try Self.rule("every:15m")
    let start = utc("2026-11-30T17:00:00Z")
    #expect(try every.first(after: start) == start + 900_000)
    #expect(try every.next(after: start + 2_400_000, reference: start) == start + 2_700_000)
  }

  @Test("until: is the last local date with an occurrence")
  func until() throws {
    let parsed = try Self.rule("daily@09:00/UTC,until:2027-01-02")
    let last = utc("2027-01-02T09:00:00Z")
    #expect(try parsed.next(after: last + -3_600_000, reference: last) == last)
    #expect(try parsed.next(after: last, reference: last) == nil)
  }

  @Test("a series ends with its last occurrence before the year 10000 (found by tools/fuzz)")
  func endsBeforeYear10000() throws {
    let rule = try Self.rule("weekdays@09:00/UTC")
    let friday = Timestamp(rfc3339: "9999-12-31T09:00:00.000Z")!
    #expect(try rule.next(after: friday, reference: friday) == nil)
    let earlier = Timestamp(rfc3339: "9999-12-30T09:00:00.000Z")!
    #expect(try rule.next(after: earlier, reference: earlier) == friday)
  }
}

/// The short forms for what calendars and timers say most (chatbroker(7),
/// "Series"): several times a day, the Nth or last weekday of a month,
/// yearly, every N weeks, and a start date.
@Suite("Recurrence: short calendar forms")
struct ShortFormTests {
  static let berlin = TimeZone(identifier: "Europe/Berlin")!
  /// Wednesday 2 December 2026, 08:00 in Berlin.
  static let now = Timestamp(rfc3339: "2026-12-02T07:00:00.000Z")!

  static func rule(_ word: String) throws -> Recurrence {
    try Recurrence.parse(word, defaultZone: berlin, now: now, verb: .sayEvery)
  }

  /// The first `count` occurrences after `now`, as local times in Berlin.
  static func occurrences(_ word: String, _ count: Int) throws -> [String] {
    let rule = try rule(word)
    var found: [String] = []
    guard var instant = try rule.first(after: now) else { return [] }
    while found.count < count {
      found.append(CalendarRuleTests.local(instant, berlin))
      guard let next = try rule.next(after: instant, reference: instant) else { break }
      instant = next
    }
    return found
  }

  @Test(
    "each short form reads back normalised, with its zone, and parses back the same",
    arguments: [
      ("daily@17:00,9:00", "daily@09:00,17:00/Europe/Berlin"),
      ("weekdays@09:00,12:30,17:00/UTC", "weekdays@09:00,12:30,17:00/UTC"),
      ("monthly:last-fri@17:00", "monthly:last-fri@17:00/Europe/Berlin"),
      ("Monthly:2nd-Tue@09:00,count:12", "monthly:2nd-tue@09:00/Europe/Berlin,count:12"),
      ("yearly:03-14@09:00", "yearly:03-14@09:00/Europe/Berlin"),
      ("every:2w:tue@09:00", "every:2w:tue@09:00/Europe/Berlin,from:2026-12-02"),
      (
        "every:2w:mon-wed@9:00,from:2026-12-07",
        "every:2w:mon,tue,wed@09:00/Europe/Berlin,from:2026-12-07"
      ),
      (
        "daily@09:00,until:2027-01-31,from:2026-12-07",
        "daily@09:00/Europe/Berlin,from:2026-12-07,until:2027-01-31"
      ),
      ("every:1h,from:2026-12-24", "every:1h/Europe/Berlin,from:2026-12-24"),
    ])
  func canonical(_ typed: String, _ shown: String) throws {
    let parsed = try Self.rule(typed)
    #expect(parsed.description == shown)
    let again = try Recurrence.parse(
      shown, defaultZone: TimeZone(identifier: "UTC")!, now: Self.now + 40 * 86_400_000,
      verb: .sayEvery)
    #expect(again == parsed, "round trip, on any later day")
  }

  @Test(
    "short forms come at the local times they name",
    arguments: [
      ("daily@09:00,17:00", ["20261202T090000", "20261202T170000", "20261203T090000"]),
      // December 2026 ends on a Thursday: its last Friday is the 25th.
      ("monthly:last-fri@17:00", ["20261225T170000", "20270129T170000", "20270226T170000"]),
      ("monthly:2nd-tue@09:00", ["20261208T090000", "20270112T090000", "20270209T090000"]),
      // Few months have a 5th Friday.
      ("monthly:5th-fri@09:00", ["20270129T090000", "20270430T090000", "20270730T090000"]),
      ("yearly:03-14@09:00", ["20270314T090000", "20280314T090000"]),
      ("yearly:02-29@09:00", ["20270228T090000", "20280229T090000", "20290228T090000"]),
      // Counted from the week of Wednesday 2 December, which began on
      // Monday 30 November: its Tuesday is past, so two weeks on.
      ("every:2w:tue@09:00", ["20261215T090000", "20261229T090000", "20270112T090000"]),
      ("every:2w:tue@09:00,from:2026-12-07", ["20261208T090000", "20261222T090000"]),
      ("daily@09:00,from:2026-12-24,count:2", ["20261224T090000", "20261225T090000"]),
      // Berlin's summer time starts 28 March 2027: 09:00 stays 09:00.
      (
        "every:1w:sun@09:00,from:2027-03-21",
        ["20270321T090000", "20270328T090000", "20270404T090000"]
      ),
    ])
  func occurrences(_ word: String, _ expected: [String]) throws {
    #expect(try Self.occurrences(word, expected.count) == expected)
  }

  @Test(
    "a short form that cannot be read or comes more than once a minute is BADTIME",
    arguments: [
      "daily@09:00,09:00:30", "daily@23:59:30,00:00:10", "monthly:6th-fri@09:00",
      "monthly:last-funday@09:00", "yearly:02-30@09:00", "yearly:3-14@09:00",
      "every:0w:tue@09:00", "every:53w:tue@09:00", "every:2d:tue@09:00",
      "daily@09:00,from:2026-13-01", "daily@09:00,from:2027-01-01,from:2027-02-01",
      "daily@"
        + (0..<25).map { "\(10 + $0 / 60):\(String(format: "%02d", $0 % 60))" }.joined(
          separator: ","),
    ])
  func refused(_ word: String) {
    #expect {
      try Self.rule(word)
    } throws: { error in
      (error as? RequestError)?.code == .badTime
    }
  }
}

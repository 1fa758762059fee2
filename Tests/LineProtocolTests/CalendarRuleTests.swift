import Foundation
import LineProtocol
import Testing

/// `rrule:` series (chatbroker(7), "Series"): RFC 5545's recurrence rules as
/// the broker expands them, one occurrence after another as a series does.
@Suite("CalendarRule: RFC 5545 recurrence rules as series")
struct CalendarRuleTests {
  /// The first `count` occurrences of `word` in `zone`, as local times
  /// `YYYYMMDDTHHMMSS`, found the way the broker finds each next one.
  static func occurrences(_ word: String, zone: String, count: Int, from: Timestamp) throws
    -> [String]
  {
    let timeZone = TimeZone(identifier: zone)!
    let rule = try Recurrence.parse(word, defaultZone: timeZone, now: from, verb: .sayEvery)
    var shown: [String] = []
    var instant = from
    while shown.count < count, let next = try rule.next(after: instant, reference: instant) {
      shown.append(local(next, timeZone))
      instant = next
    }
    return shown
  }

  static func local(_ instant: Timestamp, _ zone: TimeZone) -> String {
    let seconds = instant.milliseconds / 1000
    let local =
      seconds + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))))
    let day = CivilDate(daysSinceEpoch: local / 86_400)
    let time = Int(local % 86_400)
    func pad(_ value: Int, _ width: Int) -> String {
      String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
    }
    return pad(day.year, 4) + pad(day.month, 2) + pad(day.day, 2) + "T" + pad(time / 3600, 2)
      + pad(time / 60 % 60, 2) + pad(time % 60, 2)
  }

  /// `MMDD` days at 09:00 in `year`, for the tables below.
  static func days(_ year: Int, _ days: [Int], at time: String = "090000") -> [String] {
    days.map { day in
      String(year) + (day < 1000 ? "0" : "") + String(day) + "T" + time
    }
  }

  /// RFC 5545 section 3.8.5.3's examples, each with DTSTART in
  /// America/New_York as the RFC gives it: the rule, and the first
  /// occurrences it lists.
  static let rfcExamples: [(String, String, [String])] = [
    // Daily for 10 occurrences.
    ("FREQ=DAILY;COUNT=10", "19970902T090000", days(1997, Array(902...911))),
    // Daily until December 24, 1997: 113 in all, the last on the 23rd.
    (
      "FREQ=DAILY;UNTIL=19971224T000000Z", "19970902T090000",
      days(1997, [902, 903, 904]) + ["..."] + days(1997, [1222, 1223])
    ),
    // Every other day, forever.
    ("FREQ=DAILY;INTERVAL=2", "19970902T090000", days(1997, [902, 904, 906, 908, 910, 912])),
    // Every 10 days, 5 occurrences.
    (
      "FREQ=DAILY;INTERVAL=10;COUNT=5", "19970902T090000",
      days(1997, [902, 912, 922, 1002, 1012])
    ),
    // Every day in January, for 3 years.
    (
      "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
      "19980101T090000",
      days(1998, Array(101...131)) + days(1999, Array(101...131))
        + days(2000, Array(101...131))
    ),
    (
      "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1", "19980101T090000",
      days(1998, Array(101...131)) + days(1999, Array(101...131))
        + days(2000, Array(101...131))
    ),
    // Weekly for 10 occurrences.
    (
      "FREQ=WEEKLY;COUNT=10", "19970902T090000",
      days(1997, [902, 909, 916, 923, 930, 1007, 1014, 1021, 1028, 1104])
    ),
    // Every other week, forever.
    (
      "FREQ=WEEKLY;INTERVAL=2;WKST=SU", "19970902T090000",
      days(1997, [902, 916, 930, 1014, 1028, 1111, 1125, 1209, 1223]) + days(1998, [106, 120])
    ),
    // Weekly on Tuesday and Thursday for five weeks, both ways.
    (
      "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH", "19970902T090000",
      days(1997, [902, 904, 909, 911, 916, 918, 923, 925, 930, 1002])
    ),
    (
      "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH", "19970902T090000",
      days(1997, [902, 904, 909, 911, 916, 918, 923, 925, 930, 1002])
    ),
    // Every other week on Monday, Wednesday and Friday until December 24.
    (
      "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", "19970901T090000",
      days(
        1997,
        [
          901, 903, 905, 915, 917, 919, 929, 1001, 1003, 1013, 1015, 1017, 1027, 1029, 1031, 1110,
          1112, 1114, 1124, 1126, 1128, 1208, 1210, 1212, 1222,
        ])
    ),
    // Every other week on Tuesday and Thursday, for 8 occurrences.
    (
      "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH", "19970902T090000",
      days(1997, [902, 904, 916, 918, 930, 1002, 1014, 1016])
    ),
    // Monthly on the first Friday for 10 occurrences.
    (
      "FREQ=MONTHLY;COUNT=10;BYDAY=1FR", "19970905T090000",
      days(1997, [905, 1003, 1107, 1205]) + days(1998, [102, 206, 306, 403, 501, 605])
    ),
    // Monthly on the first Friday until December 24.
    (
      "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR", "19970905T090000",
      days(1997, [905, 1003, 1107, 1205])
    ),
    // Every other month on the first and last Sunday, 10 occurrences.
    (
      "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU", "19970907T090000",
      days(1997, [907, 928, 1102, 1130]) + days(1998, [104, 125, 301, 329, 503, 531])
    ),
    // Monthly on the second-to-last Monday for 6 months.
    (
      "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO", "19970922T090000",
      days(1997, [922, 1020, 1117, 1222]) + days(1998, [119, 216])
    ),
    // Monthly on the third-to-the-last day of the month, forever.
    (
      "FREQ=MONTHLY;BYMONTHDAY=-3", "19970928T090000",
      days(1997, [928, 1029, 1128, 1229]) + days(1998, [129, 226])
    ),
    // Monthly on the 2nd and 15th for 10 occurrences.
    (
      "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15", "19970902T090000",
      days(1997, [902, 915, 1002, 1015, 1102, 1115, 1202, 1215]) + days(1998, [102, 115])
    ),
    // Monthly on the first and last day for 10 occurrences.
    (
      "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1", "19970930T090000",
      days(1997, [930, 1001, 1031, 1101, 1130, 1201, 1231]) + days(1998, [101, 131, 201])
    ),
    // Every 18 months on the 10th to 15th, 10 occurrences.
    (
      "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15", "19970910T090000",
      days(1997, [910, 911, 912, 913, 914, 915]) + days(1999, [310, 311, 312, 313])
    ),
    // Every Tuesday, every other month.
    (
      "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU", "19970902T090000",
      days(1997, [902, 909, 916, 923, 930, 1104, 1111, 1118, 1125]) + days(1998, [106, 113])
    ),
    // Yearly in June and July for 10 occurrences.
    (
      "FREQ=YEARLY;COUNT=10;BYMONTH=6,7", "19970610T090000",
      (1997...2001).flatMap { days($0, [610, 710]) }
    ),
    // Every other year on January, February and March for 10 occurrences.
    (
      "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3", "19970310T090000",
      days(1997, [310]) + days(1999, [110, 210, 310]) + days(2001, [110, 210, 310])
        + days(2003, [110, 210, 310])
    ),
    // Every third year on the 1st, 100th and 200th day for 10 occurrences.
    (
      "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200", "19970101T090000",
      days(1997, [101, 410, 719]) + days(2000, [101, 409, 718]) + days(2003, [101, 410, 719])
        + days(2006, [101])
    ),
    // Every 20th Monday of the year, forever.
    (
      "FREQ=YEARLY;BYDAY=20MO", "19970519T090000",
      [519, 518, 517].enumerated().flatMap { days(1997 + $0.offset, [$0.element]) }
    ),
    // Monday of week number 20, forever.
    (
      "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", "19970512T090000",
      [512, 511, 517].enumerated().flatMap { days(1997 + $0.offset, [$0.element]) }
    ),
    // Every Thursday in March, forever.
    (
      "FREQ=YEARLY;BYMONTH=3;BYDAY=TH", "19970313T090000",
      days(1997, [313, 320, 327]) + days(1998, [305, 312, 319, 326]) + days(1999, [304, 311])
    ),
    // Every Thursday, but only during June, July and August.
    (
      "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8", "19970605T090000",
      days(1997, [605, 612, 619, 626, 703, 710, 717, 724, 731, 807, 814, 821, 828])
        + days(1998, [604])
    ),
    // Every Friday the 13th, forever, DTSTART excluded.
    (
      "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13;EXDATE=19970902T090000", "19970902T090000",
      days(1998, [213, 313, 1113]) + days(1999, [813]) + days(2000, [1013])
    ),
    // The first Saturday that follows the first Sunday of the month.
    (
      "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13", "19970913T090000",
      days(1997, [913, 1011, 1108, 1213]) + days(1998, [110, 207, 307, 411, 509, 613])
    ),
    // US Presidential Election day, every 4 years.
    (
      "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8", "19961105T090000",
      days(1996, [1105]) + days(2000, [1107]) + days(2004, [1102])
    ),
    // The third instance of Tuesday, Wednesday or Thursday, for 3 months.
    (
      "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3", "19970904T090000",
      days(1997, [904, 1007, 1106])
    ),
    // The second-to-last weekday of the month.
    (
      "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", "19970929T090000",
      days(1997, [929, 1030, 1127, 1230]) + days(1998, [129, 226, 330])
    ),
    // Every 15 minutes for 6 occurrences.
    (
      "FREQ=MINUTELY;INTERVAL=15;COUNT=6", "19970902T090000",
      ["090000", "091500", "093000", "094500", "100000", "101500"].map { "19970902T" + $0 }
    ),
    // Every hour and a half for 4 occurrences.
    (
      "FREQ=MINUTELY;INTERVAL=90;COUNT=4", "19970902T090000",
      ["090000", "103000", "120000", "133000"].map { "19970902T" + $0 }
    ),
    // Every 20 minutes from 9:00 to 16:40 every day.
    (
      "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40", "19970902T090000",
      (9...16).flatMap { hour in
        ["00", "20", "40"].map { "19970902T" + (hour < 10 ? "0" : "") + "\(hour)\($0)00" }
      } + ["19970903T090000"]
    ),
    // WKST changes what "every other week" means.
    (
      "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", "19970805T090000",
      days(1997, [805, 810, 819, 824])
    ),
    (
      "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", "19970805T090000",
      days(1997, [805, 817, 819, 831])
    ),
    // An invalid date (30 February) is left out, not moved.
    (
      "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5", "20070115T090000",
      days(2007, [115, 130, 215, 315, 330])
    ),
  ]

  @Test(
    "RFC 5545 section 3.8.5.3's examples come out as the RFC lists them",
    arguments: rfcExamples.indices)
  func rfcExample(_ index: Int) throws {
    let (rule, start, expected) = Self.rfcExamples[index]
    let word = "rrule:" + rule + ";DTSTART=" + start + "/America/New_York"
    let before = Timestamp(rfc3339: "1996-01-01T00:00:00.000Z")!
    if let gap = expected.firstIndex(of: "...") {
      // A long list: its head, and its tail, and that nothing follows.
      let all = try Self.occurrences(word, zone: "America/New_York", count: 1000, from: before)
      #expect(Array(all.prefix(gap)) == Array(expected[..<gap]), "\(rule)")
      #expect(Array(all.suffix(expected.count - gap - 1)) == Array(expected[(gap + 1)...]))
      #expect(all.count == 113, "\(rule)")
      return
    }
    let found = try Self.occurrences(
      word, zone: "America/New_York", count: expected.count + 1, from: before)
    #expect(Array(found.prefix(expected.count)) == expected, "\(rule)")
    if rule.contains("COUNT") || rule.contains("UNTIL") {
      #expect(found.count == expected.count, "\(rule) ends after its last occurrence")
    }
  }

  static let now = Timestamp(rfc3339: "2026-12-02T07:00:00.000Z")!

  @Test(
    "an rrule: reads back in libical's spelling, with DTSTART and the zone",
    arguments: [
      (
        "rrule:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;BYHOUR=9/Europe/Berlin",
        "rrule:FREQ=WEEKLY;INTERVAL=2;BYHOUR=9;BYDAY=TU;DTSTART=20261202T000000/Europe/Berlin"
      ),
      (
        "RRULE:freq=monthly;byday=-1fr;byhour=17;dtstart=20270101T000000;exdate=20270129,20270326T170000",
        "rrule:FREQ=MONTHLY;BYHOUR=17;BYDAY=-1FR;DTSTART=20270101T000000;"
          + "EXDATE=20270129,20270326T170000/Europe/Berlin"
      ),
      (
        "rrule:FREQ=DAILY;UNTIL=20270301;BYHOUR=9,17/UTC",
        "rrule:FREQ=DAILY;BYHOUR=9,17;DTSTART=20261202T000000;UNTIL=20270301/UTC"
      ),
    ])
  func canonical(_ typed: String, _ shown: String) throws {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    let rule = try Recurrence.parse(typed, defaultZone: berlin, now: Self.now, verb: .sayEvery)
    #expect(rule.description == shown)
    let again = try Recurrence.parse(
      shown, defaultZone: TimeZone(identifier: "UTC")!, now: Self.now + 86_400_000 * 40,
      verb: .sayEvery)
    #expect(again == rule, "round trip, whenever it is read again")
  }

  @Test(
    "an rrule: that cannot be read, fires more than once a minute or counts too far is BADTIME",
    arguments: [
      "rrule:FREQ=SECONDLY", "rrule:FREQ=DAILY;BYSECOND=0,30", "rrule:FREQ=FORTNIGHTLY",
      "rrule:BYDAY=MO", "rrule:FREQ=DAILY;COUNT=10001", "rrule:FREQ=DAILY;FOO=1",
      "rrule:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "rrule:FREQ=DAILY;RSCALE=HEBREW",
      // Refused before libical, which would look for most of a second.
      "rrule:FREQ=DAILY;BYDAY=MO;BYMONTHDAY=31;BYMONTH=2,4",
      "rrule:FREQ=DAILY;DTSTART=20270230T090000", "rrule:FREQ=DAILY;EXDATE=20270101T090000Z",
      "rrule:FREQ=DAILY;UNTIL=tomorrow", "rrule:FREQ=DAILY/Mars/Olympus",
      "rrule:FREQ=DAILY\u{0}", "rrule:FREQ=DAILY;BYHOUR=9\u{1B}[2J", "rrule:",
    ])
  func refused(_ word: String) {
    #expect {
      try Recurrence.parse(
        word, defaultZone: TimeZone(identifier: "Europe/Berlin")!, now: Self.now, verb: .sayEvery)
    } throws: { error in
      guard let error = error as? RequestError else { return false }
      return error.code == .badTime && error.text.contains("rrule:FREQ=WEEKLY")
    }
  }

  @Test(
    "the lists of a time of day come in order and once each, however they are given",
    arguments: [
      // libical 3.0 went through them as given: 17:00 before 09:00.
      (
        "rrule:FREQ=DAILY;BYHOUR=17,9,9/UTC", "BYHOUR=9,17",
        ["20261202T090000", "20261202T170000", "20261203T090000"]
      ),
      (
        "rrule:FREQ=MINUTELY;BYMINUTE=42,2,13/UTC", "BYMINUTE=2,13,42",
        ["20261202T070200", "20261202T071300", "20261202T074200"]
      ),
    ])
  func timeListsInOrder(_ word: String, _ spelled: String, _ expected: [String]) throws {
    let rule = try Recurrence.parse(
      word, defaultZone: TimeZone(identifier: "UTC")!, now: Self.now, verb: .sayEvery)
    #expect(rule.description.contains(spelled), "\(rule.description)")
    #expect(try Self.occurrences(word, zone: "UTC", count: 3, from: Self.now) == expected)
  }

  @Test(
    "INTERVAL with the frequency's own unit listed is BADTIME: libical would ignore the INTERVAL",
    arguments: [
      ("rrule:FREQ=MINUTELY;INTERVAL=7;BYMINUTE=2,13", "FREQ=HOURLY;BYMINUTE=0,30"),
      ("rrule:FREQ=HOURLY;INTERVAL=5;BYHOUR=9,10", "FREQ=DAILY;BYHOUR=9,17"),
    ])
  func intervalWithOwnUnit(_ word: String, _ advice: String) {
    #expect {
      try Recurrence.parse(
        word, defaultZone: TimeZone(identifier: "UTC")!, now: Self.now, verb: .sayEvery)
    } throws: { error in
      guard let error = error as? RequestError else { return false }
      return error.code == .badTime && error.text.contains("INTERVAL does not go with")
        && error.text.contains(advice)
    }
    // Without the INTERVAL, or with it and no list of its own unit, it is a rule.
    #expect(throws: Never.self) {
      _ = try Recurrence.parse(
        "rrule:FREQ=MINUTELY;BYMINUTE=2,13", defaultZone: TimeZone(identifier: "UTC")!,
        now: Self.now, verb: .sayEvery)
      _ = try Recurrence.parse(
        "rrule:FREQ=HOURLY;INTERVAL=5;BYMINUTE=30", defaultZone: TimeZone(identifier: "UTC")!,
        now: Self.now, verb: .sayEvery)
    }
  }

  @Test(
    "09:00 stays 09:00 local across both DST changes in Berlin, New York and Sydney",
    arguments: [
      // Berlin: summer time from 29 March 2026 to 25 October 2026.
      (
        "Europe/Berlin", "2026-03-20T00:00:00.000Z", "FREQ=WEEKLY;BYDAY=SA,MO;BYHOUR=9",
        ["20260321T090000", "20260323T090000", "20260328T090000", "20260330T090000"]
      ),
      // New York: from 8 March 2026, back on 1 November 2026.
      (
        "America/New_York", "2026-10-30T00:00:00.000Z", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
        ["20261030T013000", "20261031T013000", "20261101T013000", "20261102T013000"]
      ),
      // Sydney: summer time ends 5 April 2026 (03:00 back to 02:00) and
      // starts 4 October 2026 (02:00 to 03:00, so 02:30 comes at 03:00).
      (
        "Australia/Sydney", "2026-10-01T00:00:00.000Z", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        ["20261002T023000", "20261003T023000", "20261004T030000", "20261005T023000"]
      ),
      (
        "Australia/Sydney", "2026-04-03T00:00:00.000Z", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        ["20260404T023000", "20260405T023000", "20260406T023000"]
      ),
    ])
  func daylightSaving(_ zone: String, _ from: String, _ rule: String, _ expected: [String]) throws {
    let start = Timestamp(rfc3339: from)!
    let found = try Self.occurrences(
      "rrule:" + rule + "/" + zone, zone: zone, count: expected.count, from: start)
    #expect(found == expected)
  }
}

/// systemd calendar expressions (`OnCalendar=`, systemd.time(7)) as rules:
/// read into the RFC 5545 rule they mean, and as requests of several words.
@Suite("Recurrence: systemd calendar expressions")
struct CalendarExpressionTests {
  static let now = Timestamp(rfc3339: "2026-12-02T07:00:00.000Z")!

  @Test(
    "an expression comes at the local times systemd would fire it",
    arguments: [
      (
        "Mon..Fri *-*-* 09:00",
        ["20261202T090000", "20261203T090000", "20261204T090000", "20261207T090000"]
      ),
      (
        "*-*-* *:00/15",
        ["20261202T081500", "20261202T083000", "20261202T084500", "20261202T090000"]
      ),
      ("*-*~01 17:00", ["20261231T170000", "20270131T170000", "20270228T170000"]),
      ("Sat,Sun 10:30", ["20261205T103000", "20261206T103000", "20261212T103000"]),
      ("*-03-14 09:00 UTC", ["20270314T100000", "20280314T100000"]),
      (
        "*-*-1,15 9..11:00",
        ["20261215T090000", "20261215T100000", "20261215T110000", "20270101T090000"]
      ),
    ])
  func fires(_ expression: String, _ expected: [String]) throws {
    #expect(
      try CalendarRuleTests.occurrences(
        expression, zone: "Europe/Berlin", count: expected.count, from: Self.now) == expected)
  }

  @Test("an expression is shown as the rrule: it means, and reads back the same")
  func shown() throws {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    let rule = try Recurrence.parse(
      "Mon..Fri *-*-* 09:00 America/New_York", defaultZone: berlin, now: Self.now,
      verb: .sayEvery)
    #expect(
      rule.description
        == "rrule:FREQ=DAILY;BYSECOND=0;BYMINUTE=0;BYHOUR=9;BYDAY=MO,TU,WE,TH,FR;"
        + "DTSTART=20261202T000000/America/New_York")
    #expect(try Recurrence.parse(rule.description, defaultZone: berlin, verb: .sayEvery) == rule)
  }

  @Test(
    "an expression that cannot be read, has a year or fires more than once a minute is BADTIME",
    arguments: [
      "*-*-* *:*:*", "*-*-* 09:00:00,30", "2027-*-* 09:00", "Mon..Fri *-*-* 25:00",
      "*-13-01 09:00", "Mon..Fri nonsense", "*-*-* 9..8:00", "*-*-* 09:00/0",
    ])
  func refused(_ expression: String) {
    #expect {
      try Recurrence.parse(
        expression, defaultZone: TimeZone(identifier: "UTC")!, now: Self.now, verb: .sayEvery)
    } throws: { ($0 as? RequestError)?.code == .badTime }
  }

  @Test("SAYEVERY and RESCHEDULE take an expression of several words; the text follows it")
  func requests() {
    #expect(
      RequestParser.parse("SAYEVERY #r Mon..Fri *-*-* 09:00 Europe/Berlin stand-up now")
        == .success(
          .sayEvery(
            Target("#r")!, rule: "Mon..Fri *-*-* 09:00 Europe/Berlin", text: "stand-up now")))
    #expect(
      RequestParser.parse("SAYEVERY #r *-*-* *:00/15 :12:00 is lunch")
        == .success(.sayEvery(Target("#r")!, rule: "*-*-* *:00/15", text: "12:00 is lunch")))
    #expect(
      RequestParser.parse("RESCHEDULE 7 Sat,Sun 10:30")
        == .success(.reschedule(MessageID("7")!, when: "Sat,Sun 10:30")))
    #expect(
      RequestParser.parse("RESCHEDULE 7 09:00")
        == .success(.reschedule(MessageID("7")!, when: "09:00")),
      "a plain time stays a <when>")
    #expect(Recurrence.isRule("Mon..Fri 09:00") && !Recurrence.isRule("09:00"))
  }
}

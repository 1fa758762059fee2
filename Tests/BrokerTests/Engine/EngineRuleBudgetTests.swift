import Foundation
import LineProtocol
import Synchronization
import TestSupport
import Testing

@testable import Broker

/// What a rule may cost (chatbroker(7), "Series" and Limits), on virtual
/// time: no request or timer step expands rules beyond one budget of
/// libical's steps. A rule that never matches is BADTIME at once, one too
/// sparse for its FREQ is LIMIT, on every path that expands one, and a
/// series the journal kept that is too sparse goes out once and is paused.
@Suite("Engine: what a rule may cost")
struct EngineRuleBudgetTests {
  /// Log lines, gathered from the engine's logger.
  final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var logger: Logger { Logger(sink: { line in self.lines.withLock { $0.append(line) } }) }
    var all: [String] { lines.withLock { $0 } }
  }

  static func code(_ reply: [String]) -> String {
    guard let last = reply.last, last.hasPrefix("ERR ") else { return reply.last ?? "" }
    return String(last.split(separator: " ")[2])
  }

  static let everyMinute = (0...59).map(String.init).joined(separator: ",")
  static let everyHour = (0...23).map(String.init).joined(separator: ",")

  /// Rules and the code SAYEVERY answers them with.
  static let rules: [(String, String)] = [
    // The tester's: libical walked them to the year 2582.
    ("rrule:FREQ=HOURLY;BYYEARDAY=1;BYMONTH=2", "BADTIME"),
    ("rrule:FREQ=MINUTELY;BYYEARDAY=1;BYMONTH=2", "BADTIME"),
    ("rrule:FREQ=MINUTELY;BYMONTH=11;BYMONTHDAY=1", "LIMIT"),
    // chatfuzz's: a DAILY rule's BYDAY filters by plain weekdays only.
    ("rrule:FREQ=DAILY;BYDAY=+3SA,53TH,-5TH,+3SU;BYMINUTE=" + everyMinute, "BADTIME"),
    (
      "rrule:BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;BYYEARDAY=323,324,-25;BYHOUR=" + everyHour
        + ";FREQ=MINUTELY", "LIMIT"
    ),
    // libical lays out months and years without a day inside one call.
    ("rrule:FREQ=MONTHLY;BYMONTHDAY=31;BYSETPOS=2", "BADTIME"),
    ("rrule:FREQ=MONTHLY;BYSETPOS=32", "BADTIME"),
    ("rrule:FREQ=MONTHLY;INTERVAL=12;BYMONTH=3", "BADTIME"),
    ("rrule:FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYSETPOS=2", "BADTIME"),
    // libical 3.0 reads out of bounds for week -53 and crashed the broker
    // (chatfuzz's dirty-read run on the web door found it): weeks from the
    // end of the year are refused.
    ("rrule:FREQ=YEARLY;BYWEEKNO=-53", "BADTIME"),
    ("rrule:FREQ=YEARLY;BYWEEKNO=20", "BADTIME"),
    ("rrule:FREQ=YEARLY;BYWEEKNO=20,30;BYSECOND=0", "BADTIME"),
    ("rrule:FREQ=YEARLY;DTSTART=25820101;BYWEEKNO=-32,-53,29,-13;BYSECOND=0", "BADTIME"),
    ("rrule:FREQ=YEARLY;BYWEEKNO=-1;BYDAY=MO", "BADTIME"),
    // A leap day stepped through day by day: up to 8 years of days.
    ("rrule:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", "LIMIT"),
    ("rrule:FREQ=MINUTELY;BYHOUR=9;BYDAY=MO,WE,FR", "LIMIT"),
    // Each limit crossed: a COUNT's occurrences are found from DTSTART,
    // one step each; weekdays every minute leave two days (2880 steps)
    // between Friday and Monday, six days one (1440); a weekday the
    // INTERVAL never reaches exhausts the window the budget pays for.
    ("rrule:FREQ=DAILY;COUNT=1400;BYHOUR=9", "OK"),
    ("rrule:FREQ=DAILY;COUNT=1600;BYHOUR=9", "LIMIT"),
    ("rrule:FREQ=MINUTELY;BYDAY=MO,TU,WE,TH,FR,SA", "OK"),
    ("rrule:FREQ=MINUTELY;BYDAY=MO,TU,WE,TH,FR", "LIMIT"),
    ("rrule:FREQ=DAILY;INTERVAL=7;BYDAY=MO;DTSTART=20261207T090000", "OK"),
    ("rrule:FREQ=DAILY;INTERVAL=7;BYDAY=MO;DTSTART=20261201T090000", "LIMIT"),
    // Calendar expressions are rules too.
    ("Mon *-11-01..07 *:*", "OK"),
    // Found within the budget, but more than the horizon ahead.
    ("*-02-29 09:00", "TOOFAR"),
    // What they should be: cheap.
    ("rrule:FREQ=YEARLY;BYMONTH=11;BYMONTHDAY=1;BYHOUR=9", "OK"),
    ("rrule:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9", "TOOFAR"),
    ("rrule:FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR", "OK"),
    ("rrule:FREQ=MINUTELY;BYHOUR=9", "OK"),
    ("rrule:FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9;BYMINUTE=" + everyMinute, "OK"),
  ]

  @Test(
    "SAYEVERY: a rule that never matches is BADTIME, one too sparse for its FREQ is LIMIT, within one budget",
    arguments: rules)
  func sayEvery(rule: String, code: String) {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    let reply = harness.send(alice, "SAYEVERY #a \(rule) :x")
    #expect(
      code == "OK" ? reply.last?.hasPrefix("OK SAYEVERY ") == true : Self.code(reply) == code,
      "\(reply)")
    if code == "LIMIT" {
      #expect(
        reply.last?.contains("needs more than the 1500 steps of expansion a request may take")
          == true)
      #expect(reply.last?.contains("use a coarser FREQ with BY lists") == true)
    }
    #expect(harness.engine.expansion.spent <= RecurrenceBudget.stepsPerRequest)
    #expect(harness.send(alice, "SCHEDULED").count == (code == "OK" ? 2 : 1))
  }

  @Test("RESCHEDULE to a rule too sparse for its FREQ is LIMIT, and the series keeps its rule")
  func rescheduleToSparseRule() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYEVERY #a daily@09:00 :x")
    let reply = harness.send(alice, "RESCHEDULE 1 rrule:FREQ=MINUTELY;BYMONTH=11;BYMONTHDAY=1")
    #expect(Self.code(reply) == "LIMIT", "\(reply)")
    #expect(harness.send(alice, "SCHEDULED").first?.contains(" daily@09:00/") == true)
    let never = harness.send(alice, "RESCHEDULE 1 rrule:FREQ=HOURLY;BYYEARDAY=1;BYMONTH=2")
    #expect(Self.code(never) == "BADTIME", "\(never)")
  }

  @Test("sched|bot every with a rule too sparse for its FREQ is told LIMIT, on IRC")
  func ircEvery() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let refused = irc.send(
      alice, "PRIVMSG sched|bot :every rrule:FREQ=MINUTELY;BYMONTH=11;BYMONTHDAY=1 #ops x")
    #expect(refused.last?.contains(" :SAYEVERY LIMIT: ") == true, "\(refused)")
    #expect(refused.last?.contains("needs more than the 1500 steps") == true, "\(refused)")
  }

  /// A series as a journal written before there was a budget kept it:
  /// every minute of 1 November, due at 23:58 Berlin time, the next day
  /// with one a year away.
  static func storedSparseSeries(log: Logger = Logger(sink: nil)) throws -> (
    EngineHarness, ConnectionID
  ) {
    let harness = EngineHarness(clock: TestClock("2027-11-01T22:57:00.000Z"), log: log)
    let rule = try Recurrence.parse(
      "rrule:FREQ=MINUTELY;BYMONTH=11;BYMONTHDAY=1;DTSTART=20261101T000000/Europe/Berlin",
      defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery, budget: nil)
    let pending = PendingMessage(
      id: MessageID(value: 1), target: Target("#a")!, author: "alice",
      created: Timestamp(rfc3339: "2026-10-01T00:00:00.000Z")!,
      due: Timestamp(rfc3339: "2027-11-01T22:58:00.000Z")!, text: "minute")
    for record: JournalRecord in [
      .room(RoomName("#a")!, created: pending.created), .series(pending, Series(rule: rule)),
    ] {
      harness.engine.replay(record)
      harness.journal.records.append(record)
    }
    harness.engine.finishReplay()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    return (harness, alice)
  }

  @Test("a kept series too sparse for its FREQ is reported at start-up, and kept")
  func reportedAtStartUp() throws {
    let log = LogLines()
    let (harness, alice) = try Self.storedSparseSeries(log: log.logger)
    let reported = log.all.filter { $0.contains("msg=\"series rule over budget\"") }
    #expect(reported.count == 1, "\(log.all)")
    #expect(reported.first?.contains("series=1 user=alice steps=1500 rule=") == true)
    #expect(
      harness.send(alice, "SCHEDULED").first?.hasPrefix("SCHED 1 #a 2027-11-01T22:58") == true)
  }

  @Test(
    "SCHEDULED NEXT, SKIP, REPLACE, RESCHEDULE skip and resume are LIMIT for a kept rule too sparse for its FREQ"
  )
  func requestsNeedingTheSparseNext() throws {
    let (harness, alice) = try Self.storedSparseSeries()
    // Its next is known without expanding it; any other is not sought.
    #expect(harness.send(alice, "SCHEDULED 1 NEXT 1").count == 2)
    let next = harness.send(alice, "SCHEDULED 1 NEXT 2")
    #expect(Self.code(next) == "LIMIT", "\(next)")
    #expect(
      next.last?.hasPrefix(
        "ERR SCHEDULED LIMIT :this rule needs more than the 1500 steps of expansion") == true)
    for request in [
      "SKIP 1 2027-11-01T22:58Z", "REPLACE 1 2027-11-01T22:58Z +1h :instead", "RESCHEDULE 1 skip",
    ] {
      let reply = harness.send(alice, request)
      #expect(Self.code(reply) == "LIMIT", "\(request): \(reply)")
    }
    harness.send(alice, "RESCHEDULE 1 pause")
    #expect(Self.code(harness.send(alice, "RESCHEDULE 1 resume")) == "LIMIT")
    #expect(harness.engine.expansion.spent <= RecurrenceBudget.stepsPerRequest)
  }

  @Test(
    "a kept series whose next occurrence costs more than the budget goes out, then is paused and said so"
  )
  func pausedAtItsTimerStep() throws {
    let log = LogLines()
    let (harness, alice) = try Self.storedSparseSeries(log: log.logger)
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    harness.advance(to: "2027-11-01T22:58:00.000Z")
    #expect(
      harness.output.take(reader) == ["MSG #a 2 2027-11-01T22:58:00.000Z alice SERIES 1 :minute"])
    let told = harness.output.take(alice)
    #expect(
      told.contains {
        $0.hasPrefix("SCHED 1 #a 2027-11-01T22:58:00.000Z ") && $0.hasSuffix(",paused :minute")
      }, "\(told)")
    let paused = log.all.filter { $0.contains("msg=\"series paused\"") }
    #expect(
      paused.count == 1 && paused[0].contains("series=1 user=alice reason=\"over budget\""),
      "\(log.all)")
    harness.advance(to: "2027-11-01T22:59:00.000Z")
    #expect(harness.output.take(reader) == [], "paused")
    // Kept as paused: a restart neither delivers nor expands it.
    let restarted = harness.restarted()
    #expect(
      restarted.send(restarted.connect("alice"), "SCHEDULED").first?.contains(",paused :minute")
        == true)
    // Resuming needs the same search: LIMIT; a cheaper rule resumes it.
    #expect(Self.code(harness.send(alice, "RESCHEDULE 1 resume")) == "LIMIT")
    #expect(
      harness.send(alice, "RESCHEDULE 1 rrule:FREQ=YEARLY;BYMONTH=11;BYMONTHDAY=1;BYHOUR=9").last
        == "OK RESCHEDULE 1 2028-11-01T08:00:00.000Z")
  }

  @Test("many single messages due at once are delivered in slices too, all of them, in order")
  func slicedDeliveries() {
    var limits = Limits()
    limits.pendingPerUser = 3000
    let harness = EngineHarness(limits: limits)
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    for index in 0..<2000 { harness.send(alice, "SAYAT #a 19:00 :\(index)") }
    harness.clock.set("2026-11-30T18:00:00.000Z")
    harness.engine.timerFired()
    let first = harness.output.take(reader).count
    #expect(first > 0 && first < 2000, "\(first) in the first step")
    #expect(harness.output.armed == harness.clock.now, "the rest at once, in the next turn")
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    let texts = harness.output.take(reader).map { String($0.split(separator: ":").last ?? "") }
    #expect(first + texts.count == 2000)
    #expect(texts.first == String(first) && texts.last == "1999", "in order")
  }

  @Test("many series due at once are delivered in slices of one budget each, all of them, in order")
  func slicedTimerSteps() {
    var limits = Limits()
    limits.pendingPerUser = 2000
    let harness = EngineHarness(limits: limits)
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    for index in 0..<600 {
      harness.send(alice, "SAYEVERY #a rrule:FREQ=DAILY;BYHOUR=9 :\(index)")
    }
    harness.clock.set("2026-12-01T08:00:00.000Z")
    // One timer step: as many as one budget finds the next occurrence of.
    harness.engine.timerFired()
    let first = harness.output.take(reader).count
    #expect(first > 0 && first < 600, "\(first) in the first step")
    #expect(harness.engine.expansion.spent <= RecurrenceBudget.stepsPerRequest)
    #expect(harness.output.armed == harness.clock.now, "the rest at once, in the next turn")
    harness.advance(to: "2026-12-01T08:00:00.000Z")
    let texts = (harness.output.take(reader)).map {
      $0.split(separator: ":").last.map(String.init) ?? ""
    }
    #expect(first + texts.count == 600)
    #expect(texts.first == String(first), "in order")
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-12-02T08:00:00.000Z"))
  }
}

/// The smaller promises around series, on virtual time (chatbroker(7),
/// SKIP and RESCHEDULE, and RFC 5545's COUNT or UNTIL).
@Suite("Engine: the last occurrence, send now, COUNT or UNTIL")
struct EngineSeriesEdgeTests {
  @Test("SKIP of the last occurrence of an until: series is PAST, not only when it is the next")
  func skipLastOfUntil() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYEVERY #a daily@09:00,until:2026-12-03 :x")
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 5").dropLast() == [
        "SCHED 1 #a 2026-12-01T08:00:00.000Z 2026-11-30T17:00:00.000Z daily@09:00/Europe/Berlin,until:2026-12-03 :x",
        "SCHED 1 #a 2026-12-02T08:00:00.000Z 2026-11-30T17:00:00.000Z daily@09:00/Europe/Berlin,until:2026-12-03 :x",
        "SCHED 1 #a 2026-12-03T08:00:00.000Z 2026-11-30T17:00:00.000Z daily@09:00/Europe/Berlin,until:2026-12-03 :x",
      ])
    let last = harness.send(alice, "SKIP 1 2026-12-03T08:00Z")
    #expect(
      last.last?.hasPrefix(
        "ERR SKIP PAST :2026-12-03T08:00:00.000Z is the last occurrence of series 1;") == true,
      "\(last)")
    let replaced = harness.send(alice, "REPLACE 1 2026-12-03T08:00Z 2026-12-03T10:00Z :y")
    #expect(replaced.last?.hasPrefix("ERR REPLACE PAST :") == true, "\(replaced)")
    #expect(
      harness.send(alice, "SKIP 1 2026-12-02T08:00Z").last == "OK SKIP 1 2026-12-01T08:00:00.000Z")
  }

  @Test("an rrule with both COUNT and UNTIL is BADTIME (RFC 5545)")
  func countAndUntil() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let reply = harness.send(
      alice, "SAYEVERY #a rrule:FREQ=DAILY;COUNT=3;UNTIL=20270101;BYHOUR=9 :x")
    #expect(
      reply.last?.hasPrefix(
        "ERR SAYEVERY BADTIME :a rule ends by COUNT or by UNTIL, not both (RFC 5545)") == true,
      "\(reply)")
    #expect(
      harness.send(alice, "SAYEVERY #a rrule:FREQ=DAILY;COUNT=3;BYHOUR=9 :x").last?.hasPrefix(
        "OK SAYEVERY ") == true)
  }

  @Test("RESCHEDULE <series> now: the occurrence sent is not listed again, nor sent again")
  func sendNowOnce() {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a daily@09:00 :daily")
    harness.send(alice, "RESCHEDULE 1 now")
    harness.engine.timerFired()
    #expect(harness.output.take(reader).count == 1)
    let next = harness.send(alice, "SCHEDULED 1 NEXT 1")
    #expect(next.first?.hasPrefix("SCHED 1 #a 2026-12-02T08:00:00.000Z ") == true, "\(next)")
    harness.advance(to: "2026-12-01T08:00:00.000Z")
    #expect(harness.output.take(reader) == [])
    harness.advance(to: "2026-12-02T08:00:00.000Z")
    #expect(harness.output.take(reader).count == 1)
  }
}

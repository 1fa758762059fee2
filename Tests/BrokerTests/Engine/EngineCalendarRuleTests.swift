import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// `rrule:` series (chatbroker(7), "Series") on virtual time: due at the
/// local times their rule names across DST, and the same after a restart,
/// a compaction and a failed sync.
@Suite("Engine: RFC 5545 rrule: series on virtual time")
struct EngineCalendarRuleTests {
  static func texts(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix("MSG ") }.map { String($0[$0.range(of: " :")!.upperBound...]) }
  }

  /// The journal's records as JSON lines and read back, as a compacted
  /// journal is written and replayed (chatbroker(8), JOURNAL FORMAT).
  /// `prepare` runs before the replay, as the daemon's set-up does.
  static func compacted(_ harness: EngineHarness, prepare: (Engine) -> Void = { _ in }) throws
    -> EngineHarness
  {
    let copy = EngineHarness(limits: harness.engine.limits, clock: harness.clock)
    prepare(copy.engine)
    var records: [JournalRecord] = []
    try harness.engine.snapshot().forEachRecord { record in
      let line = Array(record.jsonLine.dropLast())  // without its newline
      records.append(try line.withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) })
    }
    for record in records { copy.engine.replay(record) }
    copy.journal.records = records
    copy.engine.finishReplay()
    return copy
  }

  @Test("every other Tuesday at 09:00 Berlin time: on the local clock across DST and restarts")
  func everyOtherTuesday() throws {
    // Wednesday 17 March 2027; Berlin goes to summer time on the 28th.
    let harness = EngineHarness(clock: TestClock("2027-03-17T12:00:00.000Z"))
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #team")
    let alice = harness.connect("alice")
    let rule =
      "rrule:FREQ=WEEKLY;INTERVAL=2;BYHOUR=9;BYDAY=TU;DTSTART=20270317T000000/Europe/Berlin"
    #expect(
      harness.send(
        alice, "SAYEVERY #team rrule:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;BYHOUR=9/Europe/Berlin :1:1")
        == ["OK SAYEVERY 1 2027-03-30T07:00:00.000Z \(rule)"])
    // The week of DTSTART has no Tuesday left; two weeks on, 09:00 CEST.
    harness.advance(to: "2027-03-30T06:59:59.999Z")
    #expect(harness.output.take(reader) == [])
    harness.advance(to: "2027-03-30T07:00:00.000Z")
    #expect(Self.texts(harness.output.take(reader)) == ["1:1"])
    #expect(harness.output.armed == Timestamp(rfc3339: "2027-04-13T07:00:00.000Z"))
    for again in [harness.restarted(), try Self.compacted(harness)] {
      #expect(
        again.send(again.connect("alice"), "SCHEDULED").first
          == "SCHED 1 #team 2027-04-13T07:00:00.000Z 2027-03-17T12:00:00.000Z \(rule) :1:1")
      again.engine.timerFired()
      #expect(again.output.armed == Timestamp(rfc3339: "2027-04-13T07:00:00.000Z"))
    }
  }

  @Test("the last Friday at 17:00 in Sydney, twice: summer time ends in between")
  func lastFridaySydney() throws {
    let harness = EngineHarness(clock: TestClock("2026-03-20T00:00:00.000Z"))
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    #expect(
      harness.send(
        alice,
        "SAYEVERY #a rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;COUNT=2/Australia/Sydney :wrap-up"
      )
      .last?.hasPrefix("OK SAYEVERY 1 2026-03-27T06:00:00.000Z rrule:FREQ=MONTHLY;COUNT=2;") == true
    )
    harness.advance(to: "2026-03-27T06:00:00.000Z")
    // 17:00 AEST (+10) after 5 April.
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-04-24T07:00:00.000Z"))
    let restarted = try Self.compacted(harness)
    restarted.advance(to: "2026-04-24T07:00:00.000Z")
    #expect(
      restarted.send(restarted.connect("bob"), "HISTORY #a").suffix(3) == [
        "HIST #a 2 2026-03-27T06:00:00.000Z alice SERIES 1 :wrap-up",
        "HIST #a 3 2026-04-24T07:00:00.000Z alice SERIES 1 :wrap-up",
        "OK HISTORY #a 2",
      ])
    #expect(
      restarted.send(restarted.connect("alice"), "SCHEDULED") == ["OK SCHEDULED 0"],
      "COUNT=2 ended it")
  }

  @Test("09:00 in New York on weekdays with an exception date, and a refused rule loses nothing")
  func newYorkWithException() {
    let harness = EngineHarness(
      clock: TestClock("2026-11-25T15:00:00.000Z", timeZone: "America/New_York"))
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    let refused = harness.send(alice, "SAYEVERY #a rrule:FREQ=SECONDLY :too often")
    #expect(
      refused.first?.hasPrefix("ERR SAYEVERY BADTIME :a series may come at most once a minute")
        == true)
    // 10:00 on Wednesday: Thanksgiving, Thursday 26 November, is left out,
    // so Friday; no zone given: the broker's.
    #expect(
      harness.send(
        alice, "SAYEVERY #a rrule:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;EXDATE=20261126 :hi")
        == [
          "OK SAYEVERY 1 2026-11-27T14:00:00.000Z rrule:FREQ=WEEKLY;BYHOUR=9;BYDAY=MO,TU,WE,TH,FR;"
            + "DTSTART=20261125T000000;EXDATE=20261126/America/New_York"
        ])
    #expect(harness.send(alice, "SCHEDULED").last == "OK SCHEDULED 1")
  }
}

/// Managing a series (chatbroker(7), SCHEDULED and RESCHEDULE): its next
/// due instants, and sending a pending line now.
@Suite("Engine: SCHEDULED <id> NEXT and RESCHEDULE <id> now")
struct EngineSeriesManagementTests {
  @Test("SCHEDULED <id> NEXT n lists the next n due instants, across DST, and no further")
  func next() {
    // Friday 23 October 2026; Berlin leaves summer time on the 25th.
    let harness = EngineHarness(clock: TestClock("2026-10-23T12:00:00.000Z"))
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a weekdays@09:00,count:3 :stand-up")
    harness.send(alice, "SAYAT #a 2026-10-24T10:00Z once")
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 5").map { $0.split(separator: " ").prefix(4).last! }
        == [
          "2026-10-26T08:00:00.000Z", "2026-10-27T08:00:00.000Z", "2026-10-28T08:00:00.000Z",
          "3",
        ], "count:3 ends it after three")
    #expect(harness.send(alice, "SCHEDULED 2 NEXT 2").count == 2, "a single message: one line")
    #expect(
      harness.send(harness.connect("bob"), "SCHEDULED 1 NEXT 2")
        == ["ERR SCHEDULED NOSUCHMSG :you have no pending message or series 1"],
      "another's series is as if it never existed")
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 101")
        == ["ERR SCHEDULED LIMIT :NEXT takes at most 100 occurrences"])
    #expect(harness.send(alice, "SCHEDULED 1 NEXT 100").last == "OK SCHEDULED 3")
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 0").first?.hasPrefix("ERR SCHEDULED SYNTAX") == true)
  }

  @Test("RESCHEDULE <id> now sends a pending line at once; a series then goes on with its rule")
  func sendNow() {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    harness.send(alice, "SAYAT #a 2026-11-30T20:00Z later")
    harness.send(alice, "SAYEVERY #a daily@09:00 :daily")
    #expect(
      harness.send(alice, "RESCHEDULE 1 now").last == "OK RESCHEDULE 1 2026-11-30T17:00:00.000Z")
    #expect(harness.output.armed == harness.clock.now)
    harness.engine.timerFired()
    #expect(harness.output.take(reader) == ["MSG #a 1 2026-11-30T17:00:00.000Z alice :later"])
    harness.send(alice, "RESCHEDULE 2 NOW")
    harness.engine.timerFired()
    #expect(
      harness.output.take(reader) == ["MSG #a 3 2026-11-30T17:00:00.000Z alice SERIES 2 :daily"])
    // What went out now was tomorrow's 09:00 (chatbroker(7), RESCHEDULE:
    // "for a series, its next occurrence, after which the rule goes on"):
    // it does not come a second time.
    #expect(
      harness.send(alice, "SCHEDULED").first?.hasPrefix("SCHED 2 #a 2026-12-02T08:00:00.000Z")
        == true, "then the day after tomorrow at 09:00")
    #expect(
      harness.send(alice, "SCHEDULED 2 NEXT 1").first?.hasPrefix(
        "SCHED 2 #a 2026-12-02T08:00:00.000Z") == true)
    harness.advance(to: "2026-12-01T08:00:00.000Z")
    #expect(harness.output.take(reader) == [], "nothing at tomorrow's 09:00")
    let restarted = harness.restarted()
    #expect(restarted.send(restarted.connect("bob"), "HISTORY #a").count == 3, "each once")
  }

  @Test("RESCHEDULE <id> skip leaves out the next occurrence, also after a restart")
  func skip() {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a daily@09:00,count:2 :daily")
    harness.send(alice, "SAYAT #a 2026-11-30T20:00Z once")
    #expect(
      harness.send(alice, "RESCHEDULE 1 skip").last == "OK RESCHEDULE 1 2026-12-02T08:00:00.000Z")
    #expect(
      harness.send(alice, "RESCHEDULE 2 skip").first?.hasPrefix(
        "ERR RESCHEDULE BADTIME :2 is a single") == true)
    harness.send(alice, "SAYEVERY #a daily@10:00,until:2026-12-01 :ends")
    #expect(
      harness.send(alice, "RESCHEDULE 3 skip").first?.hasPrefix(
        "ERR RESCHEDULE PAST :series 3 has no occurrence after its next one") == true)
    let restarted = harness.restarted()
    restarted.advance(to: "2026-11-30T20:00:00.000Z")
    restarted.advance(to: "2026-12-01T08:00:00.000Z")
    restarted.advance(to: "2026-12-01T09:00:00.000Z")
    restarted.advance(to: "2026-12-02T08:00:00.000Z")
    #expect(
      Self.times(restarted.send(restarted.connect("bob"), "HISTORY #a")) == [
        "2026-11-30T20:00:00.000Z", "2026-12-01T09:00:00.000Z", "2026-12-02T08:00:00.000Z",
      ], "daily@09:00 on 1 December skipped")
    // The skipped one did not count: count:2 has one more to come.
    let author = restarted.connect("alice")
    #expect(
      restarted.send(author, "RESCHEDULE 1 skip").last == "OK RESCHEDULE 1 2026-12-04T08:00:00.000Z"
    )
  }

  static func times(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix("HIST ") }.map { String($0.split(separator: " ")[3]) }
  }
}

/// Pausing and resuming a series (chatbroker(7), RESCHEDULE): journaled as
/// the series record with its new state.
@Suite("Engine: RESCHEDULE <id> pause and resume")
struct EnginePauseTests {
  @Test("a paused series never fires, stays paused across a restart and a compaction, and resumes")
  func pauseAndResume() throws {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a daily@09:00 :daily")
    let paused = harness.send(alice, "RESCHEDULE 1 pause")
    #expect(
      paused.first
        == "SCHED 1 #a 2026-12-01T08:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "daily@09:00/Europe/Berlin,paused :daily")
    #expect(paused.last == "OK RESCHEDULE 1 2026-12-01T08:00:00.000Z")
    #expect(harness.output.armed == nil, "nothing to wake up for")
    harness.advance(to: "2026-12-01T08:00:00.000Z")
    harness.engine.timerFired()
    #expect(harness.output.take(reader) == [])
    harness.clock.set("2026-12-02T12:00:00.000Z")
    for again in [harness.restarted(), try EngineCalendarRuleTests.compacted(harness)] {
      again.engine.timerFired()
      #expect(again.send(again.connect("bob"), "HISTORY #a") == ["OK HISTORY #a 0"])
      #expect(again.send(again.connect("alice"), "SCHEDULED").first?.contains(",paused :") == true)
    }
    #expect(
      harness.send(alice, "RESCHEDULE 1 pause").last == "OK RESCHEDULE 1 2026-12-01T08:00:00.000Z",
      "again: no change")
    // Resumed at 13:00 on the 2nd: the next 09:00 is the 3rd's.
    let resumed = harness.send(alice, "RESCHEDULE 1 resume")
    #expect(resumed.last == "OK RESCHEDULE 1 2026-12-03T08:00:00.000Z")
    #expect(resumed.first?.contains(",paused") == false)
    #expect(
      harness.send(alice, "RESCHEDULE 1 resume").first
        == "ERR RESCHEDULE BADTIME :series 1 is not paused")
    let restarted = harness.restarted()
    restarted.advance(to: "2026-12-03T08:00:00.000Z")
    #expect(restarted.send(restarted.connect("bob"), "HISTORY #a").count == 2, "fires once resumed")
    harness.send(alice, "SAYAT #a +1h single")
    #expect(
      harness.send(alice, "RESCHEDULE 2 pause").first?.hasPrefix(
        "ERR RESCHEDULE BADTIME :2 is a single") == true)
  }
}

import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// One occurrence of a series changed on its own (chatbroker(7), `SKIP`
/// and `REPLACE`), and the series id on each occurrence's `MSG` and `HIST`
/// (chatbroker(7), `MSG`), on virtual time across DST, restarts from the
/// journal file, compaction and a failed sync.
@Suite("Engine: SKIP and REPLACE one occurrence, SERIES on MSG and HIST")
struct EngineSeriesExceptionTests {
  /// Every record of the journal written as its JSON line and read back,
  /// as a restart reads the file (chatbroker(8), JOURNAL FORMAT).
  /// `prepare` runs before the replay, as the daemon's set-up does
  /// (``Engine/federate(_:)``).
  static func reread(_ harness: EngineHarness, prepare: (Engine) -> Void = { _ in }) throws
    -> EngineHarness
  {
    let copy = EngineHarness(limits: harness.engine.limits, clock: harness.clock)
    prepare(copy.engine)
    let records = try harness.journal.records.map { record in
      let line = Array(record.jsonLine.dropLast())
      return try line.withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
    }
    for record in records { copy.engine.replay(record) }
    copy.journal.records = records
    copy.engine.finishReplay()
    return copy
  }

  /// The due instants of `SCHEDULED <id> NEXT <n>`, with the id of each line.
  static func upcoming(_ harness: EngineHarness, _ connection: ConnectionID, _ id: String, _ n: Int)
    -> [String]
  {
    harness.send(connection, "SCHEDULED \(id) NEXT \(n)").dropLast().map {
      let words = $0.split(separator: " ")
      return "\(words[1]) \(words[3])"
    }
  }

  @Test("SKIP leaves out one weekday stand-up in Berlin; the next one after DST ends comes")
  func skipAcrossDSTBerlin() throws {
    // Thursday 22 October 2026; Berlin leaves summer time on the 25th.
    let harness = EngineHarness(clock: TestClock("2026-10-22T12:00:00.000Z"))
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #standup")
    #expect(
      harness.send(alice, "SAYEVERY #standup weekdays@09:00/Europe/Berlin :stand-up").last
        == "OK SAYEVERY 1 2026-10-23T07:00:00.000Z weekdays@09:00/Europe/Berlin")
    // Friday's is the next one; skipping it moves the series to Monday,
    // 09:00 CET, 08:00Z.
    #expect(
      harness.send(alice, "SKIP 1 2026-10-23T09:00+02:00") == [
        "SCHED 1 #standup 2026-10-26T08:00:00.000Z 2026-10-22T12:00:00.000Z "
          + "weekdays@09:00/Europe/Berlin :stand-up",
        "OK SKIP 1 2026-10-26T08:00:00.000Z",
      ])
    // Tuesday's too, named as SCHEDULED shows it; Monday stays next.
    #expect(
      harness.send(alice, "SKIP 1 2026-10-27T08:00:00.000Z").last
        == "OK SKIP 1 2026-10-26T08:00:00.000Z")
    #expect(
      Self.upcoming(harness, alice, "1", 3) == [
        "1 2026-10-26T08:00:00.000Z", "1 2026-10-28T08:00:00.000Z", "1 2026-10-29T08:00:00.000Z",
      ])
    // Not an occurrence, already skipped, past, a single message: refused.
    let between = harness.send(alice, "SKIP 1 2026-10-26T08:30:00.000Z")
    #expect(
      between.first?.hasPrefix(
        "ERR SKIP BADTIME :\"2026-10-26T08:30:00.000Z\" is 2026-10-26T08:30:00.000Z, not a "
          + "coming occurrence of series 1; its next are 2026-10-26T08:00:00.000Z, "
          + "2026-10-28T08:00:00.000Z, 2026-10-29T08:00:00.000Z") == true, "\(between)")
    #expect(
      harness.send(alice, "SKIP 1 2026-10-27T08:00:00.000Z").first?.hasPrefix("ERR SKIP BADTIME")
        == true)
    #expect(
      harness.send(alice, "SKIP 1 2026-10-21T07:00:00.000Z").first?.hasPrefix("ERR SKIP PAST")
        == true)
    let single = okID(harness.send(alice, "SAYAT #standup +1h :once"))
    #expect(
      harness.send(alice, "SKIP \(single) 2026-10-22T13:00:00.000Z")
        == [
          "ERR SKIP BADTIME :\(single) is a single message, not a series: RESCHEDULE, EDIT or "
            + "CANCEL it instead"
        ])
    #expect(
      harness.send(bob, "SKIP 1 2026-10-26T08:00:00.000Z").first?.hasPrefix("ERR SKIP NOSUCHMSG")
        == true)

    harness.advance(to: "2026-10-22T13:00:00.000Z")
    _ = harness.output.take(bob)
    harness.advance(to: "2026-10-23T07:00:00.000Z")
    #expect(harness.output.take(bob) == [], "Friday's was skipped")
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-10-26T08:00:00.000Z"))
    harness.advance(to: "2026-10-26T08:00:00.000Z")
    #expect(
      harness.output.take(bob) == [
        "MSG #standup 3 2026-10-26T08:00:00.000Z alice SERIES 1 :stand-up"
      ])

    // From the file and compacted alike: Tuesday stays skipped, and the
    // history keeps the series id.
    for restarted in [try Self.reread(harness), try EngineCalendarRuleTests.compacted(harness)] {
      let reader = restarted.connect("bob")
      #expect(
        restarted.send(reader, "HISTORY #standup").suffix(2) == [
          "HIST #standup 3 2026-10-26T08:00:00.000Z alice SERIES 1 :stand-up",
          "OK HISTORY #standup 2",
        ])
      #expect(
        Self.upcoming(restarted, restarted.connect("alice"), "1", 2) == [
          "1 2026-10-28T08:00:00.000Z", "1 2026-10-29T08:00:00.000Z",
        ])
      restarted.send(reader, "JOIN #standup")
      restarted.advance(to: "2026-10-27T08:00:00.000Z")
      #expect(restarted.output.take(reader) == [])
      restarted.advance(to: "2026-10-28T08:00:00.000Z")
      #expect(
        restarted.output.take(reader) == [
          "MSG #standup 4 2026-10-28T08:00:00.000Z alice SERIES 1 :stand-up"
        ])
    }
  }

  @Test("REPLACE moves Sunday's 09:00 in New York to 08:00, the day DST starts, with its own text")
  func replaceAcrossDSTNewYork() throws {
    // Friday 12 March 2027, 07:00 in New York; summer time starts on the 14th.
    let harness = EngineHarness(
      clock: TestClock("2027-03-12T12:00:00.000Z", timeZone: "America/New_York"))
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #ops")
    #expect(
      harness.send(alice, "SAYEVERY #ops daily@09:00 :standup").last
        == "OK SAYEVERY 1 2027-03-12T14:00:00.000Z daily@09:00/America/New_York")
    let replaced = harness.send(
      alice, "REPLACE 1 2027-03-14T09:00-04:00 2027-03-14T08:00-04:00 :early standup, DST today")
    #expect(
      replaced == [
        "SCHED 1 #ops 2027-03-12T14:00:00.000Z 2027-03-12T12:00:00.000Z "
          + "daily@09:00/America/New_York :standup",
        "SCHED 2 #ops 2027-03-14T12:00:00.000Z 2027-03-12T12:00:00.000Z :early standup, DST today",
        "OK REPLACE 2 2027-03-14T12:00:00.000Z",
      ])
    // The replacement comes in its place among the series' occurrences.
    #expect(
      Self.upcoming(harness, alice, "1", 4) == [
        "1 2027-03-12T14:00:00.000Z", "1 2027-03-13T14:00:00.000Z", "2 2027-03-14T12:00:00.000Z",
        "1 2027-03-15T13:00:00.000Z",
      ])
    // Compacted while pending, the replacement keeps its series.
    let early = try EngineCalendarRuleTests.compacted(harness)
    #expect(
      Self.upcoming(early, early.connect("alice"), "1", 4) == Self.upcoming(harness, alice, "1", 4))
    // Beyond the horizon, a bad <when>: refused, nothing changed.
    #expect(
      harness.send(alice, "REPLACE 1 2027-03-15T13:00Z +400d :x").first?.hasPrefix(
        "ERR REPLACE TOOFAR") == true)
    #expect(Self.upcoming(harness, alice, "1", 4).last == "1 2027-03-15T13:00:00.000Z")

    harness.advance(to: "2027-03-12T14:00:00.000Z")
    harness.advance(to: "2027-03-13T14:00:00.000Z")
    #expect(harness.output.take(bob).count == 2)
    let restarted = try Self.reread(harness)
    let reader = restarted.connect("bob")
    restarted.send(reader, "JOIN #ops")
    restarted.advance(to: "2027-03-14T12:00:00.000Z")
    #expect(
      restarted.output.take(reader) == [
        "MSG #ops 2 2027-03-14T12:00:00.000Z alice SERIES 1 :early standup, DST today"
      ])
    restarted.advance(to: "2027-03-14T13:00:00.000Z")
    #expect(restarted.output.take(reader) == [], "the 09:00 it replaced does not come")
    restarted.advance(to: "2027-03-15T13:00:00.000Z")
    #expect(
      restarted.output.take(reader) == [
        "MSG #ops 5 2027-03-15T13:00:00.000Z alice SERIES 1 :standup"
      ])
    let compacted = try EngineCalendarRuleTests.compacted(restarted)
    #expect(
      compacted.send(compacted.connect("bob"), "HISTORY #ops 2") == [
        "HIST #ops 2 2027-03-14T12:00:00.000Z alice SERIES 1 :early standup, DST today",
        "HIST #ops 5 2027-03-15T13:00:00.000Z alice SERIES 1 :standup",
        "OK HISTORY #ops 2",
      ])
  }

  @Test("SKIP and REPLACE in Sydney as summer time ends roll back with a failed sync")
  func rollbackSydney() throws {
    // Wednesday 31 March 2027; Sydney leaves summer time on 4 April.
    let harness = EngineHarness(
      clock: TestClock("2027-03-31T00:00:00.000Z", timeZone: "Australia/Sydney"))
    harness.engine.trackUnsyncedRecords()
    let alice = harness.connect("alice")
    #expect(
      harness.send(alice, "SAYEVERY #a sat@10:00 :market").last
        == "OK SAYEVERY 1 2027-04-02T23:00:00.000Z sat@10:00/Australia/Sydney")
    harness.engine.recordsSynced(harness.engine.unsyncedRecordCount)
    let synced = harness.journal.records

    // Saturday 3 April (+11) skipped: next is the 10th, 10:00 AEST (+10).
    #expect(
      harness.send(alice, "SKIP 1 2027-04-03T10:00+11:00").last
        == "OK SKIP 1 2027-04-10T00:00:00.000Z")
    #expect(
      harness.send(alice, "REPLACE 1 2027-04-17T10:00+10:00 2027-04-16T18:00+10:00 :market, Friday")
        .last == "OK REPLACE 2 2027-04-16T08:00:00.000Z")
    harness.engine.rollBack(harness.engine.unsyncedRecordCount)
    #expect(
      Self.upcoming(harness, alice, "1", 3) == [
        "1 2027-04-02T23:00:00.000Z", "1 2027-04-10T00:00:00.000Z", "1 2027-04-17T00:00:00.000Z",
      ])
    let replayed = EngineHarness(clock: harness.clock)
    for record in synced { replayed.engine.replay(record) }
    #expect(
      harness.send(alice, "SCHEDULED") == replayed.send(replayed.connect("alice"), "SCHEDULED"))

    // Sent again and synced, the skip holds across a restart.
    harness.send(alice, "SKIP 1 2027-04-02T23:00:00.000Z")
    harness.engine.recordsSynced(harness.engine.unsyncedRecordCount)
    let restarted = try Self.reread(harness)
    #expect(
      Self.upcoming(restarted, restarted.connect("alice"), "1", 1) == ["1 2027-04-10T00:00:00.000Z"]
    )
  }

  @Test("a series leaves out at most 64 coming occurrences; one more is LIMIT")
  func skippedLimit() throws {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a daily@09:00/UTC :tick")
    // 1 December is next; skip the 64 days after it.
    let start = Timestamp(rfc3339: "2026-12-02T09:00:00.000Z")!
    for day in 0..<Series.maximumSkipped {
      let occurrence = start + Int64(day) * 86_400_000
      #expect(harness.send(alice, "SKIP 1 \(occurrence)").last?.hasPrefix("OK SKIP 1 ") == true)
    }
    let beyond = start + Int64(Series.maximumSkipped) * 86_400_000
    #expect(
      harness.send(alice, "SKIP 1 \(beyond)").first
        == "ERR SKIP LIMIT :series 1 already leaves out 64 coming occurrences, the most allowed; "
        + "wait until some have passed")
    // Compaction keeps all 64.
    let compacted = try EngineCalendarRuleTests.compacted(harness)
    #expect(
      Self.upcoming(compacted, compacted.connect("alice"), "1", 2) == [
        "1 2026-12-01T09:00:00.000Z", "1 \(beyond)",
      ])
    // As they pass they are forgotten: the first delivery leaves room.
    compacted.advance(to: "2026-12-01T09:00:00.000Z")
    #expect(
      compacted.send(compacted.connect("alice"), "SKIP 1 \(beyond)").last?.hasPrefix("OK SKIP")
        == true)
  }

  @Test("a skipped occurrence does not count toward count:; the last one by until: cannot go")
  func countAndUntil() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #a")
    harness.send(alice, "SAYEVERY #a daily@09:00/UTC,count:2 :twice")
    #expect(
      harness.send(alice, "SKIP 1 2026-12-03T09:00Z").first?.hasPrefix("ERR SKIP BADTIME")
        == true, "past its count")
    #expect(
      harness.send(alice, "SKIP 1 2026-12-01T09:00Z").last == "OK SKIP 1 2026-12-02T09:00:00.000Z")
    harness.advance(to: "2026-12-02T09:00:00.000Z")
    harness.advance(to: "2026-12-03T09:00:00.000Z")
    #expect(harness.output.take(bob).count == 2, "still two occurrences")
    #expect(harness.send(alice, "SCHEDULED") == ["OK SCHEDULED 0"])

    harness.send(alice, "SAYEVERY #a daily@10:00/UTC,until:2026-12-05 :until")
    harness.advance(to: "2026-12-04T10:00:00.000Z")
    #expect(
      harness.send(alice, "SKIP 4 2026-12-05T10:00Z").first
        == "ERR SKIP PAST :2026-12-05T10:00:00.000Z is the last occurrence of series 4; "
        + "CANCEL the series instead")
  }

  @Test("skip records and the series fields of 1.4 are held to the rules on replay")
  func journalValidation() {
    func reads(_ line: String) -> Bool {
      (try? Array(line.utf8).withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }) != nil
    }
    let at = "\"at\":\"2026-11-30T18:03:00.000Z\""
    #expect(
      reads(
        "{\"type\":\"skip\",\"id\":\"1\",\(at),\"occurrence\":\"2026-12-24T08:00:00.000Z\","
          + "\"due\":\"2026-12-01T08:00:00.000Z\"}"))
    #expect(!reads("{\"type\":\"skip\",\"id\":\"1\",\(at),\"due\":\"2026-12-01T08:00:00.000Z\"}"))
    let series = { (skipped: String) in
      "{\"type\":\"series\",\"id\":\"1\",\"to\":\"#a\",\"from\":\"alice\","
        + "\"created\":\"2026-11-30T17:58:02.410Z\",\"due\":\"2026-12-01T08:00:00.000Z\","
        + "\"rule\":\"daily@09:00/UTC\",\"done\":0,\"skipped\":\"\(skipped)\",\"text\":\"x\"}"
    }
    let day = { (n: Int) in
      (Timestamp(rfc3339: "2026-12-02T09:00:00.000Z")! + Int64(n) * 86_400_000).description
    }
    #expect(reads(series("\(day(0)),\(day(1))")))
    #expect(!reads(series("\(day(1)),\(day(0))")), "out of order")
    #expect(!reads(series("tomorrow")))
    #expect(reads(series((0..<64).map(day).joined(separator: ","))))
    #expect(!reads(series((0..<65).map(day).joined(separator: ","))), "more than 64")
    let message = { (series: String) in
      "{\"type\":\"message\",\"id\":\"2\",\"to\":\"#a\",\"from\":\"alice\",\(at),"
        + "\"series\":\"\(series)\",\"text\":\"x\"}"
    }
    #expect(reads(message("1")))
    #expect(!reads(message("")) && !reads(message("a b")))
  }
}

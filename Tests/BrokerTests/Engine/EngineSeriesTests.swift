import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// Series and changes to pending messages on virtual time (chatbroker(7)
/// "Series" and "Changing a pending message").
@Suite("Engine: series, RESCHEDULE and EDIT on virtual time")
struct EngineSeriesTests {
  /// The text of each MSG line.
  static func texts(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix("MSG ") }.map { String($0[$0.range(of: " :")!.upperBound...]) }
  }

  @Test("the stand-up every weekday at 09:00 Berlin time: listed once, on time across DST")
  func standUp() {
    // Thursday 22 October 2026; Berlin leaves summer time on Sunday the 25th.
    let harness = EngineHarness(clock: TestClock("2026-10-22T12:00:00.000Z"))
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #standup")
    let alice = harness.connect("alice")
    #expect(
      harness.send(alice, "SAYEVERY #standup weekdays@09:00/Europe/Berlin :stand-up")
        == ["OK SAYEVERY 1 2026-10-23T07:00:00.000Z weekdays@09:00/Europe/Berlin"])
    #expect(
      harness.send(alice, "SCHEDULED") == [
        "SCHED 1 #standup 2026-10-23T07:00:00.000Z 2026-10-22T12:00:00.000Z "
          + "weekdays@09:00/Europe/Berlin :stand-up",
        "OK SCHEDULED 1",
      ])
    harness.advance(to: "2026-10-23T06:59:59.999Z")
    #expect(harness.output.take(reader) == [])
    harness.advance(to: "2026-10-23T07:00:00.000Z")
    #expect(
      harness.output.take(reader) == [
        "MSG #standup 2 2026-10-23T07:00:00.000Z alice SERIES 1 :stand-up"
      ])
    // Monday 09:00 is now 08:00Z; nothing on the weekend.
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-10-26T08:00:00.000Z"))
    harness.advance(to: "2026-10-26T07:59:59.999Z")
    #expect(harness.output.take(reader) == [])
    harness.advance(to: "2026-10-26T08:00:00.000Z")
    #expect(
      harness.output.take(reader) == [
        "MSG #standup 3 2026-10-26T08:00:00.000Z alice SERIES 1 :stand-up"
      ])
    harness.engine.timerFired()
    #expect(harness.output.take(reader) == [], "never twice")
    #expect(harness.send(reader, "HISTORY #standup").last == "OK HISTORY #standup 2")
    #expect(
      harness.send(alice, "SCHEDULED").first?.hasPrefix("SCHED 1 #standup 2026-10-27T08:00")
        == true)
  }

  @Test("America/New_York: a 01:30 series fires once on the night 01:30 shows twice")
  func newYorkFallBack() {
    let harness = EngineHarness(
      clock: TestClock("2026-10-31T12:00:00.000Z", timeZone: "America/New_York"))
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    #expect(
      harness.send(alice, "SAYEVERY #a daily@01:30 :night")
        == ["OK SAYEVERY 1 2026-11-01T05:30:00.000Z daily@01:30/America/New_York"])
    harness.advance(to: "2026-11-01T05:30:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["night"])
    harness.advance(to: "2026-11-01T06:30:00.000Z")
    #expect(harness.output.take(alice) == [], "01:30 EST the same night is skipped")
    harness.advance(to: "2026-11-02T06:30:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["night"])
  }

  @Test("EDIT a millisecond before the due instant wins; at the instant it is DELIVERED")
  func editRace() {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #a")
    let alice = harness.connect("alice")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:00Z first")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:01Z second")
    harness.clock.set("2026-11-30T17:59:59.999Z")
    #expect(
      harness.send(alice, "EDIT 1 first, edited") == [
        "SCHED 1 #a 2026-11-30T18:00:00.000Z 2026-11-30T17:00:00.000Z :first, edited",
        "OK EDIT 1 2026-11-30T18:00:00.000Z",
      ])
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    #expect(Self.texts(harness.output.take(reader)) == ["first, edited"])
    // The timer has not run yet at 18:00:01.000: the change still loses.
    harness.clock.set("2026-11-30T18:00:01.000Z")
    let late = harness.send(alice, "EDIT 2 too late")
    #expect(late.count == 1, "\(late)")
    #expect(
      late.first
        == "ERR EDIT DELIVERED :message 2 was already delivered at 2026-11-30T18:00:01.000Z "
        + "to #a, where it is 2 in the history; it can no longer be changed")
    harness.engine.timerFired()
    #expect(Self.texts(harness.output.take(reader)) == ["second"], "delivered once, unchanged")
  }

  @Test("RESCHEDULE at the due instant is DELIVERED; a millisecond before, it moves the line")
  func rescheduleRace() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:00Z moved")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:00Z kept")
    harness.clock.set("2026-11-30T17:59:59.999Z")
    #expect(
      harness.send(alice, "RESCHEDULE 1 +1h").last == "OK RESCHEDULE 1 2026-11-30T18:59:59.999Z")
    harness.clock.set("2026-11-30T18:00:00.000Z")
    let late = harness.send(alice, "RESCHEDULE 2 +1h")
    #expect(late.first == "MSG #a 2 2026-11-30T18:00:00.000Z alice :kept")
    #expect(
      late.last?.hasPrefix("ERR RESCHEDULE DELIVERED :message 2 was already delivered") == true)
    harness.advance(to: "2026-11-30T18:59:59.999Z")
    #expect(Self.texts(harness.output.take(alice)) == ["moved"])
  }

  @Test("RESCHEDULE takes every <when> form and answers with the new state")
  func rescheduleForms() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let other = harness.connect("alice")
    harness.send(alice, "SAYAT @bob +1h hello")
    let forms = [
      ("+2h", "2026-11-30T19:00:00.000Z"),
      ("20:15", "2026-11-30T19:15:00.000Z"),
      ("@1798131600", "2026-12-24T17:00:00.000Z"),
      ("2026-12-01T09:00+01:00", "2026-12-01T08:00:00.000Z"),
    ]
    for (when, due) in forms {
      let line = "SCHED 1 @bob \(due) 2026-11-30T17:00:00.000Z :hello"
      #expect(harness.send(alice, "RESCHEDULE 1 \(when)") == [line, "OK RESCHEDULE 1 \(due)"])
      #expect(harness.output.take(other) == [line], "the author's other session learns of it")
    }
    let code = { (line: String) in harness.send(alice, line).first?.split(separator: " ")[2] }
    #expect(code("RESCHEDULE 1 2026-11-30T16:00Z") == "PAST")
    #expect(code("RESCHEDULE 1 +400d") == "TOOFAR")
    #expect(code("RESCHEDULE 1 soon") == "BADTIME")
    #expect(code("RESCHEDULE 1 daily@09:00") == "BADTIME", "a single message takes no rule")
    #expect(code("RESCHEDULE 1") == "SYNTAX")
    #expect(code("EDIT 1 bad\u{1B}[31m") == "BADCHAR")
    #expect(code("EDIT 1 :") == "EMPTY")
    #expect(harness.send(alice, "SCHEDULED").first?.contains(" 2026-12-01T08:00:00.000Z ") == true)
  }

  @Test("another user's pending or delivered id is NOSUCHMSG, worded as no message at all")
  func privacy() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(alice, "SAYAT #a +1h secret")
    harness.send(alice, "SAYEVERY #a daily@09:00 series")
    harness.send(alice, "SAY #a said")
    for request in ["EDIT ID x", "RESCHEDULE ID +1m", "CANCEL ID"] {
      let unknown = harness.send(bob, request.replacingOccurrences(of: "ID", with: "zz9"))
      #expect(unknown.first?.contains(" NOSUCHMSG :") == true)
      for id in ["1", "2", "3"] {
        let refused = harness.send(bob, request.replacingOccurrences(of: "ID", with: id))
        #expect(
          refused.first?.replacingOccurrences(of: " \(id)", with: " zz9") == unknown.first,
          "\(request) \(id)")
      }
    }
    #expect(harness.send(alice, "EDIT 3 x").first?.hasPrefix("ERR EDIT DELIVERED :") == true)
    #expect(
      harness.send(alice, "CANCEL 3").first?.hasPrefix(
        "ERR CANCEL NOSUCHMSG :message 3 was already delivered") == true)
  }

  @Test("a series takes a new rule, or a <when> for its next occurrence only")
  func rescheduleSeries() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYEVERY #a daily@09:00 hi")
    #expect(
      harness.send(alice, "RESCHEDULE 1 mon,wed@18:00/America/New_York") == [
        "SCHED 1 #a 2026-11-30T23:00:00.000Z 2026-11-30T17:00:00.000Z "
          + "mon,wed@18:00/America/New_York :hi",
        "OK RESCHEDULE 1 2026-11-30T23:00:00.000Z",
      ])
    #expect(
      harness.send(alice, "RESCHEDULE 1 +10m").last == "OK RESCHEDULE 1 2026-11-30T17:10:00.000Z")
    harness.advance(to: "2026-11-30T17:10:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["hi"])
    // Monday's 18:00 was the occurrence moved to 17:10; it does not come
    // again: the rule goes on with Wednesday's.
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-12-02T23:00:00.000Z"), "rule goes on")
    #expect(harness.send(alice, "EDIT 1 :bye").first?.hasSuffix("America/New_York :bye") == true)
    #expect(
      harness.send(alice, "RESCHEDULE 1 daily@09:00,until:2026-01-01").last?.contains(" PAST ")
        == true)
  }

  @Test("missed occurrences while down: one catch-up delivery, then on with the rule")
  func catchUp() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    // Elapsed time is shown with no zone (chatbroker(7), "Series").
    #expect(
      harness.send(alice, "SAYEVERY #a every:1h :tick").last
        == "OK SAYEVERY 1 2026-11-30T18:00:00.000Z every:1h")
    // Down from 17:30 to 23:30: 18:00 to 23:00 were missed.
    harness.clock.set("2026-11-30T23:30:00.000Z")
    let restarted = harness.restarted()
    let reader = restarted.connect("bob")
    restarted.send(reader, "JOIN #a")
    restarted.engine.timerFired()
    #expect(
      restarted.output.take(reader) == ["MSG #a 2 2026-11-30T23:30:00.000Z alice SERIES 1 :tick"])
    #expect(restarted.output.armed == Timestamp(rfc3339: "2026-12-01T00:00:00.000Z"))
    let again = restarted.restarted()
    again.engine.timerFired()
    #expect(again.send(again.connect("bob"), "HISTORY #a").count == 2, "the catch-up once only")
    again.advance(to: "2026-12-01T00:00:00.000Z")
    #expect(again.send(again.connect("bob"), "HISTORY #a").last == "OK HISTORY #a 2")
  }

  @Test("count: and until: end a series; a late EDIT is told which message came last")
  func ends() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYEVERY #a every:1m,count:2 :counted")
    harness.send(alice, "SAYEVERY #a daily@18:00,until:2026-12-01 :dated")
    harness.advance(to: "2026-11-30T17:01:00.000Z")
    harness.advance(to: "2026-11-30T17:02:00.000Z")
    harness.advance(to: "2026-11-30T17:03:00.000Z")
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    harness.advance(to: "2026-12-01T17:00:00.000Z")
    harness.advance(to: "2026-12-02T17:00:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["counted", "counted", "dated"])
    #expect(harness.send(alice, "SCHEDULED") == ["OK SCHEDULED 0"])
    #expect(
      harness.send(alice, "EDIT 1 more")
        == [
          "ERR EDIT DELIVERED :series 1 has ended: its last message, 4, was delivered at "
            + "2026-11-30T17:02:00.000Z; it can no longer be changed"
        ])
    #expect(harness.send(alice, "CANCEL 2").first?.contains(" NOSUCHMSG ") == true)
  }

  @Test("CANCEL ends a series; series count toward the pending limit; the horizon binds the first")
  func cancelAndLimits() {
    var limits = Limits()
    limits.pendingPerUser = 2
    limits.horizonMilliseconds = 10 * 86_400_000
    let harness = EngineHarness(limits: limits)
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    let code = { (line: String) -> String in
      let words = harness.send(alice, line).first?.split(separator: " ") ?? []
      return words.first == "OK" ? "OK" : String(words[2])
    }
    #expect(code("SAYEVERY #a monthly:15@09:00 far") == "TOOFAR", "15 December is 15 days ahead")
    #expect(code("SAYEVERY #a every:11d x") == "TOOFAR")
    #expect(code("SAYEVERY #a every:10d x") == "OK")
    #expect(code("SAYEVERY #a every:30s x") == "BADTIME")
    #expect(code("SAYEVERY @mallory daily@09:00 x") == "NOSUCHUSER")
    #expect(code("SAYEVERY #a daily@09:00") == "SYNTAX")
    #expect(code("SAYAT #a +1m x") == "OK")
    #expect(code("SAYEVERY #a daily@09:00 x") == "LIMIT")
    #expect(harness.send(alice, "CANCEL 1") == ["OK CANCEL 1"])
    #expect(code("SAYEVERY #a every:1m x") == "OK")
    #expect(harness.send(alice, "CANCEL 3") == ["OK CANCEL 3"])
    harness.advance(to: "2026-11-30T17:05:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["x"], "only the SAYAT")
  }

  @Test("a failed journal write at an occurrence delivers nothing, then exactly once")
  func occurrenceStorageFailure() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYEVERY #a every:1m x")
    harness.journal.failing = true
    harness.advance(to: "2026-11-30T17:01:00.000Z")
    #expect(harness.output.take(alice) == [])
    #expect(harness.send(alice, "EDIT 1 y").first?.contains(" STORAGE ") == true)
    harness.journal.failing = false
    harness.advance(to: "2026-11-30T17:01:01.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["x"])
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-11-30T17:02:00.000Z"))
  }

  @Test("series, edits and reschedules replay, and a compacted journal replays the same")
  func replayAndCompaction() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #a weekdays@09:00,count:3 one")
    harness.send(alice, "SAYAT @bob +2h two")
    harness.send(alice, "SAYEVERY #b every:1h,until:2026-12-24 three")
    harness.send(alice, "EDIT 2 two, edited")
    harness.send(alice, "RESCHEDULE 3 monthly:31@09:00")
    harness.advance(to: "2026-12-01T08:00:00.000Z")
    #expect(Self.texts(harness.output.take(alice)) == ["two, edited"])
    let expected = harness.send(alice, "SCHEDULED")
    #expect(expected.count == 3 && expected.last == "OK SCHEDULED 2", "\(expected)")
    let replayed = harness.restarted()
    #expect(replayed.send(replayed.connect("alice"), "SCHEDULED") == expected)
    let compacted = MemoryJournal()
    harness.engine.snapshot().forEachRecord { compacted.records.append($0) }
    let fromSnapshot = EngineHarness(clock: harness.clock, journal: compacted).restarted()
    #expect(fromSnapshot.send(fromSnapshot.connect("alice"), "SCHEDULED") == expected)
    #expect(
      fromSnapshot.send(fromSnapshot.connect("alice"), "HISTORY #a").last == "OK HISTORY #a 1")
    // The count carried over: two more occurrences, then the series ends.
    for day in ["02", "03", "04"] { fromSnapshot.advance(to: "2026-12-\(day)T08:00:00.000Z") }
    let history = fromSnapshot.send(fromSnapshot.connect("alice"), "HISTORY #a")
    #expect(history.last == "OK HISTORY #a 3")
  }
}

import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

@Suite("Engine: scheduled messages on virtual time")
struct EngineScheduleTests {
  @Test("due at 18:00:00.000: nothing at 17:59:59.999, the MSG at 18:00:00.000")
  func exactlyOnTime() {
    let harness = EngineHarness()
    let reader = harness.connect("bob")
    harness.send(reader, "JOIN #ops")
    let author = harness.connect("alice")
    let reply = harness.send(author, "SAYAT #ops 2026-11-30T18:00:00Z deploy now")
    #expect(reply == ["OK SAYAT 1 2026-11-30T18:00:00.000Z"])
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-11-30T18:00:00.000Z"))
    harness.engine.disconnect(author)
    harness.clock.set("2026-11-30T17:59:59.999Z")
    harness.engine.timerFired()
    #expect(harness.output.take(reader) == [])
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    #expect(
      harness.output.take(reader) == ["MSG #ops 1 2026-11-30T18:00:00.000Z alice :deploy now"])
    #expect(harness.send(reader, "HISTORY #ops").count == 2)
    harness.advance(to: "2026-11-30T19:00:00.000Z")
    #expect(harness.output.take(reader) == [], "delivered once")
  }

  @Test("the author's own sessions receive the MSG too, and direct ones reach both")
  func authorReceives() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(alice, "JOIN #a")
    let roomID = okID(harness.send(alice, "SAYAT #a +1m room"))
    let directID = okID(harness.send(alice, "SAYAT @bob +1m direct"))
    harness.advance(to: "2026-11-30T17:01:00.000Z")
    #expect(
      harness.output.take(alice) == [
        "MSG #a \(roomID) 2026-11-30T17:01:00.000Z alice :room",
        "MSG @bob \(directID) 2026-11-30T17:01:00.000Z alice :direct",
      ])
    #expect(
      harness.output.take(bob) == ["MSG @alice \(directID) 2026-11-30T17:01:00.000Z alice :direct"])
  }

  @Test("several due at one instant come out in id order, earlier instants first")
  func stableOrder() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:00Z third")
    harness.send(alice, "SAYAT #a 2026-11-30T17:30:00Z first")
    harness.send(alice, "SAYAT #a 2026-11-30T18:00:00Z fourth")
    harness.send(alice, "SAYAT #a 2026-11-30T17:45:00Z second")
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    let texts = harness.output.take(alice).map { String($0.split(separator: ":").last!) }
    #expect(texts == ["first", "second", "third", "fourth"])
  }

  @Test("a clock jump forward delivers what it skipped, in due order; a jump back delays")
  func clockJumps() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYAT #a 2026-11-30T17:10:00Z a")
    harness.send(alice, "SAYAT #a 2026-11-30T17:20:00Z b")
    harness.send(alice, "SAYAT #a 2026-11-30T19:00:00Z c")
    // The clock is set back an hour: the timer is on the wall clock, so when
    // it fires (say the shell looks) nothing is due yet and it is re-armed.
    harness.clock.set("2026-11-30T16:05:00.000Z")
    harness.engine.timerFired()
    #expect(harness.output.take(alice) == [])
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-11-30T17:10:00.000Z"))
    // Set forward past two of them: both arrive at once, in due order.
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    #expect(harness.output.take(alice).map { $0.suffix(2) } == [":a", ":b"])
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-11-30T19:00:00.000Z"))
  }

  @Test("CANCEL just before due: never delivered; then NOSUCHMSG")
  func cancelBeforeDue() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    let id = okID(harness.send(alice, "SAYAT #a 18:00 no"))
    harness.clock.set("2026-11-30T16:59:59.999Z")
    #expect(harness.send(alice, "CANCEL \(id)") == ["OK CANCEL \(id)"])
    #expect(harness.output.armed == nil)
    harness.advance(to: "2026-11-30T18:00:00.000Z")
    harness.engine.timerFired()
    #expect(harness.output.take(alice) == [])
    #expect(harness.send(alice, "CANCEL \(id)").first?.hasPrefix("ERR CANCEL NOSUCHMSG") == true)
  }

  @Test("SCHEDULED and CANCEL see only the caller's own pending messages")
  func privacy() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    let id = okID(harness.send(alice, "SAYAT @bob +1h surprise"))
    harness.send(bob, "SAYAT #a +2h other")
    #expect(
      harness.send(alice, "SCHEDULED") == [
        "SCHED \(id) @bob 2026-11-30T18:00:00.000Z 2026-11-30T17:00:00.000Z :surprise",
        "OK SCHEDULED 1",
      ])
    #expect(harness.send(alice, "SCHEDULED #a") == ["OK SCHEDULED 0"])
    #expect(harness.send(bob, "SCHEDULED @alice") == ["OK SCHEDULED 0"])
    let refused = harness.send(bob, "CANCEL \(id)")
    let unknown = harness.send(bob, "CANCEL zzzz")
    #expect(refused.first?.hasPrefix("ERR CANCEL NOSUCHMSG :") == true)
    #expect(
      refused.first?.replacingOccurrences(of: id, with: "ID")
        == unknown.first?.replacingOccurrences(of: "zzzz", with: "ID"),
      "indistinguishable from no message")
  }

  @Test("PAST, TOOFAR, BADTIME and the pending limit")
  func refusals() {
    var limits = Limits()
    limits.pendingPerUser = 2
    let harness = EngineHarness(limits: limits)
    let alice = harness.connect("alice")
    func code(_ line: String) -> String {
      String(harness.send(alice, line).first!.split(separator: " ")[2])
    }
    #expect(code("SAYAT #a 2026-11-30T16:00:00Z x") == "PAST")
    #expect(code("SAYAT #a +367d x") == "TOOFAR")
    #expect(code("SAYAT #a tomorrow x") == "BADTIME")
    #expect(harness.send(alice, "SAYAT #a +1m x").first?.hasPrefix("OK SAYAT") == true)
    #expect(harness.send(alice, "SAYAT #a +2m x").first?.hasPrefix("OK SAYAT") == true)
    #expect(code("SAYAT #a +3m x") == "LIMIT")
    #expect(code("SAYAT @mallory +3m x") == "NOSUCHUSER")
  }

  @Test("local clock times are read in the broker's time zone")
  func localTime() {
    let harness = EngineHarness(
      clock: TestClock("2026-11-30T17:00:00.000Z", timeZone: "Europe/Berlin"))
    let alice = harness.connect("alice")
    // 17:00Z is 18:00 in Berlin: 18:30 is half an hour away, 17:30 is tomorrow.
    #expect(harness.send(alice, "SAYAT #a 18:30 x") == ["OK SAYAT 1 2026-11-30T17:30:00.000Z"])
    #expect(harness.send(alice, "SAYAT #a 17:30 x") == ["OK SAYAT 2 2026-12-01T16:30:00.000Z"])
  }

  @Test("pending messages survive a restart; those due meanwhile come right after start")
  func restart() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAYAT #a 2026-11-30T17:30:00Z early")
    harness.send(alice, "SAYAT #a 2026-11-30T17:20:00Z earlier")
    harness.send(alice, "SAYAT #a 2026-11-30T19:00:00Z later")
    harness.clock.set("2026-11-30T18:00:00.000Z")
    let restarted = harness.restarted()
    #expect(restarted.output.armed == Timestamp(rfc3339: "2026-11-30T17:20:00.000Z"))
    let reader = restarted.connect("alice")
    restarted.send(reader, "JOIN #a")
    restarted.engine.timerFired()
    #expect(
      restarted.output.take(reader).map { $0.split(separator: ":").last! } == ["earlier", "early"])
    let again = restarted.restarted()
    again.engine.timerFired()
    #expect(again.send(again.connect("alice"), "SCHEDULED").count == 2, "only 'later' is left")
    #expect(again.send(again.connect("alice"), "HISTORY #a").count == 3, "delivered exactly once")
  }

  @Test("a failed journal write at delivery keeps the message pending and retries")
  func deliveryStorageFailure() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #a")
    harness.send(alice, "SAYAT #a +1m x")
    harness.journal.failing = true
    harness.advance(to: "2026-11-30T17:01:00.000Z")
    #expect(harness.output.take(alice) == [])
    #expect(harness.output.armed == Timestamp(rfc3339: "2026-11-30T17:01:01.000Z"))
    harness.journal.failing = false
    harness.advance(to: "2026-11-30T17:01:01.000Z")
    #expect(harness.output.take(alice).count == 1)
  }
}

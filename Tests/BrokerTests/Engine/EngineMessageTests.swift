import Broker
import LineProtocol
import TestSupport
import Testing

@Suite("Engine: messages, direct conversations and history")
struct EngineMessageTests {
  @Test("SAY goes to every other connection in the room, not back to the sender")
  func sayToRoom() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let aliceAgain = harness.connect("alice")
    let bob = harness.connect("bob")
    let carol = harness.connect("carol")
    for connection in [alice, aliceAgain, bob] { harness.send(connection, "JOIN #ops") }
    _ = (harness.output.take(alice), harness.output.take(aliceAgain))
    let reply = harness.send(alice, "SAY #ops :deploy now")
    #expect(reply == ["OK SAY 1 2026-11-30T17:00:00.000Z"])
    let message = "MSG #ops 1 2026-11-30T17:00:00.000Z alice :deploy now"
    #expect(harness.output.take(bob) == [message])
    #expect(harness.output.take(aliceAgain) == [message])
    #expect(harness.output.take(carol) == [], "carol has not joined")
  }

  @Test("SAY to a room nobody joined creates it; joining is not required to post")
  func sayWithoutJoin() {
    let harness = EngineHarness()
    let script = harness.connect("bob")
    #expect(harness.send(script, "SAY #builds done").first?.hasPrefix("OK SAY ") == true)
    #expect(harness.send(script, "ROOMS") == ["ROOM #builds 0", "OK ROOMS 1"])
    #expect(harness.send(script, "HISTORY #builds").count == 2)
  }

  @Test("a direct message is named by the other party on each side")
  func directMessage() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    let bobAgain = harness.connect("bob")
    let carol = harness.connect("carol")
    let id = okID(harness.send(bob, "SAY @alice hi"))
    #expect(harness.output.take(alice) == ["MSG @bob \(id) 2026-11-30T17:00:00.000Z bob :hi"])
    #expect(harness.output.take(bobAgain) == ["MSG @alice \(id) 2026-11-30T17:00:00.000Z bob :hi"])
    #expect(harness.output.take(carol) == [])
    #expect(
      harness.send(alice, "HISTORY @bob") == [
        "HIST @bob \(id) 2026-11-30T17:00:00.000Z bob :hi", "OK HISTORY @bob 1",
      ])
    #expect(harness.send(carol, "HISTORY @bob") == ["OK HISTORY @bob 0"], "private to the two")
    #expect(harness.send(carol, "HISTORY @alice") == ["OK HISTORY @alice 0"])
  }

  @Test("SAY to an unknown user is NOSUCHUSER and nothing is written")
  func noSuchUser() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let reply = harness.send(alice, "SAY @mallory hi")
    #expect(reply.first?.hasPrefix("ERR SAY NOSUCHUSER :") == true)
    #expect(harness.journal.records.isEmpty)
  }

  @Test(
    "a conversation keeps at most --history-bytes-per-conversation bytes of text, the newest always, after a restart too"
  )
  func historyBoundedInBytes() {
    var limits = Limits()
    limits.historyBytesPerConversation = 100
    let harness = EngineHarness(limits: limits)
    let alice = harness.connect("alice")
    func texts(_ lines: [String]) -> [String] {
      lines.dropLast().map { String($0.split(separator: ":").last!) }
    }
    let line = { (letter: String) in String(repeating: letter, count: 40) }
    for letter in ["a", "b", "c", "d"] { harness.send(alice, "SAY #a \(line(letter))") }
    #expect(texts(harness.send(alice, "HISTORY #a")) == [line("c"), line("d")])
    let long = String(repeating: "L", count: 300)
    harness.send(alice, "SAY #a \(long)")
    #expect(texts(harness.send(alice, "HISTORY #a")) == [long], "the newest stays, however long")
    harness.send(alice, "SAY #a short")
    #expect(texts(harness.send(alice, "HISTORY #a")) == ["short"])
    // Another conversation has a bound of its own.
    harness.send(alice, "SAY #b \(line("e"))")
    let restarted = harness.restarted()
    let again = restarted.connect("alice")
    #expect(texts(restarted.send(again, "HISTORY #a")) == ["short"])
    #expect(texts(restarted.send(again, "HISTORY #b")) == [line("e")])
  }

  @Test("HISTORY: latest n, BEFORE and AFTER are exclusive, oldest first")
  func historyAnchors() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let ids = (1...6).map { number in okID(harness.send(alice, "SAY #a m\(number)")) }
    func texts(_ lines: [String]) -> [String] {
      lines.dropLast().map { String($0.split(separator: ":").last!) }
    }
    #expect(texts(harness.send(alice, "HISTORY #a 2")) == ["m5", "m6"])
    #expect(texts(harness.send(alice, "HISTORY #a")) == ["m1", "m2", "m3", "m4", "m5", "m6"])
    #expect(texts(harness.send(alice, "HISTORY #a 2 BEFORE \(ids[3])")) == ["m2", "m3"])
    #expect(texts(harness.send(alice, "HISTORY #a 2 after \(ids[3])")) == ["m5", "m6"])
    #expect(texts(harness.send(alice, "HISTORY #a AFTER \(ids[5])")) == [])
    #expect(
      harness.send(alice, "HISTORY #a BEFORE zzz").first?.hasPrefix("ERR HISTORY NOSUCHMSG") == true
    )
    #expect(harness.send(alice, "HISTORY #b BEFORE \(ids[0])").first?.contains("NOSUCHMSG") == true)
    #expect(harness.send(alice, "HISTORY #unknown") == ["OK HISTORY #unknown 0"])
  }

  @Test("HISTORY <n> is clamped to the limit")
  func historyClamp() {
    var limits = Limits()
    limits.historyRequest = 3
    let harness = EngineHarness(limits: limits)
    let alice = harness.connect("alice")
    for number in 1...5 { harness.send(alice, "SAY #a m\(number)") }
    #expect(harness.send(alice, "HISTORY #a 99999999999999999999999").last == "OK HISTORY #a 3")
  }

  @Test("history keeps only the newest messages per conversation")
  func historyBound() {
    var limits = Limits()
    limits.historyPerConversation = 3
    let harness = EngineHarness(limits: limits)
    let alice = harness.connect("alice")
    let first = okID(harness.send(alice, "SAY #a m1"))
    for number in 2...5 { harness.send(alice, "SAY #a m\(number)") }
    let lines = harness.send(alice, "HISTORY #a")
    #expect(lines.count == 4)
    #expect(lines[0].hasSuffix(":m3"))
    #expect(harness.send(alice, "HISTORY #a AFTER \(first)").first?.contains("NOSUCHMSG") == true)
  }

  @Test("a failed journal write answers STORAGE, changes nothing, and later writes work")
  func storageFailure() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #a")
    harness.journal.failing = true
    #expect(harness.send(alice, "SAY #a lost").first?.hasPrefix("ERR SAY STORAGE :") == true)
    #expect(harness.send(alice, "SAY #new x").first?.hasPrefix("ERR SAY STORAGE :") == true)
    #expect(harness.output.take(bob) == [], "nothing unacknowledged is shown")
    #expect(harness.send(alice, "HISTORY #a") == ["OK HISTORY #a 0"])
    #expect(harness.send(alice, "PING") == ["OK PING"], "reads still work")
    harness.journal.failing = false
    #expect(harness.send(alice, "SAY #a kept").first?.hasPrefix("OK SAY ") == true)
    #expect(harness.send(alice, "HISTORY #a").count == 2)
  }

  @Test("ids are unique across restarts, also after compaction")
  func idsNeverReused() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let first = okID(harness.send(alice, "SAYAT #a +1h later"))
    harness.send(alice, "CANCEL \(first)")
    let restarted = harness.restarted()
    let afterRestart = okID(restarted.send(restarted.connect("alice"), "SAY #a x"))
    #expect(afterRestart != first)
    // A compacted journal drops the cancelled message but keeps the counter.
    let compacted = MemoryJournal()
    restarted.engine.snapshot().forEachRecord { compacted.records.append($0) }
    let again = EngineHarness(clock: harness.clock, journal: compacted).restarted()
    let third = okID(again.send(again.connect("alice"), "SAY #a y"))
    #expect(![first, afterRestart].contains(third))
  }

  @Test("a compacted journal replays to the same rooms, history and schedules")
  func snapshotReplays() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #empty")
    for number in 1...3 { harness.send(alice, "SAY #a m\(number)") }
    harness.send(alice, "SAY @bob direct")
    harness.send(alice, "SAYAT @bob +1h later")
    harness.send(alice, "SAYAT #a +2h much later")
    harness.engine.disconnect(alice)
    let original = harness.connect("alice")
    let compacted = MemoryJournal()
    harness.engine.snapshot().forEachRecord { compacted.records.append($0) }
    let replayed = EngineHarness(clock: harness.clock, journal: compacted).restarted()
    let session = replayed.connect("alice")
    for request in ["ROOMS", "HISTORY #a", "HISTORY @bob", "SCHEDULED"] {
      #expect(replayed.send(session, request) == harness.send(original, request), "\(request)")
    }
  }
}

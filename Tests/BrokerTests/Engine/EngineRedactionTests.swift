import Broker
import LineProtocol
import TestSupport
import Testing

/// Taking a message back (chatbroker(7), `REDACT`): only its author, only
/// within 24 hours; its place stays, its text is gone from every reply,
/// the journal replays it so, and a failed sync gives it back.
@Suite("Engine: taking a message back")
struct EngineRedactionTests {
  @Test("the author takes a message back: the room is told, HISTORY keeps only its place")
  func redactInRoom() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    _ = chat.output.take(alice)
    let id = okID(chat.send(alice, "SAY #ops :the password is hunter2"))
    _ = chat.output.take(bob)
    #expect(chat.send(alice, "REDACT #ops \(id)") == ["OK REDACT #ops \(id)"])
    #expect(chat.output.take(bob) == ["REDACT #ops \(id) alice"])
    let history = chat.send(bob, "HISTORY #ops")
    #expect(
      history == ["HIST #ops \(id) 2026-11-30T17:00:00.000Z alice REDACTED :", "OK HISTORY #ops 1"])
    #expect(chat.send(alice, "REDACT #ops \(id)") == ["OK REDACT #ops \(id)"], "twice is no error")
    #expect(chat.output.take(bob) == [], "and tells nobody again")
  }

  /// chatbroker(7), "Your rooms and read markers": an unread message
  /// mentions you when its text names you. A message taken back has no
  /// text: it stays unread, mentioning nobody, as a restart reads it from
  /// the compacted journal; a failed sync that gives the text back gives
  /// the mention back.
  @Test(
    "a message taken back counts neither as unread nor as a mention, also after a restart; rolled back, it counts again"
  )
  func redactedMessageMentionsNobody() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :bob: the password is hunter2"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let said = "CONV #ops \(id) 2026-11-30T17:00:00.000Z - 1"
    _ = chat.output.take(bob)
    #expect(chat.send(bob, "CONVERSATIONS").first == "\(said) 1")

    chat.send(alice, "REDACT #ops \(id)")
    _ = chat.output.take(bob)
    let takenBack = "CONV #ops \(id) 2026-11-30T17:00:00.000Z - 0 0"
    #expect(chat.send(bob, "CONVERSATIONS").first == takenBack)
    let restarted = EngineHarness(clock: chat.clock)
    chat.engine.snapshot().forEachRecord { restarted.engine.replay($0) }
    restarted.engine.finishReplay()
    #expect(restarted.send(restarted.connect("bob"), "CONVERSATIONS").first == takenBack)

    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(chat.send(bob, "CONVERSATIONS").first == "\(said) 1", "the text is back")
  }

  @Test("nobody else may, nor after 24 hours; a direct message is taken back for both")
  func refusedAndDirect() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let mine = okID(chat.send(alice, "SAY #ops :mine"))
    #expect(chat.send(bob, "REDACT #ops \(mine)").first?.hasPrefix("ERR REDACT NOSUCHMSG") == true)
    #expect(chat.send(alice, "REDACT #ops zz").first?.hasPrefix("ERR REDACT NOSUCHMSG") == true)
    let direct = okID(chat.send(alice, "SAY @bob :oops"))
    _ = chat.output.take(bob)
    #expect(chat.send(alice, "REDACT @bob \(direct)") == ["OK REDACT @bob \(direct)"])
    #expect(chat.output.take(bob) == ["REDACT @alice \(direct) alice"])
    chat.clock.set("2026-12-01T17:00:00.001Z")
    #expect(
      chat.send(alice, "REDACT #ops \(mine)") == [
        "ERR REDACT LIMIT :message \(mine) was sent more than 24 hours ago and can no longer be taken back"
      ])
    #expect(chat.send(alice, "HISTORY #ops").first?.hasSuffix(":mine") == true)
  }

  @Test("replay and compaction keep the marker and no trace of the text")
  func replayedAndCompacted() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let id = okID(chat.send(alice, "SAY #ops :secret text"))
    chat.send(alice, "SAY #ops :kept text")
    chat.send(alice, "REDACT #ops \(id)")
    let restarted = chat.restarted()
    let bob = restarted.connect("bob")
    #expect(restarted.send(bob, "HISTORY #ops").first?.hasSuffix(" alice REDACTED :") == true)
    var compacted: [String] = []
    restarted.engine.snapshot().forEachRecord {
      compacted.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(!compacted.contains { $0.contains("secret") })
    #expect(compacted.contains { $0.contains(#""kind":"redacted""#) && !$0.contains("\"text\"") })
    #expect(compacted.contains { $0.contains("kept text") })
  }

  @Test("a failed sync gives the text back, and the REDACT line is held until the sync")
  func rolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :said"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(bob)
    chat.send(alice, "REDACT #ops \(id)")
    #expect(chat.output.kinds["REDACT #ops \(id) alice"] == .revealing)
    #expect(chat.output.kinds["OK REDACT #ops \(id)"] == .outcome(.redact))
    _ = chat.output.take(bob)  // held, and dropped by the shell when rolled back
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    let history = chat.send(bob, "HISTORY #ops")
    #expect(history.first?.hasSuffix(" alice :said") == true, "\(history)")
  }

  @Test("a room's lines counted unread leave out one taken back, and its mention")
  func redactedNotUnread() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #a")
    chat.send(bob, "JOIN #a")
    let first = okID(chat.send(bob, "SAY #a :@alice look at this"))
    let last = okID(chat.send(bob, "SAY #a :plain"))
    let direct = okID(chat.send(bob, "SAY @alice :@alice psst"))
    _ = chat.output.take(alice)
    #expect(
      chat.send(alice, "CONVERSATIONS") == [
        "CONV #a \(last) 2026-11-30T17:00:00.000Z - 2 1",
        "CONV @bob \(direct) 2026-11-30T17:00:00.000Z - 1 1", "OK CONVERSATIONS 2",
      ])
    // Taken back, then rolled back by a failed sync: counted again.
    chat.engine.trackUnsyncedRecords()
    chat.send(bob, "REDACT #a \(first)")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(alice)
    #expect(
      chat.send(alice, "CONVERSATIONS").first == "CONV #a \(last) 2026-11-30T17:00:00.000Z - 2 1")
    chat.send(bob, "REDACT #a \(first)")
    chat.send(bob, "REDACT @alice \(direct)")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(alice)
    let counted = [
      "CONV #a \(last) 2026-11-30T17:00:00.000Z - 1 0",
      "CONV @bob \(direct) 2026-11-30T17:00:00.000Z - 0 0", "OK CONVERSATIONS 2",
    ]
    #expect(chat.send(alice, "CONVERSATIONS") == counted)
    // The same after a restart, and from a compacted journal, which has
    // the line without its text.
    let restarted = chat.restarted()
    #expect(restarted.send(restarted.connect("alice"), "CONVERSATIONS") == counted)
    let compacted = MemoryJournal()
    chat.engine.snapshot().forEachRecord { compacted.records.append($0) }
    let fresh = EngineHarness(clock: chat.clock, journal: compacted)
    for record in compacted.records { fresh.engine.replay(record) }
    fresh.engine.finishReplay()
    #expect(fresh.send(fresh.connect("alice"), "CONVERSATIONS") == counted)
  }
}

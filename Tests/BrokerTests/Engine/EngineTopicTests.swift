import Broker
import LineProtocol
import TestSupport
import Testing

/// Room topics (chatbroker(7), `TOPIC`): any member sets one, it is
/// journaled, and every session sees it when it changes and on `JOIN`.
@Suite("Engine: room topics")
struct EngineTopicTests {
  @Test("a member sets the topic; the room's sessions see it, a joiner gets it before OK JOIN")
  func setAndShow() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    _ = chat.output.take(alice)
    #expect(
      chat.send(bob, "TOPIC #ops :deploy at 18:00") == [
        "TOPIC #ops bob 2026-11-30T17:00:00.000Z :deploy at 18:00", "OK TOPIC #ops",
      ])
    #expect(chat.output.take(alice) == ["TOPIC #ops bob 2026-11-30T17:00:00.000Z :deploy at 18:00"])
    #expect(
      chat.send(alice, "TOPIC #ops") == [
        "TOPIC #ops bob 2026-11-30T17:00:00.000Z :deploy at 18:00", "OK TOPIC #ops",
      ])
    let carol = chat.connect("carol")
    #expect(
      chat.send(carol, "JOIN #ops") == [
        "TOPIC #ops bob 2026-11-30T17:00:00.000Z :deploy at 18:00", "OK JOIN #ops 3",
      ])
    #expect(chat.send(carol, "ROOMS") == ["ROOM #ops 3 :deploy at 18:00", "OK ROOMS 1"])
  }

  @Test("TOPIC <room> : clears it; a room without a topic answers OK TOPIC alone")
  func clear() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    #expect(chat.send(alice, "TOPIC #ops") == ["OK TOPIC #ops"])
    chat.send(alice, "TOPIC #ops :something")
    chat.clock.set("2026-11-30T17:05:00.000Z")
    #expect(
      chat.send(alice, "TOPIC #ops :") == [
        "TOPIC #ops alice 2026-11-30T17:05:00.000Z :", "OK TOPIC #ops",
      ])
    #expect(chat.send(alice, "TOPIC #ops") == ["OK TOPIC #ops"])
    #expect(chat.send(alice, "ROOMS") == ["ROOM #ops 1", "OK ROOMS 1"])
    #expect(chat.send(alice, "TOPIC #nosuchroom") == ["OK TOPIC #nosuchroom"])
  }

  @Test("only a member may set it, with the text rules of SAY, and a bad request changes nothing")
  func refused() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(alice, "TOPIC #ops :kept")
    #expect(
      chat.send(bob, "TOPIC #ops :mine") == ["ERR TOPIC NOTJOINED :join #ops to set its topic"])
    #expect(chat.send(alice, "TOPIC #ops \u{7}bell").first?.hasPrefix("ERR TOPIC BADCHAR") == true)
    #expect(chat.send(alice, "TOPIC ops :x").first?.hasPrefix("ERR TOPIC BADNAME") == true)
    #expect(chat.send(alice, "TOPIC #ops").first?.hasSuffix(":kept") == true)
    chat.journal.failing = true
    #expect(chat.send(alice, "TOPIC #ops :lost").first?.hasPrefix("ERR TOPIC STORAGE") == true)
    chat.journal.failing = false
    #expect(chat.send(alice, "TOPIC #ops").first?.hasSuffix(":kept") == true)
  }

  @Test("the topic survives a restart, and keeps a room nobody is in")
  func replayed() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    chat.send(alice, "TOPIC #ops :kept across restarts")
    chat.send(alice, "PART #ops")
    let restarted = chat.restarted()
    let bob = restarted.connect("bob")
    #expect(restarted.send(bob, "ROOMS") == ["ROOM #ops 0 :kept across restarts", "OK ROOMS 1"])
    #expect(
      restarted.send(bob, "TOPIC #ops") == [
        "TOPIC #ops alice 2026-11-30T17:00:00.000Z :kept across restarts", "OK TOPIC #ops",
      ])
  }

  @Test("a failed sync rolls a topic back, and its line is held until the sync")
  func rolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    chat.send(alice, "TOPIC #ops :synced")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let line = "TOPIC #ops alice 2026-11-30T17:00:00.000Z :not synced"
    #expect(chat.send(alice, "TOPIC #ops :not synced") == [line, "OK TOPIC #ops"])
    #expect(chat.output.kinds[line] == .revealing)
    #expect(chat.output.kinds["OK TOPIC #ops"] == .outcome(.topic))
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(chat.send(alice, "TOPIC #ops").first?.hasSuffix(":synced") == true)
  }
}

import Broker
import LineProtocol
import Testing

/// The value query behind chatbroker(7)'s IRC `CHATHISTORY TARGETS`.
@Suite("Engine: a user's conversations active in a time window")
struct EngineActivityTests {
  @Test("only durable messages count: an unsynced newest message is not shown until synced")
  func unsyncedLeftOut() throws {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    _ = chat.connect("bob")
    chat.send(alice, "JOIN #a")
    chat.clock.set("2026-11-30T17:00:00.000Z")
    chat.send(alice, "SAY #a synced")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    chat.clock.set("2026-11-30T17:05:00.000Z")
    chat.send(alice, "SAY #a not yet")
    chat.send(alice, "SAY @bob not yet either")
    let after = try #require(Timestamp(rfc3339: "2026-11-30T16:00:00.000Z"))
    let before = try #require(Timestamp(rfc3339: "2026-11-30T18:00:00.000Z"))
    let room = try #require(RoomName("#a"))
    let first = chat.engine.activeConversations(
      of: "alice", after: after, before: before, limit: 10)
    #expect(first.map(\.target) == [.room(room)])
    #expect(first.map(\.latest.description) == ["2026-11-30T17:00:00.000Z"])
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let now = chat.engine.activeConversations(of: "alice", after: after, before: before, limit: 10)
    #expect(
      now.map(\.latest.description) == ["2026-11-30T17:05:00.000Z", "2026-11-30T17:05:00.000Z"])
    #expect(
      chat.engine.activeConversations(of: "carol", after: after, before: before, limit: 10).isEmpty,
      "carol is in neither conversation")
  }
}

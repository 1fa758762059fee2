import Broker
import LineProtocol
import TestSupport
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

  @Test("a message sent after the clock was set back is found, and so are the ones before it")
  func clockSetBack() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #a")
    for time in ["17:00", "17:10", "17:20", "16:50", "16:55"] {
      chat.clock.set("2026-11-30T\(time):00.000Z")
      chat.send(alice, "SAY #a at \(time)")
    }
    func newest(_ after: String, _ before: String) throws -> [String] {
      let after = try #require(Timestamp(rfc3339: "2026-11-30T\(after):00.000Z"))
      let before = try #require(Timestamp(rfc3339: "2026-11-30T\(before):00.000Z"))
      return chat.engine.activeConversations(of: "alice", after: after, before: before, limit: 5)
        .map { String($0.latest.description.dropFirst(11).prefix(5)) }
    }
    #expect(try newest("16:58", "17:15") == ["17:10"], "before the clock went back")
    #expect(try newest("16:52", "16:58") == ["16:55"], "after it")
    #expect(try newest("16:00", "18:00") == ["16:55"], "the newest sent, not the latest time")
    #expect(try newest("17:25", "18:00") == [])
  }
}

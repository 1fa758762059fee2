import Broker
import LineProtocol
import TestSupport
import Testing

/// Private rooms (chatbroker(7), "Private rooms") on virtual time, with a
/// fake group directory: group `ops` holds alice and bob, not carol.
@Suite("Engine: private rooms")
struct EnginePrivateRoomTests {
  /// alice makes #ops private to group ops, with a topic and a line; bob
  /// joins it; alice makes #plan private to the invited, with a line.
  func privateRooms() -> (chat: EngineHarness, alice: ConnectionID, bob: ConnectionID) {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    #expect(chat.send(alice, "JOIN #ops group=ops") == ["OK JOIN #ops 1"])
    #expect(chat.send(bob, "JOIN #ops") == ["OK JOIN #ops 2"])
    chat.send(alice, "TOPIC #ops :deploy at 18:00")
    chat.send(alice, "SAY #ops :the password is hunter2")
    #expect(chat.send(alice, "JOIN #plan invite") == ["OK JOIN #plan 1"])
    chat.send(alice, "SAY #plan :surprise party")
    #expect(chat.output.take(alice) == [])
    #expect(
      chat.output.take(bob) == [
        "TOPIC #ops alice 2026-11-30T17:00:00.000Z :deploy at 18:00",
        "MSG #ops 1 2026-11-30T17:00:00.000Z alice :the password is hunter2",
      ])
    return (chat, alice, bob)
  }

  /// What `connection` is answered for each request about `room`, with
  /// the room's name written `#R`: two rooms that answer alike are alike
  /// to whoever asked.
  func answers(
    _ chat: EngineHarness, _ connection: ConnectionID, _ room: String, _ requests: [String]
  ) -> [[String]] {
    requests.map { request in
      chat.send(connection, request.replacingOccurrences(of: "#R", with: room)).map {
        $0.replacingOccurrences(of: room, with: "#R")
      }
    }
  }

  static let queries = [
    "ROOMS", "WHO #R", "HISTORY #R", "HISTORY #R 10 BEFORE 3", "HISTORY #R 10 AFTER 1",
    "TOPIC #R", "CONVERSATIONS", "MARKREAD #R 1", "SCHEDULED #R", "SCHEDULED", "ACCESS #R",
    "TOPIC #R :mine now", "PART #R", "INVITE #R carol", "ACCESS #R public", "ACCESS #R invite",
    "REDACT #R 1",
  ]

  static let writes = [
    "JOIN #R", "JOIN #R group=ops", "JOIN #R invite", "SAY #R :hello?", "ACTION #R waves",
    "NOTICE #R :hi",
    "SAYAT #R +1h :later", "SAYEVERY #R daily@09:00 :daily",
  ]

  @Test("an outsider is answered for a private room as for a room that does not exist")
  func outsiderLearnsNothing() {
    let (chat, _, _) = privateRooms()
    let carol = chat.connect("carol")
    let before = chat.journal.records.count
    let nonexistent = answers(chat, carol, "#nosuch", Self.queries)
    #expect(nonexistent[0] == ["OK ROOMS 0"])
    #expect(nonexistent[1] == ["OK WHO #R 0"])
    #expect(answers(chat, carol, "#ops", Self.queries) == nonexistent)
    #expect(answers(chat, carol, "#plan", Self.queries) == nonexistent)
    #expect(chat.journal.records.count == before)
    #expect(chat.engine.roomCount == 2)
  }

  @Test("writing to or joining a private room answers NOACCESS, the same for every private room")
  func outsiderWritesRefused() {
    let (chat, alice, bob) = privateRooms()
    let carol = chat.connect("carol")
    let before = chat.journal.records.count
    let ops = answers(chat, carol, "#ops", Self.writes)
    #expect(ops[0] == ["ERR JOIN NOACCESS :#R is not open to you"])
    #expect(ops[3] == ["ERR SAY NOACCESS :#R is not open to you"])
    #expect(ops.allSatisfy { $0.count == 1 && $0[0].contains(" NOACCESS :#R is not open to you") })
    #expect(answers(chat, carol, "#plan", Self.writes) == ops)
    #expect(chat.journal.records.count == before)
    #expect(chat.output.take(alice).isEmpty && chat.output.take(bob).isEmpty)
  }

  @Test("a member of the group joins, reads and writes; ROOMS marks the room PRIVATE")
  func groupMember() {
    let (chat, alice, bob) = privateRooms()
    #expect(chat.send(bob, "ROOMS") == ["ROOM #ops 2 PRIVATE :deploy at 18:00", "OK ROOMS 1"])
    #expect(chat.send(alice, "ROOMS").first == "ROOM #ops 2 PRIVATE :deploy at 18:00")
    #expect(chat.send(bob, "HISTORY #ops").count == 2)
    #expect(chat.send(bob, "SAY #ops :ack").first?.hasPrefix("OK SAY") == true)
    #expect(chat.send(bob, "ACCESS #ops") == ["OK ACCESS #ops group=ops"])
    #expect(
      chat.send(bob, "WHO #ops") == ["MEMBER #ops alice", "MEMBER #ops bob", "OK WHO #ops 2"])
  }

  @Test("the creator and the group's members may change the access; invited users may not")
  func whoMayChange() {
    let (chat, alice, bob) = privateRooms()
    let carol = chat.connect("carol")
    #expect(chat.send(bob, "INVITE #ops carol") == ["OK INVITE #ops carol"])
    #expect(chat.output.take(carol) == ["INVITE #ops carol bob"], "the invited user is told")
    #expect(chat.send(carol, "JOIN #ops").last == "OK JOIN #ops 3")
    // carol, invited, reads it but is no operator (chatbroker(7), "Moderation").
    #expect(
      chat.send(carol, "INVITE #ops nobody") == [
        "ERR INVITE NOTOPERATOR :only an operator of #ops invites to it (+i)"
      ])
    #expect(
      chat.send(carol, "ACCESS #ops public") == ["ERR ACCESS NOACCESS :#ops is not open to you"])
    _ = chat.output.take(alice)
    _ = chat.output.take(bob)
    // #plan has no group: only alice may invite to it.
    #expect(
      chat.send(bob, "INVITE #plan carol") == ["ERR INVITE NOACCESS :#plan is not open to you"])
    #expect(chat.send(alice, "INVITE #plan carol") == ["OK INVITE #plan carol"])
    #expect(chat.output.take(carol) == ["INVITE #plan carol alice"])
    #expect(
      chat.send(carol, "INVITE #plan bob") == ["ERR INVITE NOTJOINED :you have not joined #plan"])
    #expect(
      chat.send(alice, "INVITE #plan nobody") == [
        "ERR INVITE NOSUCHUSER :there is no user named \"nobody\" on this host"
      ])
    #expect(chat.send(carol, "JOIN #plan").last == "OK JOIN #plan 2")
    _ = chat.output.take(bob)
    #expect(chat.send(carol, "ACCESS #plan") == ["OK ACCESS #plan invite"])
  }

  @Test(
    "an operator makes a public room private (who is in it is invited), JOIN does not; a group room is made by a member of the group"
  )
  func refusals() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let carol = chat.connect("carol")
    chat.send(alice, "JOIN #pub")
    chat.send(carol, "JOIN #pub")
    _ = chat.output.take(alice)
    #expect(
      chat.send(alice, "JOIN #pub invite") == [
        "ERR JOIN LIMIT :#pub exists and is public; a public room stays public, create another"
      ])
    #expect(
      chat.send(carol, "ACCESS #pub invite") == [
        "ERR ACCESS NOTOPERATOR :you are not an operator of #pub"
      ])
    #expect(chat.send(alice, "INVITE #pub bob") == ["OK INVITE #pub bob"])
    #expect(chat.send(alice, "ACCESS #pub invite") == ["OK ACCESS #pub invite"])
    #expect(chat.send(carol, "ROOMS") == ["ROOM #pub 2 PRIVATE", "OK ROOMS 1"])
    #expect(chat.send(carol, "PART #pub") == ["OK PART #pub"])
    _ = chat.output.take(alice)
    #expect(
      chat.send(carol, "JOIN #ops group=ops") == [
        "ERR JOIN NOACCESS :you are not in group ops: a room private to a group is made by one of its members"
      ])
    #expect(chat.send(carol, "ROOMS") == ["ROOM #pub 1 PRIVATE", "OK ROOMS 1"])
    #expect(chat.send(alice, "JOIN #ops group=ops") == ["OK JOIN #ops 1"])
    #expect(
      chat.send(alice, "JOIN #ops invite") == [
        "ERR JOIN LIMIT :#ops exists with access group=ops; ACCESS #ops <access> changes it"
      ])
    #expect(chat.send(alice, "JOIN #ops group=ops") == ["OK JOIN #ops 1"])
    #expect(
      chat.send(alice, "ACCESS #ops group=wheel") == [
        "ERR ACCESS NOACCESS :you are not in group wheel: a room is made private to a group by one of its members"
      ])
    #expect(
      chat.send(alice, "JOIN #x group=") == [
        "ERR JOIN BADNAME :\"group=\" is not invite or group=<group> (a Unix group's name)"
      ])
  }

  @Test("a user taken out of the group keeps the room until their next JOIN, which removes them")
  func removedFromGroup() {
    let (chat, alice, bob) = privateRooms()
    chat.groups.members["ops"] = ["alice"]
    // Not looked up again yet: bob still reads #ops.
    #expect(chat.send(bob, "ROOMS").first == "ROOM #ops 2 PRIVATE :deploy at 18:00")
    #expect(
      chat.send(bob, "JOIN #elsewhere") == [
        "PART #ops bob", "OK JOIN #elsewhere 1",
      ])
    #expect(chat.output.take(alice) == ["PART #ops bob"])
    #expect(
      chat.journal.records.contains(
        .leave(user: "bob", room: RoomName("#ops")!, at: chat.clock.now)))
    #expect(chat.send(bob, "JOIN #ops") == ["ERR JOIN NOACCESS :#ops is not open to you"])
    #expect(chat.send(bob, "ROOMS") == ["ROOM #elsewhere 1", "OK ROOMS 1"])
    #expect(chat.send(bob, "CONVERSATIONS").last == "OK CONVERSATIONS 1")
    #expect(chat.send(bob, "WHO #ops") == ["OK WHO #ops 0"])
    #expect(
      chat.send(bob, "SAY #ops :still here?") == ["ERR SAY NOACCESS :#ops is not open to you"])
    #expect(chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
  }

  @Test(
    "a new session looks the groups up afresh: the room is hidden at once, and gone at the JOIN")
  func removedThenReconnects() {
    let (chat, _, bob) = privateRooms()
    chat.engine.disconnect(bob)
    chat.groups.members["ops"] = ["alice"]
    let again = chat.connect("bob")
    #expect(chat.send(again, "CONVERSATIONS") == ["OK CONVERSATIONS 0"])
    #expect(chat.send(again, "ROOMS") == ["OK ROOMS 0"])
    #expect(chat.send(again, "JOIN #pub") == ["OK JOIN #pub 1"])
    #expect(chat.engine.rooms(of: "bob") == [RoomName("#pub")!])
  }

  @Test(
    "groups are looked up once per session and at JOINs where private rooms are in play, not per room listed"
  )
  func lookupsBounded() {
    let (chat, _, bob) = privateRooms()
    let lookups = chat.groups.lookups
    for _ in 0..<5 {
      chat.send(bob, "ROOMS")
      chat.send(bob, "HISTORY #ops")
      chat.send(bob, "CONVERSATIONS")
    }
    #expect(chat.groups.lookups == lookups)
    chat.send(bob, "JOIN #ops")
    #expect(chat.groups.lookups == lookups + 1)
    // carol, who never met a private room, joins public rooms for free.
    let carol = chat.connect("carol")
    chat.send(carol, "JOIN #pub")
    chat.send(carol, "JOIN #pub2")
    #expect(chat.groups.lookups == lookups + 1)
    chat.send(carol, "ROOMS")
    chat.send(carol, "ROOMS")
    #expect(chat.groups.lookups == lookups + 2, "one lookup for #ops, kept for the session")
  }

  @Test(
    "ACCESS changes who may read at once: made public, anyone sees it; to invite, the group loses it"
  )
  func accessChanged() {
    let (chat, alice, bob) = privateRooms()
    let carol = chat.connect("carol")
    // bob was in it by his group, and is out at once; alice sees him go.
    #expect(chat.send(alice, "ACCESS #ops invite") == ["PART #ops bob", "OK ACCESS #ops invite"])
    #expect(chat.output.take(bob) == ["PART #ops bob"])
    #expect(chat.send(bob, "WHO #ops") == ["OK WHO #ops 0"])
    #expect(chat.send(alice, "ACCESS #ops public") == ["OK ACCESS #ops public"])
    #expect(chat.send(carol, "ROOMS").first == "ROOM #ops 1 :deploy at 18:00")
    #expect(chat.send(carol, "JOIN #ops").last == "OK JOIN #ops 2")
    #expect(
      chat.send(carol, "ACCESS #ops invite").first?.hasPrefix("ERR ACCESS NOTOPERATOR") == true)
  }

  @Test(
    "a shared room is never private, and a private room that the shared rooms come to match is not shared"
  )
  func sharedRefused() {
    let (chat, alice, _) = privateRooms()
    chat.engine.federate(FederationSettings(node: "h1", patterns: ["#ops", "#team-*"]))
    chat.engine.streamHoldsOwnLines(upTo: nil)
    #expect(
      chat.send(alice, "JOIN #team-a group=ops") == [
        "ERR JOIN LIMIT :#team-a is shared with other hosts, and a shared room is never private"
      ])
    #expect(chat.send(alice, "SAY #ops :stays here").first?.hasPrefix("OK SAY ") == true)
    #expect(chat.engine.outbox.isEmpty)
    #expect(chat.send(alice, "ROOMS").first == "ROOM #ops 2 PRIVATE :deploy at 18:00")
  }

  @Test("restart and compaction keep the access and the invites")
  func durable() {
    let (chat, alice, _) = privateRooms()
    chat.send(alice, "INVITE #plan carol")
    for engine in [chat.restarted(), compacted(chat)] {
      let carol = engine.connect("carol")
      let bob = engine.connect("bob")
      #expect(engine.send(carol, "ROOMS") == ["ROOM #plan 0 PRIVATE", "OK ROOMS 1"])
      #expect(engine.send(bob, "ROOMS") == ["ROOM #ops 0 PRIVATE :deploy at 18:00", "OK ROOMS 1"])
      #expect(engine.send(carol, "HISTORY #ops") == ["OK HISTORY #ops 0"])
      #expect(engine.send(bob, "JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"])
    }
  }

  /// A fresh engine replaying what compaction writes of this one.
  func compacted(_ chat: EngineHarness) -> EngineHarness {
    let journal = MemoryJournal()
    chat.engine.snapshot().forEachRecord { journal.records.append($0) }
    let restarted = EngineHarness(clock: chat.clock, journal: journal)
    for record in journal.records { restarted.engine.replay(record) }
    restarted.engine.finishReplay()
    return restarted
  }

  @Test("a failed sync rolls back a private room's creation, an access change and an invite")
  func rolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let carol = chat.connect("carol")
    chat.send(alice, "JOIN #plan invite")
    chat.send(alice, "SAY #plan :kept")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    #expect(chat.send(alice, "INVITE #plan carol") == ["OK INVITE #plan carol"])
    #expect(chat.output.kinds["OK INVITE #plan carol"] == .outcome(.invite))
    // Told of an invitation that shows a record: not once the sync failed.
    #expect(chat.output.take(carol) == ["INVITE #plan carol alice"])
    #expect(chat.output.kinds["INVITE #plan carol alice"] == .revealing)
    #expect(chat.send(alice, "ACCESS #plan public") == ["OK ACCESS #plan public"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(chat.send(carol, "ROOMS") == ["OK ROOMS 0"])
    #expect(chat.send(carol, "JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"])
    #expect(chat.send(alice, "ACCESS #plan") == ["OK ACCESS #plan invite"])
  }
}

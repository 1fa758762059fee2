import Broker
import LineProtocol
import TestSupport
import Testing

/// Who may read a room, decided when they read (chatbroker(7), "Private
/// rooms" and "Moderation"; chatbroker(8), "SECURITY CONSIDERATIONS"), on
/// virtual time with a fake group directory: group `ops` holds alice and
/// bob, not carol nor dave.
@Suite("Engine: who may read a room, asked at every read")
struct EngineReadAccessTests {
  /// The scene: alice makes #ops private to group ops, bob joins it;
  /// #plan private to the invited, carol invited and in it; #sec public
  /// and secret (+s), bob in it. Each room has a topic and a line holding
  /// "walnut"; #pub is public and plain, with a line without it.
  struct Scene {
    let chat: EngineHarness
    let alice: ConnectionID
    let bob: ConnectionID
    let carol: ConnectionID
    let dave: ConnectionID
    /// The id of alice's line in each room.
    let ids: [String: String]
  }

  func scene() -> Scene {
    let chat = EngineHarness()
    chat.users.names.insert("dave")
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    let dave = chat.connect("dave")
    #expect(chat.send(alice, "JOIN #ops group=ops") == ["OK JOIN #ops 1"])
    chat.send(bob, "JOIN #ops")
    _ = chat.output.take(alice)
    #expect(chat.send(alice, "JOIN #plan invite") == ["OK JOIN #plan 1"])
    chat.send(alice, "INVITE #plan carol")
    chat.send(carol, "JOIN #plan")
    chat.send(alice, "JOIN #sec")
    #expect(chat.send(alice, "MODE #sec +s") == ["OK MODE #sec +s"])
    chat.send(bob, "JOIN #sec")
    chat.send(alice, "JOIN #pub")
    chat.send(alice, "SAY #pub :nothing to see")
    var ids: [String: String] = [:]
    for room in ["#ops", "#plan", "#sec"] {
      chat.send(alice, "TOPIC \(room) :plans for \(room)")
      ids[room] = okID(chat.send(alice, "SAY \(room) :the walnut is in \(room)"))
    }
    for connection in [alice, bob, carol, dave] { _ = chat.output.take(connection) }
    return Scene(chat: chat, alice: alice, bob: bob, carol: carol, dave: dave, ids: ids)
  }

  /// The requests of each verb that could show something of the room
  /// `#R` (`<id>`: alice's line in it). The switch has no default, so a
  /// new verb does not compile until it says what it reads; a verb that
  /// writes, or that reads only the asker's own state, has none here and
  /// says why.
  static func reads(_ verb: Verb, id: String) -> [String] {
    switch verb {
    case .rooms: ["ROOMS", "ROOMS AFTER #a"]
    case .who: ["WHO #R"]
    case .topic: ["TOPIC #R", "TOPIC #R :mine now"]
    case .history: ["HISTORY #R", "HISTORY #R 10 BEFORE \(id)", "HISTORY #R 10 AFTER 1"]
    case .search: ["SEARCH #R walnut", "SEARCH * walnut", "SEARCH * 5 BEFORE \(id) walnut"]
    case .conversations: ["CONVERSATIONS"]
    case .markRead: ["MARKREAD #R \(id)"]
    case .mode: ["MODE #R", "MODE #R +b", "MODE #R +t"]
    case .access: ["ACCESS #R", "ACCESS #R public"]
    case .invite: ["INVITE #R dave"]
    case .kick: ["KICK #R alice"]
    case .part: ["PART #R"]
    case .redact: ["REDACT #R \(id)"]
    case .amend: ["AMEND #R \(id) :changed"]
    case .thread: ["THREAD #R \(id)", "THREAD #R \(id) 5"]
    case .react: ["REACT #R \(id) 👍"]
    case .unreact: ["UNREACT #R \(id) 👍"]
    case .scheduled: ["SCHEDULED #R", "SCHEDULED"]
    // Writes: the name of a room is taken and cannot be hidden, so these
    // are answered NOACCESS, one text for every room (writesRefused).
    case .join, .say, .block, .action, .notice, .reply, .sayAt, .sayEvery: []
    // One's own pending lines, by id, whatever their room.
    case .cancel, .reschedule, .edit, .skip, .replace: []
    // Nothing of any room: WEB issues or revokes one's own page tokens.
    case .away, .ping, .help, .quit, .web: []
    }
  }

  /// What `connection` is answered for every read of every verb about
  /// `room`, with the room's name written `#R`.
  func answers(_ chat: EngineHarness, _ connection: ConnectionID, _ room: String, id: String)
    -> [String]
  {
    Verb.allCases.flatMap { Self.reads($0, id: id) }.flatMap { request in
      chat.send(connection, request.replacingOccurrences(of: "#R", with: room)).map {
        "\(request) -> " + $0.replacingOccurrences(of: room, with: "#R")
      }
    }
  }

  /// Whether `user`'s answers about `room` are those about a room that
  /// does not exist, for every verb.
  func expectHidden(
    _ scene: Scene, _ connection: ConnectionID, _ room: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let id = scene.ids[room] ?? "1"
    let missing = answers(scene.chat, connection, "#nosuch", id: id)
    let hidden = answers(scene.chat, connection, room, id: id)
    #expect(hidden == missing, sourceLocation: sourceLocation)
    let shown = hidden.map { $0.split(separator: " -> ", maxSplits: 1).last ?? "" }
    #expect(
      !shown.contains { $0.contains("walnut is in #R") || $0.contains("plans for #R") },
      sourceLocation: sourceLocation)
  }

  @Test("a secret room (+s) is to whoever is not in it a room that does not exist, on every verb")
  func secretHidden() {
    let scene = scene()
    expectHidden(scene, scene.dave, "#sec")
    #expect(scene.chat.send(scene.dave, "JOIN #sec").last == "OK JOIN #sec 3", "+s is not +i")
    #expect(scene.chat.send(scene.dave, "HISTORY #sec").count == 2)
  }

  @Test("a private room is to an outsider a room that does not exist, on every verb")
  func privateHidden() {
    let scene = scene()
    expectHidden(scene, scene.dave, "#plan")
    expectHidden(scene, scene.dave, "#ops")
  }

  @Test("an invitee kicked and banned reads nothing of the room, on every verb")
  func kickedAndBannedHidden() {
    let scene = scene()
    #expect(scene.chat.send(scene.alice, "KICK #plan carol").last == "OK KICK #plan carol")
    #expect(scene.chat.send(scene.alice, "MODE #plan +b carol") == ["OK MODE #plan +b carol!*@*"])
    #expect(scene.chat.output.take(scene.carol) == ["KICK #plan carol alice"])
    expectHidden(scene, scene.carol, "#plan")
  }

  @Test(
    "a member banned is removed at once, reads nothing, and the ban taken back lets them not in")
  func bannedMember() {
    let scene = scene()
    let chat = scene.chat
    #expect(chat.send(scene.alice, "MODE #sec +b bob").last == "OK MODE #sec +b bob!*@*")
    #expect(chat.output.take(scene.bob).contains("KICK #sec bob alice :banned"))
    expectHidden(scene, scene.bob, "#sec")
    #expect(chat.send(scene.alice, "MODE #plan +b carol").last == "OK MODE #plan +b carol!*@*")
    #expect(chat.send(scene.alice, "MODE #plan -b carol").last == "OK MODE #plan -b carol!*@*")
    _ = chat.output.take(scene.carol)
    #expect(
      chat.send(scene.carol, "JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"],
      "a ban took the invitation")
  }

  @Test("an invitee banned from a room private to a group gets the KICK line and is out")
  func bannedFromGroupRoom() {
    let scene = scene()
    let chat = scene.chat
    chat.send(scene.alice, "INVITE #ops carol")
    chat.send(scene.carol, "JOIN #ops")
    _ = chat.output.take(scene.bob)
    _ = chat.output.take(scene.alice)
    #expect(
      chat.send(scene.bob, "MODE #ops +b carol") == [
        "KICK #ops carol bob :banned", "OK MODE #ops +b carol!*@*",
      ])
    #expect(chat.output.take(scene.carol) == ["KICK #ops carol bob :banned"])
    #expect(
      chat.output.take(scene.alice) == [
        "MODE #ops bob +b carol!*@*", "KICK #ops carol bob :banned",
      ])
    chat.send(scene.bob, "MODE #ops -b carol")
    #expect(chat.send(scene.carol, "JOIN #ops") == ["ERR JOIN NOACCESS :#ops is not open to you"])
  }

  @Test(
    "a kicked invitee is no longer invited: JOIN is refused, after a restart and a compaction too")
  func kickDurable() {
    let scene = scene()
    let chat = scene.chat
    chat.send(scene.alice, "KICK #plan carol :enough")
    #expect(chat.output.take(scene.carol) == ["KICK #plan carol alice :enough"])
    #expect(chat.send(scene.carol, "JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"])
    for engine in [chat.restarted(), compacted(chat)] {
      let carol = engine.connect("carol")
      #expect(engine.send(carol, "JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"])
      #expect(engine.send(carol, "HISTORY #plan") == ["OK HISTORY #plan 0"])
    }
  }

  @Test(
    "a kick is journaled as a leave with by, which takes the invitation; one without by, as journals before 1.5 have, leaves it"
  )
  func kickRecord() throws {
    let scene = scene()
    let chat = scene.chat
    chat.send(scene.alice, "KICK #plan carol")
    let kick = JournalRecord.leave(
      user: "carol", room: RoomName("#plan")!, at: chat.clock.now, by: "alice")
    // Then where carol's session left #plan (a `seen` record, since 1.7).
    #expect(chat.journal.records.suffix(2).first == kick)
    #expect(
      String(decoding: kick.jsonLine, as: UTF8.self)
        == ##"{"type":"leave","user":"carol","room":"#plan","time":"2026-11-30T17:00:00.000Z","by":"alice"}"##
        + "\n")
    let older = MemoryJournal()
    older.records =
      chat.journal.records.map {
        $0 == kick ? .leave(user: "carol", room: RoomName("#plan")!, at: chat.clock.now) : $0
      }
    let replayed = EngineHarness(clock: chat.clock, journal: older)
    for record in older.records { replayed.engine.replay(record) }
    replayed.engine.finishReplay()
    let carol = replayed.connect("carol")
    #expect(replayed.send(carol, "JOIN #plan").last == "OK JOIN #plan 1", "still invited")
    let bad =
      ##"{"type":"leave","user":"carol","room":"#plan","time":"2026-11-30T17:00:00.000Z","by":"no body"}"##
    #expect(throws: JournalFormatError.self) {
      try Array(bad.utf8).withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
    }
  }

  @Test("LUSERS counts the rooms one may see: none that is private, secret or banned to them")
  func visibleRoomCount() {
    let scene = scene()
    let engine = scene.chat.engine
    #expect(engine.visibleRoomCount(for: "alice") == 4)
    #expect(engine.visibleRoomCount(for: "bob") == 3)
    #expect(engine.visibleRoomCount(for: "carol") == 2)
    #expect(engine.visibleRoomCount(for: "dave") == 1)
    scene.chat.send(scene.alice, "MODE #pub +b dave")
    #expect(engine.visibleRoomCount(for: "dave") == 0)
    #expect(engine.visibleRoomCount(for: "root") == 4)
  }

  @Test("a failed sync takes a kick back: the invitee is invited and in their rooms again")
  func kickRolledBack() {
    let scene = scene()
    let chat = scene.chat
    chat.engine.trackUnsyncedRecords()
    chat.send(scene.alice, "KICK #plan carol")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(chat.engine.rooms(of: "carol") == [RoomName("#plan")!])
    #expect(chat.send(scene.carol, "JOIN #plan").last == "OK JOIN #plan 2")
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

  @Test(
    "group membership is asked again once it is 60 s old, not before: bob taken out of ops reads #ops for 59.999 s, then nothing"
  )
  func stalenessBound() {
    let scene = scene()
    let chat = scene.chat
    chat.groups.members["ops"] = ["alice"]
    let lookups = chat.groups.lookups
    chat.advance(to: "2026-11-30T17:00:59.999Z")
    #expect(chat.send(scene.bob, "HISTORY #ops").last == "OK HISTORY #ops 1")
    chat.send(scene.alice, "SAY #ops :still 59.999 s")
    #expect(chat.output.take(scene.bob).count == 1, "the line reached bob")
    #expect(chat.groups.lookups == lookups, "not asked before the bound")
    chat.advance(to: "2026-11-30T17:01:00.000Z")
    chat.send(scene.alice, "SAY #ops :now 60 s")
    #expect(chat.output.take(scene.bob) == ["PART #ops bob"])
    #expect(chat.groups.lookups > lookups)
    expectHidden(scene, scene.bob, "#ops")
    #expect(chat.send(scene.alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
  }

  @Test(
    "a new session asks the groups again while another session of the user stays: it sees nothing of the room"
  )
  func newSessionAsksAgain() {
    let scene = scene()
    let chat = scene.chat
    chat.groups.members["ops"] = ["alice"]
    let again = chat.connect("bob")
    expectHidden(scene, again, "#ops")
    #expect(chat.output.take(scene.bob) == ["PART #ops bob"], "the first session left it too")
  }
}

import Broker
import LineProtocol
import TestSupport
import Testing

/// Rooms that stay yours, read markers and `CONVERSATIONS` (chatbroker(7),
/// "Your rooms and read markers"), on virtual time.
@Suite("Engine: your rooms, read markers and CONVERSATIONS")
struct EngineConversationTests {
  /// bob has #retro; carol writes there and to him, mentioning him once.
  private func awayScene() -> (
    chat: EngineHarness, bob: ConnectionID, carol: ConnectionID, ids: [String]
  ) {
    let chat = EngineHarness()
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(bob, "JOIN #retro")
    chat.send(carol, "JOIN #retro")
    var ids = [okID(chat.send(bob, "SAY #retro my own line"))]
    chat.engine.disconnect(bob)
    ids.append(okID(chat.send(carol, "SAY #retro what went well?")))
    ids.append(okID(chat.send(carol, "SAY #retro @bob you fixed the build")))
    ids.append(okID(chat.send(carol, "SAY @bob lunch?")))
    return (chat, chat.connect("bob"), carol, ids)
  }

  @Test("CONVERSATIONS lists your rooms and direct conversations with unread and mentions")
  func listsConversations() {
    let (chat, bob, _, ids) = awayScene()
    #expect(
      conversations(chat, bob) == [
        "CONV #retro \(ids[2]) 2026-11-30T17:00:00.000Z - 2 1",
        "CONV @carol \(ids[3]) 2026-11-30T17:00:00.000Z - 1 1",
        "OK CONVERSATIONS 2",
      ])
  }

  @Test("your own lines are never unread, in a room or a direct conversation")
  func ownLinesAreRead() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #a")
    let id = okID(chat.send(alice, "SAY #a mine"))
    let direct = okID(chat.send(alice, "SAY @bob hi bob"))
    #expect(
      conversations(chat, alice) == [
        "CONV #a \(id) 2026-11-30T17:00:00.000Z - 0 0",
        "CONV @bob \(direct) 2026-11-30T17:00:00.000Z - 0 0",
        "OK CONVERSATIONS 2",
      ])
    let bob = chat.connect("bob")
    #expect(
      conversations(chat, bob) == [
        "CONV @alice \(direct) 2026-11-30T17:00:00.000Z - 1 1", "OK CONVERSATIONS 1",
      ], "the recipient has it unread: a direct message always counts as a mention")
  }

  @Test("a room with no message yet shows - for its newest message and time")
  func emptyRoom() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #quiet")
    #expect(conversations(chat, alice) == ["CONV #quiet - - - 0 0", "OK CONVERSATIONS 1"])
    #expect(conversations(chat, chat.connect("bob")) == ["OK CONVERSATIONS 0"])
  }

  @Test(
    "a mention is @you as a word or you: at the start",
    arguments: [
      ("@bob look", true), ("look @bob", true), ("thanks @bob.", true), ("(@bob, hi)", true),
      ("bob: look", true), ("bob@host", false), ("@bobby", false), ("@bob.smith", false),
      ("hey bob: look", false), ("bob look", false), ("@carol @bob", true), ("@Bob", false),
    ])
  func mentions(text: String, mentions: Bool) {
    let chat = EngineHarness()
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(bob, "JOIN #a")
    chat.send(carol, "SAY #a :\(text)")
    let line = conversations(chat, bob).first ?? ""
    #expect(line.hasSuffix(mentions ? " 1 1" : " 1 0"), "\(line)")
  }

  @Test("MARKREAD moves the marker forward only; an older id answers the current marker")
  func forwardOnly() {
    let (chat, bob, carol, ids) = awayScene()
    #expect(chat.send(bob, "MARKREAD #retro \(ids[1])") == ["OK MARKREAD #retro \(ids[1])"])
    #expect(conversations(chat, bob).first?.hasSuffix(" \(ids[1]) 1 1") == true)
    #expect(chat.send(bob, "MARKREAD #retro \(ids[2])") == ["OK MARKREAD #retro \(ids[2])"])
    #expect(conversations(chat, bob).first?.hasSuffix(" \(ids[2]) 0 0") == true)
    let written = chat.journal.records.count
    #expect(chat.send(bob, "MARKREAD #retro \(ids[0])") == ["OK MARKREAD #retro \(ids[2])"])
    #expect(chat.send(bob, "MARKREAD #retro \(ids[2])") == ["OK MARKREAD #retro \(ids[2])"])
    #expect(chat.journal.records.count == written, "a marker that does not move writes nothing")
    chat.send(carol, "SAY #retro one more")
    #expect(conversations(chat, bob).first?.hasSuffix(" \(ids[2]) 1 0") == true)
  }

  @Test("a direct conversation's marker is set with @user, from either side")
  func directMarker() {
    let (chat, bob, carol, ids) = awayScene()
    #expect(chat.send(bob, "MARKREAD @carol \(ids[3])") == ["OK MARKREAD @carol \(ids[3])"])
    #expect(conversations(chat, bob)[1].hasSuffix(" \(ids[3]) 0 0"))
    #expect(
      conversations(chat, carol)[1] == "CONV @bob \(ids[3]) 2026-11-30T17:00:00.000Z - 0 0",
      "carol's marker is her own")
    #expect(
      chat.journal.records.last
        == .read(user: "bob", target: .user("carol"), id: MessageID(ids[3])!, at: chat.clock.now))
  }

  @Test("the marker compares places in the history, not ids: a late delivery is unread")
  func lateDelivery() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(bob, "JOIN #a")
    let early = okID(chat.send(alice, "SAYAT #a +1m scheduled first, delivered last"))
    let later = okID(chat.send(alice, "SAY #a sent now"))
    chat.send(bob, "MARKREAD #a \(later)")
    chat.advance(to: "2026-11-30T17:01:00.000Z")
    #expect(
      conversations(chat, bob).first
        == "CONV #a \(early) 2026-11-30T17:01:00.000Z \(later) 1 0")
    #expect(chat.send(bob, "MARKREAD #a \(early)") == ["OK MARKREAD #a \(early)"])
    #expect(chat.send(bob, "MARKREAD #a \(later)") == ["OK MARKREAD #a \(early)"])
  }

  @Test("since 1.6 MARKREAD without an id says where the marker is, and with a time moves it there")
  func markReadByTimeAndQuery() {
    let (chat, bob, carol, ids) = awayScene()
    #expect(chat.send(bob, "MARKREAD #retro") == ["MARKREAD #retro *", "OK MARKREAD #retro *"])
    #expect(
      chat.send(bob, "MARKREAD #retro 2000-01-01T00:00:00.000Z")
        == ["MARKREAD #retro *", "OK MARKREAD #retro *"], "nothing was delivered by then")
    let other = chat.connect("bob")
    #expect(
      chat.send(bob, "MARKREAD #retro 2026-11-30T17:00:00.000Z")
        == ["MARKREAD #retro \(ids[2])", "OK MARKREAD #retro \(ids[2])"],
      "the newest message delivered by then")
    #expect(chat.output.take(other) == ["MARKREAD #retro \(ids[2])"], "as when it moves by id")
    #expect(conversations(chat, bob).first?.hasSuffix(" \(ids[2]) 0 0") == true)
    #expect(
      chat.send(bob, "MARKREAD #retro")
        == ["MARKREAD #retro \(ids[2])", "OK MARKREAD #retro \(ids[2])"])
    chat.send(carol, "JOIN #private invite")
    #expect(
      chat.send(bob, "MARKREAD #private")
        == chat.send(bob, "MARKREAD #nowhere")
        .map { $0.replacingOccurrences(of: "#nowhere", with: "#private") },
      "a room you may not read answers as one that does not exist")
  }

  @Test("MARKREAD refuses an unknown id, a message of another conversation and a bad target")
  func markReadErrors() {
    let (chat, bob, _, ids) = awayScene()
    let hint = "give the id of a delivered message, as MSG and HISTORY show it"
    #expect(
      chat.send(bob, "MARKREAD #retro zz") == [
        "ERR MARKREAD NOSUCHMSG :no message zz in the history of #retro; \(hint)"
      ])
    #expect(
      chat.send(bob, "MARKREAD #retro \(ids[3])") == [
        "ERR MARKREAD NOSUCHMSG :no message \(ids[3]) in the history of #retro; \(hint)"
      ])
    #expect(
      chat.send(bob, "MARKREAD #nowhere \(ids[0])") == [
        "ERR MARKREAD NOSUCHMSG :no message \(ids[0]) in the history of #nowhere; \(hint)"
      ])
    #expect(
      chat.send(bob, "MARKREAD @alice \(ids[3])") == [
        "ERR MARKREAD NOSUCHMSG :no message \(ids[3]) in the history of @alice; \(hint)"
      ], "carol's direct conversation with bob is not alice's")
    #expect(
      chat.send(bob, "MARKREAD @nobody 1") == [
        "ERR MARKREAD NOSUCHUSER :there is no user named \"nobody\" on this host"
      ])
    #expect(
      chat.send(bob, "MARKREAD retro 1") == [
        "ERR MARKREAD BADNAME :\"retro\" is not a target: use #room (1 to 32 of a-z 0-9 . _ -) or @user"
      ])
    #expect(
      chat.send(bob, "MARKREAD") == [
        "ERR MARKREAD SYNTAX :usage: MARKREAD <target> [<id>|<time>]"
      ])
    #expect(
      chat.send(bob, "MARKREAD #retro 1 2") == [
        "ERR MARKREAD SYNTAX :too many words; usage: MARKREAD <target> [<id>|<time>]"
      ])
    #expect(
      chat.send(bob, "MARKREAD #retro 0001") == [
        "ERR MARKREAD NOSUCHMSG :no message 0001 in the history of #retro"
      ])
    #expect(
      chat.send(bob, "CONVERSATIONS x") == [
        "ERR CONVERSATIONS SYNTAX :too many words; usage: CONVERSATIONS"
      ])
    #expect(!chat.journal.records.contains { if case .read = $0 { true } else { false } })
  }

  @Test("your other sessions get MARKREAD when the marker moves; this one and others' do not")
  func markReadEvent() {
    let (chat, bob, carol, ids) = awayScene()
    let bobAgain = chat.connect("bob")
    chat.send(bob, "MARKREAD @carol \(ids[3])")
    #expect(chat.output.take(bobAgain) == ["MARKREAD @carol \(ids[3])"])
    #expect(chat.output.take(bob) == [])
    #expect(chat.output.take(carol) == [])
    chat.send(bob, "MARKREAD @carol \(ids[3])")
    #expect(chat.output.take(bobAgain) == [], "the marker did not move")
  }

  @Test("PART from one of two sessions keeps the room yours; from the last it stops being yours")
  func partFromOneOfTwo() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let aliceAgain = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    chat.send(aliceAgain, "JOIN #ops")
    #expect(chat.send(alice, "PART #ops") == ["OK PART #ops"])
    #expect(conversations(chat, alice) == ["CONV #ops - - - 0 0", "OK CONVERSATIONS 1"])
    #expect(
      chat.send(alice, "PART #ops") == [
        "ERR PART NOTJOINED :you have not joined #ops; another session of yours has"
      ])
    #expect(chat.send(aliceAgain, "PART #ops") == ["OK PART #ops"])
    #expect(conversations(chat, alice) == ["OK CONVERSATIONS 0"])
    #expect(
      chat.journal.records.map(\.kind) == ["room", "mode", "member", "leave"],
      "the room, its creator's +o, one member record for both sessions, one leave")
  }

  @Test("closing every session is no PART: the room stays yours, and is not joined again")
  func disconnectKeepsRooms() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    chat.engine.disconnect(alice)
    let again = chat.connect("alice")
    #expect(conversations(chat, again) == ["CONV #ops - - - 0 0", "OK CONVERSATIONS 1"])
    #expect(chat.send(again, "WHO #ops") == ["OK WHO #ops 0"], "a new session joins nothing")
    #expect(chat.send(again, "PART #ops") == ["OK PART #ops"], "parting it needs no JOIN")
    #expect(conversations(chat, again) == ["OK CONVERSATIONS 0"])
    #expect(chat.send(again, "ROOMS") == ["OK ROOMS 0"], "an unused room is forgotten then")
  }

  @Test("rooms, markers and counts survive a restart and a compaction")
  func survivesRestartAndCompaction() {
    let (chat, bob, _, ids) = awayScene()
    chat.send(bob, "MARKREAD #retro \(ids[1])")
    chat.send(bob, "JOIN #quiet")
    let before = conversations(chat, bob)
    #expect(before.count == 4)

    let restarted = chat.restarted()
    #expect(conversations(restarted, restarted.connect("bob")) == before)

    let scratch = Engine(clock: chat.clock, users: chat.users, journal: MemoryJournal())
    for record in chat.journal.records { scratch.replay(record) }
    let compacted = MemoryJournal()
    scratch.snapshot().forEachRecord { compacted.records.append($0) }
    #expect(compacted.records.filter { $0.kind == "member" }.count == 3, "bob's two, carol's one")
    #expect(compacted.records.filter { $0.kind == "read" }.count == 1)
    let fromCompacted = EngineHarness(clock: chat.clock, journal: compacted).restarted()
    #expect(conversations(fromCompacted, fromCompacted.connect("bob")) == before)
    #expect(
      conversations(fromCompacted, fromCompacted.connect("carol"))
        == conversations(chat, chat.connect("carol")))
  }

  @Test(
    "a marker on a message dropped from a full history counts every kept one, also after replay")
  func droppedMarkerMessage() {
    var limits = Limits()
    limits.historyPerConversation = 3
    let chat = EngineHarness(limits: limits)
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(bob, "JOIN #a")
    let first = okID(chat.send(carol, "SAY #a one"))
    chat.send(bob, "MARKREAD #a \(first)")
    for text in ["two", "three", "four", "five"] { chat.send(carol, "SAY #a \(text)") }
    let live = conversations(chat, bob)
    #expect(live.first?.hasSuffix(" \(first) 3 0") == true, "\(live)")
    let restarted = chat.restarted()
    #expect(conversations(restarted, restarted.connect("bob")) == live)
    let scratch = Engine(
      limits: limits, clock: chat.clock, users: chat.users, journal: MemoryJournal())
    for record in chat.journal.records { scratch.replay(record) }
    let compacted = MemoryJournal()
    scratch.snapshot().forEachRecord { compacted.records.append($0) }
    let fromCompacted = EngineHarness(limits: limits, clock: chat.clock, journal: compacted)
      .restarted()
    #expect(conversations(fromCompacted, fromCompacted.connect("bob")) == live)
  }

  @Test("a failed journal write refuses JOIN, PART and MARKREAD with STORAGE and changes nothing")
  func storageFailure() {
    let (chat, bob, _, ids) = awayScene()
    let before = conversations(chat, bob)
    chat.journal.failing = true
    #expect(chat.send(bob, "JOIN #new").first?.hasPrefix("ERR JOIN STORAGE :") == true)
    #expect(
      chat.send(bob, "MARKREAD #retro \(ids[2])").first?.hasPrefix("ERR MARKREAD STORAGE :") == true
    )
    #expect(chat.send(bob, "PART #retro").first?.hasPrefix("ERR PART STORAGE :") == true)
    chat.journal.failing = false
    #expect(conversations(chat, bob) == before)
    #expect(chat.send(bob, "ROOMS").contains("ROOM #new 0") == false)
  }

  @Test("a failed sync rolls back JOIN's, PART's and MARKREAD's records in memory")
  func rollback() {
    let (chat, bob, carol, ids) = awayScene()
    chat.send(bob, "JOIN #gone")
    chat.send(bob, "JOIN #retro")
    chat.engine.trackUnsyncedRecords()
    let before = conversations(chat, bob)
    let synced = chat.journal.records

    chat.send(bob, "MARKREAD #retro \(ids[2])")
    chat.send(bob, "PART #gone")
    chat.send(bob, "JOIN #fresh")
    chat.send(carol, "SAY #retro @bob again")
    chat.send(bob, "MARKREAD @carol \(ids[3])")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)

    #expect(conversations(chat, bob) == before)
    let replayed = EngineHarness(clock: chat.clock)
    for record in synced { replayed.engine.replay(record) }
    replayed.engine.finishReplay()
    #expect(conversations(replayed, replayed.connect("bob")) == before)
  }

  @Test("messages dropped from a full history stop counting, and come back with a rollback")
  func evictionAndRollback() {
    var limits = Limits()
    limits.historyPerConversation = 2
    let chat = EngineHarness(limits: limits)
    chat.engine.trackUnsyncedRecords()
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(bob, "JOIN #a")
    chat.send(carol, "SAY #a @bob one")
    chat.send(carol, "SAY #a two")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    #expect(conversations(chat, bob).first?.hasSuffix(" - 2 1") == true)
    chat.send(carol, "SAY #a three")
    #expect(conversations(chat, bob).first?.hasSuffix(" - 2 0") == true, "the mention was dropped")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(conversations(chat, bob).first?.hasSuffix(" - 2 1") == true)
  }
}

/// `CONVERSATIONS` asked on a connection, without the events it got before.
func conversations(_ chat: EngineHarness, _ connection: ConnectionID) -> [String] {
  _ = chat.output.take(connection)
  return chat.send(connection, "CONVERSATIONS")
}

extension JournalRecord {
  /// The record's `type`, as the journal writes it.
  var kind: String {
    let line = String(decoding: jsonLine, as: UTF8.self)
    guard let start = line.range(of: "\"type\":\"") else { return "" }
    return String(line[start.upperBound...].prefix { $0 != "\"" })
  }
}

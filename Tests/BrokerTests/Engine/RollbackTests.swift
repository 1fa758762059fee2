import Broker
import LineProtocol
import TestSupport
import Testing

/// What the engine does for the shell when a sync fails (chatbroker(8),
/// EXIT STATUS): undo the unsynced records in memory, and tell which lines
/// show them.
@Suite("Engine: rolling back what a failed sync held")
struct RollbackTests {
  @Test("rolling back in memory leaves the state a replay of the synced journal gives")
  func rollbackMatchesReplay() {
    var limits = Limits()
    limits.historyPerConversation = 3
    let chat = EngineHarness(limits: limits)
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    for text in ["m1", "m2", "m3"] { chat.send(alice, "SAY #a \(text)") }
    let cancelled = okID(chat.send(alice, "SAYAT #a +1h later"))
    chat.send(alice, "SAYAT @bob +30m soon")
    // Still pending after "soon" is delivered, so the cancelled entry stays
    // in the heap below it.
    chat.send(alice, "SAYAT @carol +45m first")
    chat.send(bob, "SAY @alice hi")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    // Everything from here is "unsynced", then rolled back.
    chat.send(alice, "SAY #a m4")  // evicts m1
    chat.send(alice, "SAY #new x")  // creates #new
    chat.send(alice, "CANCEL \(cancelled)")
    chat.advance(to: "2026-11-30T17:31:00.000Z")  // delivers "soon"
    chat.send(alice, "SAYAT #a +3h more")
    chat.send(bob, "JOIN #kept")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)

    let rooms = chat.send(bob, "ROOMS")
    // bob's JOIN, answered STORAGE by the shell, is undone with its record.
    #expect(!rooms.contains { $0.hasPrefix("ROOM #kept ") })
    #expect(!rooms.contains { $0.hasPrefix("ROOM #new ") })
    #expect(chat.engine.unsyncedRecordCount == 0)
    #expect(chat.send(bob, "PART #kept").first?.hasPrefix("ERR PART NOTJOINED") == true)
    let restarted = EngineHarness(limits: limits, clock: chat.clock)
    for record in synced { restarted.engine.replay(record) }
    #expect(durableState(chat.engine) == durableState(restarted.engine))
    #expect(chat.send(alice, "HISTORY #a").dropLast().map { $0.freeText } == ["m1", "m2", "m3"])
    #expect(chat.send(alice, "SCHEDULED").count == 4, "the cancelled and the delivered are back")
    #expect(chat.send(bob, "HISTORY @alice").dropLast().map { $0.freeText } == ["hi"])
    chat.advance(to: "2026-11-30T17:32:00.000Z")
    #expect(
      chat.output.take(bob).contains { $0.hasSuffix(":soon") },
      "the delivery rolled back is made again")

    // The cancellation rolled back: the message is delivered, once.
    chat.advance(to: "2026-11-30T18:01:00.000Z")
    let deliveries = chat.journal.records.filter {
      if case .delivery(let id, _) = $0 { id.description == cancelled } else { false }
    }
    #expect(deliveries.count == 1)
  }

  @Test("a series' start, occurrence, end, RESCHEDULE and EDIT roll back to the synced state")
  func seriesRollbackMatchesReplay() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let daily = okID(chat.send(alice, "SAYEVERY #a daily@20:00 :every day"))
    let once = okID(chat.send(alice, "SAYEVERY #a daily@18:30,count:1 :once"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    chat.send(alice, "EDIT \(daily) :changed")
    chat.send(alice, "RESCHEDULE \(daily) daily@21:00")
    chat.send(alice, "SAYEVERY #b every:15m :new")
    // 18:31 in Berlin: the count:1 series fires and ends.
    chat.advance(to: "2026-11-30T17:31:00.000Z")
    #expect(chat.send(alice, "HISTORY #a").count == 2)
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)

    let restarted = EngineHarness(clock: chat.clock)
    for record in synced { restarted.engine.replay(record) }
    #expect(durableState(chat.engine) == durableState(restarted.engine))
    #expect(chat.send(alice, "HISTORY #a") == ["OK HISTORY #a 0"])
    let scheduled = chat.send(alice, "SCHEDULED")
    #expect(scheduled.count == 3)
    #expect(scheduled.contains { $0.hasPrefix("SCHED \(daily) ") && $0.hasSuffix(":every day") })
    #expect(scheduled.contains { $0.hasPrefix("SCHED \(once) ") })
    chat.advance(to: "2026-11-30T17:32:00.000Z")
    #expect(
      chat.send(alice, "HISTORY #a").first?.hasSuffix(":once") == true,
      "the occurrence rolled back fires again")
  }

  @Test("every line waits for the records before it, but for stateless verbs; one rule labels each")
  func lineKinds() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let bobAgain = chat.connect("bob")
    chat.send(alice, "JOIN #a")
    chat.send(bob, "JOIN #a")
    chat.send(bobAgain, "JOIN #a")
    chat.send(alice, "SAY #b saved")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    _ = (chat.output.take(bob), chat.output.take(bobAgain))
    let kinds = chat.output
    let roomA = RoomName("#a")!

    let said = chat.send(alice, "SAY #a unsaved")
    #expect(kinds.kinds[said[0]] == .outcome(.say))
    #expect(chat.output.take(bob).map { kinds.kinds[$0] } == [.revealing])
    #expect(chat.output.take(bobAgain).map { kinds.kinds[$0] } == [.revealing])
    #expect(kinds.kinds[chat.send(alice, "PING")[0]] == .stateless)
    #expect(chat.send(alice, "HELP").allSatisfy { kinds.kinds[$0] == .stateless })
    #expect(
      kinds.kinds[chat.send(bob, "JOIN #a")[0]] == .answer(.join(roomA)),
      "#a is already bob's: it wrote nothing, and asking again is the same")
    #expect(
      kinds.kinds[chat.send(bob, "JOIN #c")[0]] == .outcome(.join),
      "#c becomes bob's: the reply waits for its member record")
    // A query waits for every record before it, whatever it shows.
    #expect(
      chat.send(bob, "HISTORY #b").map { kinds.kinds[$0] }
        == [.revealing, .answer(.history(.room(RoomName("#b")!), count: 50, anchor: nil))])
    #expect(
      chat.send(bob, "HISTORY #a 5 BEFORE 99").map { kinds.kinds[$0] }
        == [.answer(.history(.room(roomA), count: 5, anchor: .before(MessageID("99")!)))],
      "an error that wrote nothing is answered again too")
    // What no rollback undoes stays: another session of bob's leaves #a.
    #expect(kinds.kinds[chat.send(bobAgain, "PART #a")[0]] == .lasting)
    #expect(kinds.kinds[chat.send(bob, "AWAY lunch")[0]] == .lasting)
    // An event of a step that wrote nothing stays too: bob is no longer
    // in #a with both sessions, and alice's QUIT wrote nothing.
    chat.engine.disconnect(alice)
    #expect(chat.output.take(bob).map { kinds.kinds[$0] } == [.lasting])

    // The shell would drop the revealing lines and answer again.
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.engine.answerAgain(.history(.room(roomA), count: 5, anchor: nil), for: bob)
    #expect(chat.output.take(bob) == ["OK HISTORY #a 0"])
  }

  /// A rolled-back KICK (its `leave` record refused, the kicker answered
  /// `STORAGE`) changed nothing: the kicked user's sessions are in the
  /// room again, in WHO and for the room's next lines, and the room is
  /// still theirs.
  @Test("a KICK rolled back puts every session of the kicked user back in the room")
  func kickRolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let bobToo = chat.connect("bob")
    for session in [alice, bob, bobToo] { chat.send(session, "JOIN #ops") }
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    chat.send(alice, "KICK #ops bob")
    #expect(chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records = synced

    #expect(
      chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "MEMBER #ops bob", "OK WHO #ops 2"])
    _ = chat.output.take(bob)
    _ = chat.output.take(bobToo)
    chat.send(alice, "SAY #ops still here?")
    #expect(chat.output.take(bob).count == 1, "bob's first session gets the room's lines")
    #expect(chat.output.take(bobToo).count == 1, "and his second")
    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
  }

  /// The same for a PART that left none of the user's sessions in the
  /// room (its `leave` record refused, answered `STORAGE`).
  @Test("a PART rolled back puts the session back in the room")
  func partRolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)

    #expect(chat.send(bob, "PART #ops") == ["OK PART #ops"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(alice)

    #expect(
      chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "MEMBER #ops bob", "OK WHO #ops 2"])
    #expect(chat.send(bob, "PART #ops") == ["OK PART #ops"], "bob's session is in #ops again")
  }

  /// A JOIN rolled back takes the room from every session of the user:
  /// another session's JOIN after it wrote nothing only because the room
  /// was the user's by the record now gone. Kept in the room, that session
  /// would keep in memory a room a restart does not have (its creation
  /// undone): the next JOIN would not create it, its creator would not be
  /// its operator, and a replay would date it otherwise.
  @Test(
    "a JOIN rolled back takes the room from every session of the user; the next JOIN creates it")
  func joinRolledBackEmptiesTheRoom() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let aliceToo = chat.connect("alice")
    let bob = chat.connect("bob")
    #expect(chat.send(alice, "JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(chat.send(aliceToo, "JOIN #ops") == ["OK JOIN #ops 1"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records.removeAll()

    #expect(chat.send(aliceToo, "WHO #ops") == ["OK WHO #ops 0"])
    #expect(chat.send(alice, "PART #ops").first?.hasPrefix("ERR PART NOTJOINED ") == true)
    chat.clock.set("2026-11-30T18:00:00.000Z")
    #expect(chat.send(bob, "JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(chat.send(bob, "MODE #ops +t") == ["OK MODE #ops +t"], "bob made it: its operator")
    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
  }

  /// A PART and a new JOIN of one session rolled back together, after
  /// which another session joined without a record (the room was the
  /// user's by that JOIN): undoing the PART makes the room the user's
  /// again, so that session stays in it, as its OK JOIN said.
  @Test("a session whose JOIN wrote nothing stays when the rollback leaves the room the user's")
  func laterSessionStaysWhenTheRoomStaysTheUsers() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let aliceToo = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    chat.send(alice, "PART #ops")
    chat.send(alice, "JOIN #ops")
    #expect(chat.send(aliceToo, "JOIN #ops") == ["OK JOIN #ops 1"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records = synced

    #expect(chat.send(aliceToo, "PART #ops") == ["OK PART #ops"], "aliceToo is in #ops")
    #expect(chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
  }

  /// A CANCEL of a series rolled back: the series is pending again, with
  /// its rule, not as a single message.
  @Test("a CANCEL of a series rolled back leaves the series with its rule")
  func cancelOfSeriesRolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    let series = okID(chat.send(alice, "SAYEVERY #ops every:15m :tea"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    #expect(chat.send(alice, "CANCEL \(series)") == ["OK CANCEL \(series)"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records = synced

    let scheduled = chat.send(alice, "SCHEDULED")
    #expect(scheduled.count == 2)
    #expect(scheduled.first?.contains(" every:15m ") == true, "\(scheduled)")
    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
  }

  /// A CANCEL that left the room of the message with nothing to keep
  /// forgot the room; rolled back, the message is pending in it again,
  /// and the room is there.
  @Test("a CANCEL that forgot its room, rolled back, has the room back")
  func cancelForgettingItsRoomRolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let later = okID(chat.send(alice, "SAYAT #later +1h :lunch"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    chat.send(alice, "CANCEL \(later)")
    #expect(chat.send(alice, "ROOMS") == ["OK ROOMS 0"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records = synced

    #expect(chat.send(alice, "ROOMS").first?.hasPrefix("ROOM #later ") == true)
    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
  }

  /// A PART (or KICK) that left a room with nothing to keep forgot it,
  /// modes and all; rolled back, the room is back with its modes and
  /// operators, not bare.
  @Test("a PART that forgot its room, rolled back, has the room back with its modes")
  func partForgettingItsRoomRolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #ops")
    #expect(chat.send(alice, "MODE #ops +t") == ["OK MODE #ops +t"])
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let synced = chat.journal.records

    #expect(chat.send(alice, "PART #ops") == ["OK PART #ops"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.journal.records = synced

    #expect(durableState(chat.engine) == durableState(chat.restarted().engine))
    #expect(chat.send(alice, "MODE #ops") == ["OK MODE #ops +t"])
    #expect(chat.send(alice, "MODE #ops -t") == ["OK MODE #ops -t"], "alice is its operator")
  }

  /// Every durable record the engine's state would be compacted into,
  /// without the header (ids handed out are never taken back), in a fixed
  /// order.
  private func durableState(_ engine: Engine) -> [String] {
    var lines: [String] = []
    engine.snapshot().forEachRecord { record in
      if case .header = record { return }
      lines.append(String(decoding: record.jsonLine, as: UTF8.self))
    }
    return lines.sorted()
  }
}

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

  @Test("only lines showing unsynced records wait for the sync")
  func lineKinds() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #a")
    chat.send(bob, "JOIN #a")
    chat.send(alice, "SAY #b saved")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let kinds = chat.output

    let said = chat.send(alice, "SAY #a unsaved")
    #expect(kinds.kinds[said[0]] == .outcome(.say))
    #expect(chat.output.take(bob).map { kinds.kinds[$0] } == [.revealing])
    #expect(kinds.kinds[chat.send(alice, "PING")[0]] == .neutral)
    #expect(kinds.kinds[chat.send(bob, "JOIN #a")[0]] == .neutral, "#a is already bob's")
    #expect(
      kinds.kinds[chat.send(bob, "JOIN #c")[0]] == .outcome(.join),
      "#c becomes bob's: the reply waits for its member record")
    #expect(chat.send(bob, "HISTORY #b").map { kinds.kinds[$0] } == [.neutral, .neutral])
    let history = chat.send(bob, "HISTORY #a 5")
    #expect(
      history.map { kinds.kinds[$0] }
        == [.revealing, .answer(.history(.room(RoomName("#a")!), count: 5, anchor: nil))])
    #expect(chat.send(bob, "HISTORY #a 5 BEFORE 99").map { kinds.kinds[$0] } == [.neutral])

    // The shell would drop the revealing lines and ask again.
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    chat.engine.answerAgain(
      .history(.room(RoomName("#a")!), count: 5, anchor: nil), for: bob)
    #expect(chat.output.take(bob) == ["OK HISTORY #a 0"])
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

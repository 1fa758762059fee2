import Broker
import LineProtocol
import TestSupport
import Testing

/// The engine's side of shared rooms (chatbroker(8), "FEDERATION"), on
/// virtual time: the outbox, lines from the stream, and what a restart
/// replays.
@Suite("Engine: rooms shared across hosts")
struct EngineFederationTests {
  static let settings = FederationSettings(node: "h1", patterns: ["#ops", "#team-*"])

  /// A host whose link has looked for its node's lines in the stream and
  /// found none, as a new node's does.
  func federatedHarness(limits: Limits = Limits()) -> EngineHarness {
    let harness = EngineHarness(limits: limits)
    harness.engine.federate(Self.settings)
    harness.engine.streamHoldsOwnLines(upTo: nil)
    return harness
  }

  func line(
    _ sequence: UInt64, node: String, origin: UInt64, user: String = "alice",
    room: String = "#ops", text: String
  ) -> StreamLine {
    StreamLine(
      position: StreamPosition(sequence: sequence, node: node, origin: MessageID(value: origin)),
      target: Target(room)!, user: user,
      time: Timestamp(rfc3339: "2026-11-30T17:00:00.000Z")!, text: text)
  }

  @Test("SAY in a shared room is acknowledged into the outbox and shown to nobody yet")
  func sayGoesToOutbox() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #ops")
    #expect(harness.send(alice, "SAY #ops :deploying") == ["OK SAY 1 2026-11-30T17:00:00.000Z"])
    #expect(harness.output.take(bob) == [])
    #expect(harness.engine.outbox.map(\.text) == ["deploying"])
    #expect(harness.send(bob, "HISTORY #ops") == ["OK HISTORY #ops 0"])
  }

  @Test("a room no pattern matches stays a local room")
  func localRoomStaysLocal() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #lunch")
    harness.send(alice, "SAY #lunch :pizza?")
    #expect(harness.output.take(bob) == ["MSG #lunch 1 2026-11-30T17:00:00.000Z alice :pizza?"])
    #expect(harness.engine.outbox.isEmpty)
  }

  @Test("a line from the stream reaches every member once, but not the session that said it")
  func streamLineIsShownOnce() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    let aliceAgain = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    harness.send(aliceAgain, "JOIN #ops")
    harness.send(alice, "SAY #ops :deploying")
    harness.engine.receive(line(1, node: "h2", origin: 7, user: "bob", text: "ok"))
    harness.engine.receive(line(2, node: "h1", origin: 1, text: "deploying"))
    // The same outbox line published twice, and a sequence already applied.
    harness.engine.receive(line(3, node: "h1", origin: 1, text: "deploying"))
    harness.engine.receive(line(2, node: "h2", origin: 8, user: "bob", text: "late"))
    #expect(
      harness.output.take(alice) == ["MSG #ops z00000000001 2026-11-30T17:00:00.000Z bob@h2 :ok"])
    #expect(
      harness.output.take(aliceAgain) == [
        "MSG #ops z00000000001 2026-11-30T17:00:00.000Z bob@h2 :ok",
        "MSG #ops z00000000002 2026-11-30T17:00:00.000Z alice :deploying",
      ])
    #expect(harness.engine.outbox.isEmpty, "the line came back: it left the outbox")
    #expect(harness.engine.streamSequence == 3)
  }

  @Test("a restart replays the outbox, the history and the stream position")
  func restartReplaysFederationState() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAY #ops :first")
    harness.send(alice, "SAY #ops :second")
    harness.engine.receive(line(5, node: "h1", origin: 1, text: "first"))
    let restarted = EngineHarness()
    restarted.engine.federate(Self.settings)
    for record in harness.journal.records {
      // Each record as the journal file holds it, read back.
      let bytes = Array(record.jsonLine.dropLast())
      let read = bytes.withUnsafeBufferPointer { try? JournalRecord(jsonLine: $0) }
      #expect(read == record)
      restarted.engine.replay(record)
    }
    restarted.engine.finishReplay()
    #expect(restarted.engine.outbox.map(\.text) == ["second"])
    #expect(restarted.engine.streamSequence == 5)
    let bob = restarted.connect("bob")
    #expect(
      restarted.send(bob, "HISTORY #ops") == [
        "HIST #ops z00000000005 2026-11-30T17:00:00.000Z alice :first", "OK HISTORY #ops 1",
      ])
    // New local ids continue after the outbox's, never in the stream's range.
    #expect(restarted.send(bob, "SAY @alice hi") == ["OK SAY 3 2026-11-30T17:00:00.000Z"])
  }

  @Test("a line from the stream that cannot be journaled is not shown, and is read again")
  func journalFailureLeavesThePosition() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    harness.journal.failing = true
    #expect(!harness.engine.receive(line(1, node: "h2", origin: 1, user: "bob", text: "hi")))
    #expect(harness.output.take(alice) == [])
    #expect(harness.engine.streamSequence == 0)
    harness.journal.failing = false
    #expect(harness.engine.receive(line(1, node: "h2", origin: 1, user: "bob", text: "hi")))
    #expect(harness.output.take(alice).count == 1)
  }

  @Test(
    "a direct message to alice@h2 goes into the outbox; h2's reply is bob's conversation with alice@h2, same ids"
  )
  func directMessages() {
    let harness = federatedHarness()
    let bob = harness.connect("bob")
    let bobAgain = harness.connect("bob")
    #expect(harness.send(bob, "SAY @alice@h2 :hi from h1")[0].hasPrefix("OK SAY 1 "))
    #expect(harness.engine.outbox.map(\.target.description) == ["@alice@h2"])
    // Our line comes back; alice's answer comes from h2; a line between
    // two other hosts is not ours to keep.
    harness.engine.receive(
      line(1, node: "h1", origin: 1, user: "bob", room: "@alice@h2", text: "hi from h1"))
    harness.engine.receive(line(2, node: "h2", origin: 5, room: "@bob@h1", text: "hello bob"))
    harness.engine.receive(line(3, node: "h2", origin: 6, room: "@carol@h3", text: "not here"))
    #expect(
      harness.output.take(bob) == [
        "MSG @alice@h2 z00000000002 2026-11-30T17:00:00.000Z alice@h2 :hello bob"
      ])
    #expect(harness.output.take(bobAgain).count == 2)
    #expect(
      harness.send(bob, "HISTORY @alice@h2") == [
        "HIST @alice@h2 z00000000001 2026-11-30T17:00:00.000Z bob :hi from h1",
        "HIST @alice@h2 z00000000002 2026-11-30T17:00:00.000Z alice@h2 :hello bob",
        "OK HISTORY @alice@h2 2",
      ])
    #expect(harness.engine.streamSequence == 3)
  }

  @Test("without a federation, @alice@h2 is refused with NOSUCHUSER")
  func directMessageWithoutFederation() {
    let harness = EngineHarness()
    let bob = harness.connect("bob")
    #expect(harness.send(bob, "SAY @alice@h2 hi")[0].hasPrefix("ERR SAY NOSUCHUSER :"))
  }

  @Test("IRC clients see a user of another host as nick alice|h2, mask alice@h2")
  func ircSource() {
    let harness = federatedHarness()
    let irc = IRCHarness(harness)
    let carol = irc.connect("carol")
    irc.send(carol, "JOIN #ops")
    harness.engine.receive(line(1, node: "h2", origin: 3, text: "from afar"))
    #expect(irc.take(carol) == [":alice|h2!alice@h2 PRIVMSG #ops :from afar"])
  }

  @Test("ROOMS marks shared rooms SHARED, and only them")
  func roomsMarksShared() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    for room in ["#ops", "#lunch", "#team-a"] { harness.send(alice, "JOIN \(room)") }
    #expect(
      harness.send(alice, "ROOMS") == [
        "ROOM #lunch 1", "ROOM #ops 1 SHARED", "ROOM #team-a 1 SHARED", "OK ROOMS 3",
      ])
  }

  @Test("a compacted journal keeps the outbox and the stream position")
  func compactionKeepsFederationState() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAY #ops :first")
    harness.send(alice, "SAY #ops :second")
    harness.engine.receive(line(3, node: "h2", origin: 4, user: "bob", text: "hi"))
    harness.engine.receive(line(4, node: "h1", origin: 1, text: "first"))
    var records: [JournalRecord] = []
    harness.engine.snapshot().forEachRecord { records.append($0) }
    let restarted = EngineHarness()
    restarted.engine.federate(Self.settings)
    for record in records { restarted.engine.replay(record) }
    restarted.engine.finishReplay()
    #expect(restarted.engine.streamSequence == 4)
    #expect(restarted.engine.outbox.map(\.text) == ["second"])
    let bob = restarted.connect("bob")
    #expect(restarted.send(bob, "HISTORY #ops").count == 3)
    // Lines already applied are not shown again, nor ids reused.
    restarted.engine.receive(line(5, node: "h2", origin: 4, user: "bob", text: "hi"))
    #expect(restarted.send(bob, "HISTORY #ops").count == 3)
    #expect(restarted.send(bob, "SAY @alice hi") == ["OK SAY 3 2026-11-30T17:00:00.000Z"])
  }

  @Test("a line for a room this host does not share moves the position but shows nothing")
  func unsharedRoomFromStream() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #secret")
    harness.engine.receive(line(1, node: "h2", origin: 1, room: "#secret", text: "psst"))
    #expect(harness.output.take(alice) == [])
    #expect(harness.engine.streamSequence == 1)
  }
}

extension EngineFederationTests {
  @Test("a node cannot speak for a user of another node: root@h1 published by h2 is shown nowhere")
  func authorNamingAnotherNode() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    harness.engine.receive(line(1, node: "h2", origin: 1, user: "root@h1", text: "reboot now"))
    harness.engine.receive(line(2, node: "h2", origin: 2, user: "bob", text: "ok"))
    #expect(
      harness.output.take(alice) == ["MSG #ops z00000000002 2026-11-30T17:00:00.000Z bob@h2 :ok"])
    #expect(harness.engine.streamSequence == 2)
  }
}

@Suite("Engine: scheduled lines and shared rooms")
struct EngineFederationScheduleTests {
  @Test("a SAYAT line due in a shared room goes into the outbox under a fresh id, not into history")
  func scheduledLineGoesToOutbox() {
    let harness = EngineHarness()
    harness.engine.federate(EngineFederationTests.settings)
    harness.engine.streamHoldsOwnLines(upTo: nil)
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    #expect(harness.send(alice, "SAYAT #ops 18:30 :standup")[0].hasPrefix("OK SAYAT 1 "))
    harness.send(alice, "SAY #ops :now")
    harness.advance(to: "2026-11-30T17:30:00.000Z")
    #expect(harness.output.take(alice) == [])
    #expect(harness.engine.outbox.map(\.text) == ["now", "standup"])
    #expect(harness.engine.outbox.map(\.id.description) == ["2", "3"])
    #expect(harness.send(alice, "SCHEDULED #ops") == ["OK SCHEDULED 0"])
  }

  /// The line the stream brings back for outbox line `line`, at `sequence`.
  static func echo(_ line: OutboxLine, sequence: UInt64) -> StreamLine {
    StreamLine(
      position: StreamPosition(sequence: sequence, node: line.node, origin: line.id),
      target: line.target, user: line.author, time: line.time, text: line.text,
      series: line.series)
  }

  @Test(
    "a series in a shared room fires on its author's host into the outbox, across DST, restarts and rollback"
  )
  func seriesFiresIntoOutbox() throws {
    // Friday 23 October 2026; Berlin leaves summer time on the 25th.
    let harness = EngineHarness(clock: TestClock("2026-10-23T12:00:00.000Z"))
    harness.engine.federate(EngineFederationTests.settings)
    harness.engine.streamHoldsOwnLines(upTo: nil)
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #ops")
    #expect(
      harness.send(alice, "SAYEVERY #ops weekdays@09:00 :standup").last
        == "OK SAYEVERY 1 2026-10-26T08:00:00.000Z weekdays@09:00/Europe/Berlin")
    harness.advance(to: "2026-10-26T08:00:00.000Z")
    #expect(harness.output.take(bob) == [], "shown only when the stream brings it back")
    let first = try #require(harness.engine.outbox.first)
    #expect(first.id.description == "2" && first.series?.description == "1")
    #expect(first.time == Timestamp(rfc3339: "2026-10-26T08:00:00.000Z"))
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 1").first?.contains(" 2026-10-27T08:00:00.000Z ")
        == true)

    // The stream brings it back: every member sees it as the series'.
    harness.engine.receive(Self.echo(first, sequence: 1))
    let shown = try #require(harness.output.take(bob).first)
    #expect(
      shown.hasPrefix("MSG #ops z") && shown.hasSuffix(" alice SERIES 1 :standup"), "\(shown)")
    #expect(harness.engine.outbox.isEmpty)

    // A failed sync of the next occurrence rolls back both records.
    harness.engine.trackUnsyncedRecords()
    let synced = harness.journal.records.count
    harness.advance(to: "2026-10-27T08:00:00.000Z")
    #expect(harness.engine.outbox.count == 1)
    harness.engine.rollBack(harness.engine.unsyncedRecordCount)
    // The file is cut back to what was synced, as the server does.
    harness.journal.records.removeLast(harness.journal.records.count - synced)
    #expect(harness.engine.outbox.isEmpty)
    #expect(
      harness.send(alice, "SCHEDULED 1 NEXT 1").first?.contains(" 2026-10-27T08:00:00.000Z ")
        == true)
    harness.engine.timerFired()
    harness.engine.recordsSynced(harness.engine.unsyncedRecordCount)
    #expect(harness.engine.outbox.map(\.series?.description) == ["1"])

    // From the file and compacted: the outbox line keeps its series, the
    // history its SERIES, and the series its next due instant.
    let federate = { (engine: Engine) in engine.federate(EngineFederationTests.settings) }
    for restarted in [
      try EngineSeriesExceptionTests.reread(harness, prepare: federate),
      try EngineCalendarRuleTests.compacted(harness, prepare: federate),
    ] {
      #expect(restarted.engine.outbox.map(\.series?.description) == ["1"])
      let reader = restarted.connect("bob")
      #expect(
        restarted.send(reader, "HISTORY #ops").first?.hasSuffix(" alice SERIES 1 :standup") == true)
      #expect(
        restarted.send(restarted.connect("alice"), "SCHEDULED 1 NEXT 1").first?.contains(
          " 2026-10-28T08:00:00.000Z ") == true)
    }
  }

  @Test("a series' last occurrence in a shared room ends it; a REPLACE line travels as the series'")
  func lastAndReplacedOccurrence() {
    let harness = EngineHarness()
    harness.engine.federate(EngineFederationTests.settings)
    harness.engine.streamHoldsOwnLines(upTo: nil)
    let alice = harness.connect("alice")
    harness.send(alice, "SAYEVERY #ops daily@19:00,count:2 :twice")
    #expect(
      harness.send(alice, "REPLACE 1 2026-11-30T18:00Z 2026-11-30T17:30Z :earlier").last
        == "OK REPLACE 2 2026-11-30T17:30:00.000Z")
    harness.advance(to: "2026-11-30T17:30:00.000Z")
    harness.advance(to: "2026-12-01T18:00:00.000Z")
    harness.advance(to: "2026-12-02T18:00:00.000Z")
    #expect(harness.engine.outbox.map(\.text) == ["earlier", "twice", "twice"])
    #expect(harness.engine.outbox.allSatisfy { $0.series?.description == "1" })
    #expect(harness.send(alice, "SCHEDULED") == ["OK SCHEDULED 0"])
  }
}

/// A line is known by (node, id), never by a high-water mark, and a node
/// never hands out an id it has in the stream (chatbroker(8),
/// "FEDERATION").
@Suite("Engine: exactly once by identity")
struct EngineFederationIdentityTests {
  let lines = EngineFederationTests()

  @Test(
    "a forged or ignored payload under a node's subject does not silence that node's later lines")
  func forgedIDMovesNothing() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    // `zz` is id 1295: under a high-water mark, ids 1 to 1295 were dropped.
    harness.engine.receive(lines.line(1, node: "h2", origin: 1295, user: "bob", text: "forged"))
    harness.engine.receive(lines.line(2, node: "h2", origin: 7, user: "root@h1", text: "ignored"))
    harness.engine.receive(lines.line(3, node: "h2", origin: 8, room: "#secret", text: "not ours"))
    harness.engine.receive(lines.line(4, node: "h2", origin: 7, user: "bob", text: "real 7"))
    harness.engine.receive(lines.line(5, node: "h2", origin: 8, user: "bob", text: "real 8"))
    harness.engine.receive(lines.line(6, node: "h2", origin: 8, user: "bob", text: "real 8"))
    #expect(
      harness.output.take(alice).map { $0.split(separator: ":").last! } == [
        "forged", "real 7", "real 8",
      ])
    #expect(harness.engine.streamSequence == 6)
  }

  @Test("this host's outbox line leaves the outbox only when the stream brings back its own id")
  func outboxFollowsTheStream() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAY #ops :first")
    harness.send(alice, "SAY #ops :second")
    harness.engine.receive(lines.line(1, node: "h1", origin: 1295, text: "forged as h1"))
    harness.engine.receive(lines.line(2, node: "h2", origin: 2, user: "root@h1", text: "no"))
    #expect(harness.engine.outbox.map(\.text) == ["first", "second"])
    harness.engine.receive(lines.line(3, node: "h1", origin: 1, text: "first"))
    #expect(harness.engine.outbox.map(\.text) == ["second"])
    // An id of this node seen in the stream is never handed out again
    // (ids are base 36: `zz`, then `100`).
    #expect(harness.send(alice, "SAY @alice hi") == ["OK SAY 100 2026-11-30T17:00:00.000Z"])
  }

  @Test(
    "a new state directory refuses shared SAY until the link found the node's last id, then counts on after it, across a restart"
  )
  func newStateDirectoryNeverReusesIDs() {
    let harness = EngineHarness()
    harness.engine.federate(EngineFederationTests.settings)
    let alice = harness.connect("alice")
    let refused = harness.send(alice, "SAY #ops :too early")
    #expect(
      refused.count == 1
        && refused[0].hasPrefix(
          "ERR SAY LIMIT :#ops is shared with other hosts, and this host has not yet read")
    )
    #expect(
      harness.send(alice, "SAY #lunch :local rooms work") == ["OK SAY 1 2026-11-30T17:00:00.000Z"])
    harness.engine.streamHoldsOwnLines(upTo: MessageID(value: 36 + 4))
    #expect(harness.send(alice, "SAY #ops :after") == ["OK SAY 15 2026-11-30T17:00:00.000Z"])
    let restarted = EngineHarness()
    restarted.engine.federate(EngineFederationTests.settings)
    for record in harness.journal.records { restarted.engine.replay(record) }
    restarted.engine.finishReplay()
    // The journal knows the node's ids now: no need to wait for the link.
    let again = restarted.connect("alice")
    #expect(restarted.send(again, "SAY #ops :again") == ["OK SAY 16 2026-11-30T17:00:00.000Z"])
    #expect(restarted.engine.outbox.map(\.text) == ["after", "again"])
  }

  @Test(
    "a journal behind the stream for its own node counts on after the stream, and says so in the journal"
  )
  func journalBehindTheStream() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "SAY #ops :one")
    harness.engine.streamHoldsOwnLines(upTo: MessageID(value: 9))
    #expect(harness.journal.records.last == .streamLastID(node: "h1", id: MessageID(value: 9)))
    #expect(harness.send(alice, "SAY #ops :two") == ["OK SAY a 2026-11-30T17:00:00.000Z"])
  }

  @Test(
    "while the stream refuses this node's lines, shared SAY is refused with the reason; local rooms work"
  )
  func refusedStream() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.engine.streamRefuses("Permissions Violation for Publish to \"chat.room.ops.h1\"")
    let refused = harness.send(alice, "SAY #ops :lost?")
    #expect(
      refused.count == 1
        && refused[0].hasPrefix(
          "ERR SAY LIMIT :#ops is shared with other hosts, and the stream refuses this host's lines (Permissions Violation"
        ))
    #expect(harness.engine.outbox.isEmpty)
    #expect(harness.send(alice, "SAY #lunch :fine")[0].hasPrefix("OK SAY "))
    harness.engine.streamRefuses(nil)
    #expect(harness.send(alice, "SAY #ops :now")[0].hasPrefix("OK SAY "))
  }

  @Test(
    "a stream created anew is read from its start, its lines get new ids, and lines seen in the old one are not shown again"
  )
  func streamCreatedAnew() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    let first = Timestamp(rfc3339: "2026-11-30T16:00:00.000Z")!
    harness.engine.streamFound(created: first)
    harness.engine.receive(lines.line(1, node: "h2", origin: 1, user: "bob", text: "old"))
    harness.engine.streamFound(created: first)
    #expect(harness.engine.streamSequence == 1, "the same stream, found again")
    harness.engine.streamFound(created: Timestamp(rfc3339: "2026-11-30T16:30:00.000Z")!)
    #expect(harness.engine.streamSequence == 0)
    // h2 published its line again into the new stream, then a new one.
    harness.engine.receive(lines.line(1, node: "h2", origin: 1, user: "bob", text: "old"))
    harness.engine.receive(lines.line(2, node: "h2", origin: 2, user: "bob", text: "new"))
    let shown = harness.output.take(alice)
    #expect(shown.map { $0.split(separator: ":").last! } == ["old", "new"])
    let ids = shown.map { $0.split(separator: " ")[2] }
    #expect(Set(ids).count == 2 && ids.allSatisfy { $0.hasPrefix("z") && $0.count == 12 })
    #expect(harness.engine.streamSequence == 2)
  }

  @Test(
    "a host's long lines hold a shared room to --history-bytes-per-conversation, as a local user's")
  func remoteLinesBoundedInBytes() {
    var limits = Limits()
    limits.historyBytesPerConversation = 10_000
    let harness = lines.federatedHarness(limits: limits)
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    for sequence in UInt64(1)...10 {
      harness.engine.receive(
        lines.line(
          sequence, node: "h2", origin: sequence, user: "bob",
          text: String(repeating: "\(sequence % 10)", count: 4000)))
    }
    #expect(harness.output.take(alice).count == 10, "every line is shown as it comes")
    let kept = harness.send(alice, "HISTORY #ops").dropLast()
    #expect(kept.count == 2, "two lines of 4000 bytes fit in 10000, three do not")
    #expect(kept.allSatisfy { $0.contains(" bob@h2 :") })
    #expect(kept.last?.hasSuffix(String(repeating: "0", count: 4000)) == true)
  }

  @Test(
    "a remote line longer than a local SAY may be is ignored; a time far from when the stream stored it is shown as that"
  )
  func remoteLinesBounded() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    let limit = harness.engine.limits.lineBytes
    let stored = Timestamp(rfc3339: "2026-11-30T17:00:00.000Z")!
    func line(_ sequence: UInt64, _ text: String, at time: String) -> StreamLine {
      var line = lines.line(sequence, node: "h2", origin: sequence, user: "bob", text: text)
      line.time = Timestamp(rfc3339: time)!
      line.stored = stored
      return line
    }
    harness.engine.receive(
      line(1, String(repeating: "x", count: limit + 1), at: "2026-11-30T17:00:00.000Z"))
    harness.engine.receive(
      line(2, String(repeating: "y", count: limit), at: "2026-11-30T17:00:00.000Z"))
    harness.engine.receive(line(3, "from the past", at: "0001-01-01T00:00:00.000Z"))
    harness.engine.receive(line(4, "from the future", at: "9999-12-31T23:59:59.999Z"))
    harness.engine.receive(line(5, "waited a day in its outbox", at: "2026-11-29T17:00:00.000Z"))
    let shown = harness.output.take(alice)
    #expect(shown.count == 4)
    #expect(shown.first?.hasSuffix(" bob@h2 :" + String(repeating: "y", count: limit)) == true)
    #expect(
      shown.dropFirst().map { $0.split(separator: " ")[3] } == [
        "2026-11-30T17:00:00.000Z", "2026-11-30T17:00:00.000Z", "2026-11-29T17:00:00.000Z",
      ])
    #expect(harness.engine.streamSequence == 5)
  }
}

import Broker
import LineProtocol
import TestSupport
import Testing

/// A stream lost or reset gets this node's latest lines again
/// (chatbroker(8), "FEDERATION"), on virtual time: what the outbox holds
/// then, what a restart or a compacted journal keeps of it, and that the
/// lines coming back are shown no second time.
@Suite("Engine: a lost stream gets this node's latest lines again")
struct EngineRepublishTests {
  let lines = EngineFederationTests()
  let before = Timestamp(rfc3339: "2026-11-30T16:00:00.000Z")!
  let after = Timestamp(rfc3339: "2026-11-30T16:30:00.000Z")!

  /// h1, reading a stream created at ``before``, where alice said
  /// `first`, `second` and `third` and the first two came back.
  func hostWithTwoLinesBack() -> EngineHarness {
    let harness = lines.federatedHarness()
    harness.engine.streamFound(created: before)
    let alice = harness.connect("alice")
    for text in ["first", "second", "third"] { harness.send(alice, "SAY #ops :\(text)") }
    harness.engine.receive(lines.line(1, node: "h1", origin: 1, text: "first"))
    harness.engine.receive(lines.line(2, node: "h1", origin: 2, text: "second"))
    return harness
  }

  /// A fresh engine replaying `records`, as a restart would.
  func replayed(_ records: [JournalRecord]) -> EngineHarness {
    let restarted = EngineHarness()
    restarted.engine.federate(EngineFederationTests.settings)
    for record in records {
      // Each record as the journal file holds it, read back.
      let bytes = Array(record.jsonLine.dropLast())
      let read = bytes.withUnsafeBufferPointer { try? JournalRecord(jsonLine: $0) }
      #expect(read == record)
      restarted.engine.replay(record)
    }
    restarted.engine.finishReplay()
    return restarted
  }

  func history(_ harness: EngineHarness) -> [String] {
    let reader = harness.connect("carol")
    return harness.send(reader, "HISTORY #ops").dropLast().map {
      String($0.split(separator: ":").last ?? "")
    }
  }

  @Test(
    "after a reset the outbox holds the lines back from the old stream again, in id order, before those waiting"
  )
  func resetPutsLatestLinesBack() {
    let harness = hostWithTwoLinesBack()
    #expect(harness.engine.outbox.map(\.text) == ["third"])
    #expect(harness.engine.streamFound(created: before) == false, "the same stream again")
    #expect(harness.engine.streamFound(created: after) == true)
    #expect(harness.engine.outbox.map(\.text) == ["first", "second", "third"])
    #expect(harness.engine.outbox.map(\.standing) == [.again, .again, .waiting])
    #expect(harness.engine.outbox.map(\.id.description) == ["1", "2", "3"])
  }

  @Test("the lines published again come back from the new stream and are shown once")
  func linesBackAgainAreShownOnce() {
    let harness = hostWithTwoLinesBack()
    harness.engine.streamFound(created: after)
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #ops")
    for (sequence, text) in ["first", "second", "third"].enumerated() {
      harness.engine.receive(
        lines.line(UInt64(sequence + 1), node: "h1", origin: UInt64(sequence + 1), text: text))
    }
    #expect(harness.engine.outbox.isEmpty, "every line came back: the outbox is empty")
    #expect(history(harness) == ["first", "second", "third"])
    let shown = harness.output.take(bob).filter { $0.hasPrefix("MSG ") }
    #expect(shown.count == 1 && shown[0].hasSuffix(":third"), "\(shown)")
    // A second reset gives all three again: they are the latest now.
    harness.engine.streamFound(created: Timestamp(rfc3339: "2026-11-30T17:00:00.000Z")!)
    #expect(harness.engine.outbox.map(\.text) == ["first", "second", "third"])
  }

  @Test("a restart after the reset replays the outbox with the lines to publish again")
  func restartKeepsLinesToPublishAgain() {
    let harness = hostWithTwoLinesBack()
    harness.engine.streamFound(created: after)
    let restarted = replayed(harness.journal.records)
    #expect(restarted.engine.outbox.map(\.text) == ["first", "second", "third"])
    #expect(history(restarted) == ["first", "second"])
    // The new stream brings back `first`: it leaves the outbox, not shown twice.
    restarted.engine.receive(lines.line(1, node: "h1", origin: 1, text: "first"))
    #expect(restarted.engine.outbox.map(\.text) == ["second", "third"])
    #expect(history(restarted) == ["first", "second"])
  }

  @Test("a restart before the reset replays the lines back from the stream, kept for a new one")
  func restartKeepsPublishedLines() {
    let harness = hostWithTwoLinesBack()
    let restarted = replayed(harness.journal.records)
    #expect(restarted.engine.outbox.map(\.text) == ["third"])
    restarted.engine.streamFound(created: after)
    #expect(restarted.engine.outbox.map(\.text) == ["first", "second", "third"])
  }

  @Test("a compacted journal keeps the published lines and the lines to publish again")
  func compactionKeepsBothKinds() {
    let harness = hostWithTwoLinesBack()
    var records: [JournalRecord] = []
    harness.engine.snapshot().forEachRecord { records.append($0) }
    #expect(
      records.filter {
        if case .outbox(let line) = $0 { line.standing == .published } else { false }
      }.count == 2)
    let compacted = replayed(records)
    #expect(compacted.engine.outbox.map(\.text) == ["third"])
    compacted.engine.streamFound(created: after)
    var again: [JournalRecord] = []
    compacted.engine.snapshot().forEachRecord { again.append($0) }
    let twice = replayed(again)
    #expect(twice.engine.outbox.map(\.text) == ["first", "second", "third"])
    #expect(twice.engine.outbox.map(\.standing) == [.again, .again, .waiting])
  }

  @Test("only this node's latest 1024 lines are kept for a new stream, as many as hosts remember")
  func onlyTheLatestAreKept() {
    let harness = lines.federatedHarness()
    harness.engine.streamFound(created: before)
    let alice = harness.connect("alice")
    let total = 1030
    for index in 1...total {
      harness.send(alice, "SAY #ops :line \(index)")
      harness.engine.receive(
        lines.line(UInt64(index), node: "h1", origin: UInt64(index), text: "line \(index)"))
    }
    #expect(harness.engine.outbox.isEmpty)
    harness.engine.streamFound(created: after)
    let outbox = harness.engine.outbox
    #expect(outbox.count == 1024)
    #expect(outbox.first?.text == "line 7")
    #expect(outbox.last?.text == "line \(total)")
  }

  @Test("other nodes' lines are never published by this one")
  func otherNodesStayTheirs() {
    let harness = hostWithTwoLinesBack()
    harness.engine.receive(lines.line(3, node: "h2", origin: 9, user: "bob", text: "theirs"))
    harness.engine.streamFound(created: after)
    #expect(harness.engine.outbox.allSatisfy { $0.node == "h1" })
    #expect(harness.engine.outbox.map(\.text) == ["first", "second", "third"])
  }

  @Test("a standing other than again or published is damage on replay")
  func unknownStandingIsDamage() {
    let line =
      ##"{"type":"outbox","id":"k4","node":"h1","to":"#ops","from":"alice","at":"2026-11-30T18:04:00.000Z","text":"x","standing":"waiting"}"##
    let read = Array(line.utf8).withUnsafeBufferPointer { try? JournalRecord(jsonLine: $0) }
    #expect(read == nil)
    let published = line.replacingOccurrences(of: "\"waiting\"", with: "\"published\"")
    let kept = Array(published.utf8).withUnsafeBufferPointer { try? JournalRecord(jsonLine: $0) }
    guard case .outbox(let outbox)? = kept else {
      Issue.record("a published outbox line was refused")
      return
    }
    #expect(outbox.standing == .published)
    #expect(
      !String(decoding: JournalRecord.outbox(outbox.asPublished).jsonLine, as: UTF8.self)
        .contains("standing"), "the field is never published")
  }
}

/// Rolling back what a failed sync held, for lines of the stream
/// (chatbroker(8), EXIT STATUS): each record is undone by the few fields it
/// changed, and the state is what a replay of the synced journal gives.
@Suite("Engine: rolling back lines read from the stream")
struct FederationRollbackTests {
  let lines = EngineFederationTests()

  /// The snapshot's records but this node's published lines, which a
  /// rollback keeps by design (``FederationState/restorable``).
  func durableRecords(_ harness: EngineHarness) -> [String] {
    var records: [String] = []
    harness.engine.snapshot().forEachRecord { record in
      if case .outbox(let line) = record, line.standing == .published { return }
      records.append(String(decoding: record.jsonLine, as: UTF8.self))
    }
    return records
  }

  @Test(
    "rolled back, lines from the stream and outbox lines leave what a replay of the synced journal leaves"
  )
  func rollbackMatchesReplay() {
    let harness = lines.federatedHarness()
    harness.engine.trackUnsyncedRecords()
    let alice = harness.connect("alice")
    for text in ["first", "second", "third"] { harness.send(alice, "SAY #ops :\(text)") }
    // Enough lines of h2 that one more pushes its oldest id out of memory.
    for index in 1...SeenIDsCapacity.value {
      harness.engine.receive(
        lines.line(UInt64(index), node: "h2", origin: UInt64(index), user: "bob", text: "b\(index)")
      )
    }
    let base = UInt64(SeenIDsCapacity.value)
    harness.engine.receive(lines.line(base + 1, node: "h1", origin: 1, text: "first"))
    harness.engine.recordsSynced(harness.engine.unsyncedRecordCount)
    let synced = harness.journal.records

    harness.engine.receive(lines.line(base + 2, node: "h1", origin: 2, text: "second"))
    harness.engine.receive(
      lines.line(base + 3, node: "h2", origin: base + 1, user: "bob", text: "evicts b1"))
    harness.engine.receive(lines.line(base + 4, node: "h1", origin: 1, text: "first"))
    harness.engine.receive(
      lines.line(base + 5, node: "h9", origin: 1, room: "#elsewhere", text: "x"))
    harness.send(alice, "SAY #ops :fourth")
    #expect(harness.engine.outbox.map(\.text) == ["third", "fourth"])
    harness.engine.rollBack(harness.engine.unsyncedRecordCount)

    let replayed = EngineHarness()
    replayed.engine.federate(EngineFederationTests.settings)
    for record in synced { replayed.engine.replay(record) }
    replayed.engine.finishReplay()
    #expect(harness.engine.outbox.map(\.text) == ["second", "third"])
    #expect(harness.engine.streamSequence == base + 1)
    // The header's next id stays past the one the rolled-back SAY took:
    // ids are never given twice.
    let (rolledBack, fromJournal) = (
      durableRecords(harness).dropFirst(), durableRecords(replayed).dropFirst()
    )
    let differing = zip(rolledBack, fromJournal).first { $0 != $1 }
    #expect(rolledBack.count == fromJournal.count)
    #expect(
      differing == nil, "first difference: \(differing.map { "\($0.0) against \($0.1)" } ?? "")")
    // h2's oldest id is remembered again: a copy of it is not shown.
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #ops")
    harness.engine.receive(lines.line(base + 6, node: "h2", origin: 1, user: "bob", text: "b1"))
    #expect(harness.output.take(bob).filter { $0.hasPrefix("MSG ") }.isEmpty)
  }
}

/// How many ids of a node a host remembers (chatbroker(8), "FEDERATION").
enum SeenIDsCapacity {
  static let value = 1024
}

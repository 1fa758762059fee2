import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// Compaction writes the live engine's state (chatbroker(8), DESCRIPTION:
/// "a new file that holds only what is kept"); replay is the truth, so
/// what it writes must be what replaying the journal so far would write.
@Suite("Compaction from the live state")
struct CompactionSnapshotTests {
  /// A compacted journal, replayed, compacts to itself: a private room
  /// whose creator is no longer its operator keeps who changed its modes
  /// last (the `mode` records' user and time), not the creator when the
  /// room was made private.
  @Test("a compacted journal compacts to itself again, who changed a room's modes last included")
  func compactionIsIdempotent() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #p invite")
    chat.send(alice, "INVITE #p bob")
    chat.send(bob, "JOIN #p")
    chat.send(alice, "MODE #p +o bob")
    chat.advance(to: "2026-11-30T18:00:00.000Z")
    #expect(chat.send(bob, "MODE #p -o alice").last == "OK MODE #p -o alice")
    #expect(chat.send(bob, "MODE #p +t") == ["OK MODE #p +t"])

    let live = records(chat.engine.snapshot())
    #expect(live.contains { $0.contains("\"mode\":\"+t\",\"user\":\"bob\"") })
    let restarted = EngineHarness().engine
    chat.engine.snapshot().forEachRecord { restarted.replay($0) }
    restarted.finishReplay()
    #expect(records(restarted.snapshot()) == live)
  }

  private func records(_ snapshot: EngineSnapshot) -> [String] {
    var lines: [String] = []
    snapshot.forEachRecord { lines.append(String(decoding: $0.jsonLine, as: UTF8.self)) }
    return lines
  }

  @Test("the live state writes the same records as a replay of its journal")
  func liveStateMatchesReplay() throws {
    var limits = Limits()
    limits.historyPerConversation = 5
    let chat = EngineHarness(limits: limits)
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #a")
    chat.send(bob, "JOIN #a")
    chat.send(bob, "JOIN #b")
    chat.send(alice, "TOPIC #a :first topic")
    chat.send(bob, "TOPIC #a :plans for the week")
    chat.send(bob, "TOPIC #b :cleared later")
    chat.send(bob, "TOPIC #b :")
    for index in 1...12 { chat.send(index % 2 == 0 ? alice : bob, "SAY #a line \(index)") }
    chat.send(alice, "SAY @bob :just us")
    chat.send(bob, "SAY #b @alice: look")
    chat.send(alice, "SAYAT #a +1h :later")
    chat.send(alice, "SAYAT #b +1d :tomorrow")
    let cancelled = okID(chat.send(alice, "SAYAT #b +2h :never"))
    chat.send(alice, "CANCEL \(cancelled)")
    let daily = okID(chat.send(bob, "SAYEVERY #a daily@20:00 :every day"))
    chat.send(bob, "EDIT \(daily) :changed")
    let newest = okID(chat.send(bob, "SAY #a newest"))
    chat.send(alice, "MARKREAD #a \(newest)")
    chat.send(bob, "PART #b")
    // A private room, whose creator is its first operator without a MODE
    // of their own, and modes changed by another operator.
    chat.send(alice, "JOIN #p invite")
    chat.send(alice, "INVITE #p bob")
    chat.send(bob, "JOIN #p")
    chat.send(alice, "MODE #a +o alice")
    chat.send(bob, "MODE #a +tm")
    chat.advance(to: "2026-11-30T19:30:00.000Z")  // SAYAT #a +1h is delivered

    let directory = try TemporaryDirectory()
    let journal = directory.path("journal.jsonl")
    let records = [JournalRecord.header(nextID: MessageID(value: 1))] + chat.journal.records
    try Data(records.flatMap(\.jsonLine)).write(to: URL(fileURLWithPath: journal))
    let size = try #require(
      FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
    try Compactor.writeCompacted(
      journal: journal, length: Int64(size), limits: limits, to: directory.path("replayed"))
    try Compactor.write(chat.engine.snapshot(), to: directory.path("live"))

    let replayed = try lines(of: directory.path("replayed"))
    let live = try lines(of: directory.path("live"))
    let kinds = [
      "room", "member", "message", "schedule", "series", "read", "topic", "access", "invite",
      "mode", "seen",
    ]
    #expect(
      kinds.allSatisfy { kind in replayed.contains { $0.contains("\"type\":\"\(kind)\"") } },
      "the scenario left every kind of state behind: \(replayed)")
    // Conversations come in no particular order; each one's lines in theirs.
    #expect(live.sorted() == replayed.sorted())
    #expect(live.filter { $0.contains("\"#a\"") } == replayed.filter { $0.contains("\"#a\"") })
    // What compaction writes, a start reads back: compacting it again
    // parses every record (a `mode` record that named no user did not).
    let liveSize = try #require(
      FileManager.default.attributesOfItem(atPath: directory.path("live"))[.size] as? Int)
    try Compactor.writeCompacted(
      journal: directory.path("live"), length: Int64(liveSize), limits: limits,
      to: directory.path("again"))
    #expect(try lines(of: directory.path("again")).sorted() == live.sorted())
  }

  private func lines(of path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
  }
}

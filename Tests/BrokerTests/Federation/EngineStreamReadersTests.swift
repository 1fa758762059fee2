import Broker
import LineProtocol
import TestSupport
import Testing

/// A host reads the stream through three consumers, each with its own
/// position (chatbroker(8), "FEDERATION" and "JOURNAL"): the rooms, and
/// the direct messages of the two kinds of pairs this host is in.
@Suite("Engine: the stream's three readers")
struct EngineStreamReadersTests {
  static let settings = EngineFederationTests.settings

  func federatedHarness() -> EngineHarness {
    EngineFederationTests().federatedHarness()
  }

  /// A line of `node` read by `reader`: to `#ops`, or to alice of this
  /// host when `dm`.
  func line(
    _ sequence: UInt64, node: String, origin: UInt64, reader: StreamReader, dm: Bool = false,
    text: String
  ) -> StreamLine {
    StreamLine(
      position: StreamPosition(
        sequence: sequence, node: node, origin: MessageID(value: origin), reader: reader),
      target: Target(dm ? "@alice@h1" : "#ops")!, user: "bob",
      time: Timestamp(rfc3339: "2026-11-30T17:00:00.000Z")!, text: text)
  }

  static func record(_ text: String) throws -> JournalRecord {
    try record(Array(text.utf8))
  }

  /// One journal line, without or with its LF, read as the journal is.
  static func record(_ line: [UInt8]) throws -> JournalRecord {
    var bytes = line
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    return try bytes.withUnsafeBufferPointer { buffer in try JournalRecord(jsonLine: buffer) }
  }

  /// Every record of `harness`'s compacted journal, written and read back
  /// as text, replayed into a new engine.
  static func compactedAndReplayed(_ harness: EngineHarness) throws -> EngineHarness {
    var lines: [[UInt8]] = []
    harness.engine.snapshot().forEachRecord { lines.append($0.jsonLine) }
    let restarted = EngineHarness()
    restarted.engine.federate(settings)
    for line in lines { restarted.engine.replay(try record(line)) }
    restarted.engine.finishReplay()
    return restarted
  }

  @Test(
    "a direct message at a sequence below the rooms' reader's is applied: each reader has its own position"
  )
  func readersHaveTheirOwnPositions() {
    let harness = federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    harness.engine.receive(line(10, node: "h2", origin: 3, reader: .rooms, text: "room line"))
    harness.engine.receive(line(5, node: "h2", origin: 2, reader: .dmFirst, dm: true, text: "dm"))
    #expect(
      harness.output.take(alice).map { $0.split(separator: ":").last! } == ["room line", "dm"])
    var expected = StreamSequences()
    expected[.rooms] = 10
    expected[.dmFirst] = 5
    #expect(harness.engine.streamSequences == expected)
    // Read again (a consumer made afresh after a lost reply): shown once.
    harness.engine.receive(line(5, node: "h2", origin: 2, reader: .dmFirst, dm: true, text: "dm"))
    #expect(harness.output.take(alice) == [])
  }

  @Test(
    "a compacted journal keeps each reader's position and the ids applied; an unknown reader is refused"
  )
  func compactionKeepsEveryReader() throws {
    let harness = federatedHarness()
    harness.engine.receive(line(10, node: "h2", origin: 3, reader: .rooms, text: "room line"))
    harness.engine.receive(line(5, node: "h2", origin: 2, reader: .dmFirst, dm: true, text: "dm"))
    harness.engine.receive(line(7, node: "a0", origin: 1, reader: .dmSecond, dm: true, text: "a0"))
    let restarted = try Self.compactedAndReplayed(harness)
    #expect(restarted.engine.streamSequences == harness.engine.streamSequences)
    #expect(restarted.engine.streamSequences[.dmSecond] == 7)
    // Lines applied before are known by their ids, whatever reads them.
    let alice = restarted.connect("alice")
    restarted.engine.receive(line(11, node: "h2", origin: 2, reader: .rooms, text: "dm"))
    #expect(restarted.send(alice, "HISTORY @bob@h2").count == 2)
    #expect(throws: JournalFormatError.self) {
      try Self.record(#"{"type":"stream","seq":8,"reader":"dm3"}"#)
    }
  }

  @Test(
    "a journal written when one consumer read the whole stream loads: its position counts for every reader"
  )
  func journalOfOneReaderLoads() throws {
    let restarted = EngineHarness()
    restarted.engine.federate(Self.settings)
    for text in [
      #"{"type":"journal","version":1,"next_id":"2"}"#,
      #"{"type":"stream","created":"2026-11-30T16:00:00.000Z","offset":28857600000000}"#,
      #"{"type":"remote","id":"z00000000007","to":"@alice","from":"bob@h2","at":"2026-11-30T17:00:00.000Z","seq":7,"node":"h2","origin":"9","text":"old dm"}"#,
      #"{"type":"stream","seq":8}"#,
      #"{"type":"stream","seq":8,"node":"h2","origin":"9"}"#,
      #"{"type":"stream","node":"h1","id":"1"}"#,
    ] {
      restarted.engine.replay(try Self.record(text))
    }
    restarted.engine.finishReplay()
    for reader in StreamReader.allCases {
      #expect(restarted.engine.streamSequences[reader] == 8)
    }
    let alice = restarted.connect("alice")
    #expect(restarted.send(alice, "HISTORY @bob@h2").count == 2)
    // The readers go on after it: an old line is not applied again.
    restarted.engine.receive(line(8, node: "h3", origin: 1, reader: .dmSecond, dm: true, text: "x"))
    restarted.engine.receive(
      line(9, node: "h2", origin: 10, reader: .dmFirst, dm: true, text: "new"))
    #expect(restarted.output.take(alice).count == 1, "the new line, once")
    #expect(restarted.send(alice, "HISTORY @bob@h2").count == 3)
    #expect(restarted.send(alice, "HISTORY @bob@h3") == ["OK HISTORY @bob@h3 0"])
    let compacted = try Self.compactedAndReplayed(restarted)
    #expect(compacted.engine.streamSequences == restarted.engine.streamSequences)
  }
}

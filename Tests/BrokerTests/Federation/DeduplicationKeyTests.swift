import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// A line's de-duplication id in the stream is one no other node can
/// predict (chatbroker(8), "FEDERATION"): computed with SipHash from a
/// random key journaled with the line and never published.
@Suite("Federation: de-duplication ids no other node can predict")
struct DeduplicationKeyTests {
  let created = Timestamp(rfc3339: "2026-11-30T16:00:00.000Z")!

  /// SipHash-2-4's 128-bit outputs for the key 00 01 ... 0f and the
  /// message 00 01 ... of each length, from the reference implementation's
  /// test vectors: the empty message, a partial word, a whole one, one and
  /// a partial, two.
  static let vectors: [(length: Int, hash: String)] = [
    (0, "a3817f04ba25a8e66df67214c7550293"),
    (1, "da87c1d86b99af44347659119b22fc45"),
    (7, "a1f1ebbed8dbc153c0b84aa61ff08239"),
    (8, "3b62a9ba6258f5610f83e264f31497b4"),
    (15, "5493e99933b0a8117e08ec0f97cfc3d9"),
    (16, "6ee2a4ca67b054bbfd3315bf85230577"),
  ]

  @Test("SipHash-2-4 with 128-bit output is the reference's", arguments: vectors)
  func sipHashMatchesTheReference(_ vector: (length: Int, hash: String)) {
    // The reference's key bytes 00 ... 0f, read little-endian.
    let (first, second) = SipHash.hash128(
      (0..<vector.length).map { UInt8($0) }, k0: 0x0706_0504_0302_0100, k1: 0x0f0e_0d0c_0b0a_0908)
    // Its output bytes, each half little-endian.
    var hex = ""
    for word in [first, second] {
      for shift in stride(from: 0, to: 64, by: 8) {
        let byte = UInt8(truncatingIfNeeded: word >> UInt64(shift))
        hex += (byte < 16 ? "0" : "") + String(byte, radix: 16)
      }
    }
    #expect(hex == vector.hash)
  }

  @Test("a key is written as 32 hexadecimal digits and read back; anything else is refused")
  func hexRoundTrip() {
    let key = DeduplicationKey(high: 0x0123_4567_89ab_cdef, low: 0xf)
    #expect(key.hex == "0123456789abcdef000000000000000f")
    #expect(DeduplicationKey(hex: key.hex) == key)
    for wrong in [
      "", "0123456789abcdef000000000000000", "0123456789ABCDEF000000000000000f",
      "0123456789abcdef000000000000000g", "0123456789abcdef000000000000000f0",
    ] {
      #expect(DeduplicationKey(hex: wrong) == nil, "\(wrong)")
    }
  }

  @Test(
    "the id names the node and the line, and its secret part changes with the key and with the stream"
  )
  func messageIDs() {
    let key = DeduplicationKey.random()
    let id = MessageID(value: 5)
    let first = key.messageID(node: "h2", id: id, streamCreated: created)
    #expect(first.hasPrefix("h2:5:") && first.count == "h2:5:".count + 32)
    #expect(key.messageID(node: "h2", id: id, streamCreated: created) == first, "stable")
    let later = Timestamp(milliseconds: created.milliseconds + 1)
    #expect(key.messageID(node: "h2", id: id, streamCreated: later) != first, "another stream")
    #expect(
      DeduplicationKey.random().messageID(node: "h2", id: id, streamCreated: created) != first,
      "another key")
    #expect(DeduplicationKey.random() != DeduplicationKey.random())
  }

  @Test(
    "the outbox record keeps the key as dedup_key, the stream's copy has none, and a record without one (before 1.5) is read"
  )
  func journalField() throws {
    let key = DeduplicationKey(high: 1, low: 2)
    let line = OutboxLine(
      id: MessageID(value: 4), node: "h1", target: Target("#ops")!, author: "alice",
      time: created, text: "x", dedupKey: key)
    let written = String(decoding: JournalRecord.outbox(line).jsonLine, as: UTF8.self)
    #expect(written.contains(#""dedup_key":"00000000000000010000000000000002""#))
    #expect(try read(written) == .outbox(line))
    let published = String(
      decoding: JournalRecord.outbox(line.asPublished).jsonLine, as: UTF8.self)
    #expect(!published.contains("dedup_key"), "the key is never published")
    let older =
      ##"{"type":"outbox","id":"4","node":"h1","to":"#ops","from":"alice","at":"2026-11-30T16:00:00.000Z","text":"x"}"##
    guard case .outbox(let old) = try read(older) else {
      Issue.record("an outbox record before 1.5 was refused")
      return
    }
    #expect(old.dedupKey == nil && old.text == "x")
    let damaged = older.replacingOccurrences(of: #""text""#, with: #""dedup_key":"00","text""#)
    #expect(throws: JournalFormatError.self) { try read(damaged) }
  }

  @Test("every line said gets a key of its own, which a restart replays")
  func engineDrawsKeys() {
    let lines = EngineFederationTests()
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    for text in ["one", "two"] { harness.send(alice, "SAY #ops :\(text)") }
    let keys = harness.engine.outbox.map(\.dedupKey)
    #expect(keys.allSatisfy { $0 != nil } && Set(keys).count == 2)
    let restarted = EngineRepublishTests().replayed(harness.journal.records)
    #expect(restarted.engine.outbox.map(\.dedupKey) == keys)
  }

  /// A journal line read back, without its LF.
  func read(_ line: String) throws -> JournalRecord {
    let bytes = Array(line.utf8.filter { $0 != UInt8(ascii: "\n") })
    return try bytes.withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
  }
}

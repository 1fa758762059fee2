import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// A line's de-duplication id in the stream is one no other node can
/// predict (chatbroker(8), "FEDERATION"): an HMAC-SHA256 under a random
/// key journaled with the line and never published.
@Suite("Federation: de-duplication ids no other node can predict")
struct DeduplicationKeyTests {
  let created = Timestamp(rfc3339: "2026-11-30T16:00:00.000Z")!

  /// HMAC-SHA256 test cases 1, 2 and 5 (truncated to 128 bits) of
  /// RFC 4231: the key, the message and the HMAC, in hexadecimal.
  static let vectors: [(key: String, message: String, hmac: String)] = [
    (
      String(repeating: "0b", count: 20), "4869205468657265",
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ),
    (
      "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ),
    (
      String(repeating: "0c", count: 20), "546573742057697468205472756e636174696f6e",
      "a3b6167473100ee06e0c796c2955552b"
    ),
  ]

  @Test("HMAC-SHA256, whole and truncated, is RFC 4231's", arguments: vectors)
  func hmacMatchesTheRFC(_ vector: (key: String, message: String, hmac: String)) {
    let hmac = Digest.hmacSHA256(
      key: bytes(vector.key), bytes(vector.message), count: vector.hmac.count / 2)
    #expect(LowerHex.string(hmac) == vector.hmac)
  }

  /// The bytes hexadecimal `digits` write.
  func bytes(_ digits: String) -> [UInt8] {
    let characters = Array(digits)
    return stride(from: 0, to: characters.count, by: 2).map {
      UInt8(String(characters[$0...$0 + 1]), radix: 16)!
    }
  }

  @Test(
    "the id's secret part is the truncated HMAC of the stream's creation time and the line's id")
  func messageIDIsTheHMAC() {
    let key = DeduplicationKey(high: 0x0001_0203_0405_0607, low: 0x0809_0a0b_0c0d_0e0f)
    // Key 00 01 ... 0f; message: 1 ms after the epoch, then id 5, each
    // eight bytes big-endian.
    let message = bytes("0000000000000001" + "0000000000000005")
    let expected = LowerHex.string(
      Digest.hmacSHA256(key: Array(0...15), message, count: 16))
    #expect(
      key.messageID(node: "h1", id: MessageID(value: 5), streamCreated: Timestamp(milliseconds: 1))
        == "h1:5:" + expected)
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

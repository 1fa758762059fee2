import Testing

@testable import Broker

/// Every line held for a sync is a ``HeldLine`` in its receiver's queue:
/// a `SAY` to 1,000 receivers holds 1,000 of them until the sync returns,
/// so their size is memory the serving thread writes and reads back per
/// delivery. With a request stored inline in ``LineKind``, a protocol
/// existential for ``ReplyContext`` and its byte count stored, a held line
/// was 112 bytes, and the durable fan-out to 1,000 receivers took the
/// serving thread about half as long again per `SAY` as at 32 (see
/// ``LineKind/answer(_:)``).
@Suite("What a held line costs in memory")
struct HeldLineLayoutTests {
  @Test("a line's kind is one word, whatever request an answer carries")
  func kindIsOneWord() {
    #expect(MemoryLayout<LineKind>.size <= MemoryLayout<Int>.size + 1)
  }

  @Test("a held line takes at most 32 bytes of its receiver's queue")
  func heldLineIsSmall() {
    #expect(MemoryLayout<HeldLine>.stride <= 32)
  }
}

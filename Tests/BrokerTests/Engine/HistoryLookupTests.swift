import LineProtocol
import Testing

@testable import Broker

/// The lookup behind `HISTORY BEFORE`/`AFTER` and `MARKREAD` (chatbroker(7)):
/// a kept message is found by its id, by binary search while ids ascend, and
/// still where a late delivery or a line from another host broke the order.
@Suite("History: a message found by its id")
struct HistoryLookupTests {
  @Test(
    "finds every kept message and no other, with ids out of order, full rings, texts past the byte bound and rollbacks"
  )
  func agreesWithADictionary() {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<300 {
      // Half of the histories are also bounded by their texts' bytes,
      // which drops several messages at once and frees slots mid-ring.
      let bytes = Bool.random(using: &random) ? Int.random(in: 0...60, using: &random) : .max
      var history = History(capacity: Int.random(in: 1...30, using: &random), byteCapacity: bytes)
      var kept: [MessageID: Int] = [:]
      var keptInOrder: [MessageID] = []
      var evictions: [DroppedMessages] = []
      var used = Set<UInt64>()
      var next: UInt64 = 1000
      for _ in 0..<Int.random(in: 0...150, using: &random) {
        if !keptInOrder.isEmpty && Int.random(in: 0..<8, using: &random) == 0 {
          history.removeNewest(restoring: evictions.removeLast())
          kept[keptInOrder.removeLast()] = nil
          rebuild(&kept, &keptInOrder, from: history)
          continue
        }
        // Mostly the next id; now and then an older one (a late delivery).
        var value = next
        if Int.random(in: 0..<6, using: &random) == 0 {
          value = UInt64.random(in: 1..<1000, using: &random)
        } else {
          next += UInt64.random(in: 1...3, using: &random)
        }
        guard used.insert(value).inserted else { continue }
        let message = StoredMessage(
          id: MessageID(value: value), time: Timestamp(milliseconds: 0), author: "alice",
          text: String(repeating: "h", count: Int.random(in: 1...20, using: &random)))
        evictions.append(history.append(message))
        rebuild(&kept, &keptInOrder, from: history)
        for id in used.map(MessageID.init(value:)) {
          #expect(history.sequence(of: id) == kept[id])
        }
      }
    }
  }

  /// What the history keeps, read back by position.
  private func rebuild(
    _ kept: inout [MessageID: Int], _ keptInOrder: inout [MessageID], from history: History
  ) {
    kept = [:]
    keptInOrder = []
    for sequence in history.firstSequence..<history.endSequence {
      kept[history[sequence].id] = sequence
      keptInOrder.append(history[sequence].id)
    }
  }
}

import LineProtocol
import Testing

@testable import Broker

/// The search behind chatbroker(7)'s IRC `CHATHISTORY TARGETS`: the newest
/// message in a time window, found by binary search where a history is in
/// time order, and still right where a late delivery or a clock set back
/// broke the order.
@Suite("History: the newest message in a time window")
struct HistorySearchTests {
  /// What the search must find: the newest (by position) message below
  /// `end` whose time is strictly inside the window.
  private func scanned(_ history: History, after: Int64, before: Int64, end: Int) -> Int64? {
    let end = max(history.firstSequence, min(end, history.endSequence))
    return (history.firstSequence..<end).reversed().lazy.map { history[$0].time.milliseconds }
      .first { after < $0 && $0 < before }
  }

  @Test(
    "finds what a scan of every message finds, with clocks set back, full rings, byte bounds and rollbacks"
  )
  func agreesWithAScan() {
    var random = SystemRandomNumberGenerator()
    for round in 0..<200 {
      var history = History(
        capacity: Int.random(in: 1...40, using: &random),
        byteCapacity: Bool.random(using: &random) ? Int.random(in: 0...80, using: &random) : .max)
      var time: Int64 = 1_000_000
      var evictions: [DroppedMessages] = []
      for number in 0..<Int.random(in: 0...120, using: &random) {
        // Mostly forward, sometimes the same instant, now and then back.
        switch Int.random(in: 0..<20, using: &random) {
        case 0: time -= Int64.random(in: 1...500, using: &random)
        case 1: break
        default: time += Int64.random(in: 1...100, using: &random)
        }
        if Int.random(in: 0..<15, using: &random) == 0, let evicted = evictions.popLast() {
          history.removeNewest(restoring: evicted)
          continue
        }
        evictions.append(
          history.append(
            StoredMessage(
              id: MessageID(value: UInt64(round * 1000 + number + 1)),
              time: Timestamp(milliseconds: time), author: "a", text: "\(number)")))
      }
      for _ in 0..<50 {
        let after = time - Int64.random(in: -200...3000, using: &random)
        let before = after + Int64.random(in: 0...2000, using: &random)
        let end = history.endSequence - Int.random(in: 0...3, using: &random)
        let found = history.newestTime(
          after: Timestamp(milliseconds: after), before: Timestamp(milliseconds: before),
          endBefore: end)
        #expect(
          found?.milliseconds == scanned(history, after: after, before: before, end: end),
          "round \(round): window \(after)..<\(before), end \(end)")
      }
    }
  }
}

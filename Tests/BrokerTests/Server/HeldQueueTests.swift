import LineProtocol
import Testing

@testable import Broker

/// A connection's lines held for a sync leave in the order they were
/// queued, and only once the records they show are durable (chatbroker(7),
/// "Order and durability"); a line dropped or released is freed.
@Suite("A connection's queue of lines held for a sync")
struct HeldQueueTests {
  @Test("lines leave oldest first, each once its records are durable, as the ring grows and wraps")
  func ordered() {
    var queue = HeldQueue()
    var next = 0
    var expected: [String] = []
    // Appends and releases interleaved so the ring wraps and grows.
    for round in 1...6 {
      for _ in 0..<(round * 5) {
        next += 1
        queue.append(held("line \(next)", journalCount: UInt64(next)))
        expected.append("line \(next)")
      }
      let durable = UInt64(next - round)  // the newest few stay held
      var released: [String] = []
      while let line = queue.popFirst(durable: durable) { released.append(text(line)) }
      let leaving = expected.prefix(while: { Int($0.dropFirst(5))! <= Int(durable) })
      #expect(released == Array(leaving), "round \(round)")
      expected.removeFirst(leaving.count)
      let left = queue.count
      #expect(left == round, "a line whose records are not durable stays")
    }
    #expect(queue.takeAll().map(text) == expected)
    let empty = queue.isEmpty
    #expect(empty)
  }

  @Test("a line behind one that waits waits too, even if its own records are durable")
  func behindAWaitingLine() {
    var queue = HeldQueue()
    queue.append(held("MSG", journalCount: 5))
    queue.append(held("PONG", journalCount: 0))
    #expect(queue.popFirst(durable: 4) == nil)
    #expect(queue.popFirst(durable: 5).map(text) == "MSG")
    #expect(queue.popFirst(durable: 5).map(text) == "PONG")
    #expect(queue.popFirst(durable: .max) == nil, "nothing is left")
  }

  @Test("lines released, dropped or left in a queue that goes are freed")
  func freed() {
    weak var released: Outgoing?
    weak var dropped: Outgoing?
    weak var leftBehind: Outgoing?
    do {
      var queue = HeldQueue()
      let lines = (0..<3).map { Outgoing(.ok(.say, fields: ["\($0)"])) }
      (released, dropped, leftBehind) = (lines[0], lines[1], lines[2])
      queue.append(
        HeldLine(journalCount: 1, kind: .revealing, line: .event(lines[0], answering: nil)))
      _ = queue.popFirst(durable: 1)
      queue.append(
        HeldLine(journalCount: 2, kind: .revealing, line: .event(lines[1], answering: nil)))
      queue.removeAll()
      queue.append(
        HeldLine(journalCount: 3, kind: .revealing, line: .event(lines[2], answering: nil)))
      let left = queue.count
      #expect(left == 1)
    }
    #expect(released == nil && dropped == nil && leftBehind == nil)
  }

  private func held(_ text: String, journalCount: UInt64) -> HeldLine {
    HeldLine(journalCount: journalCount, kind: .revealing, line: .bytes(Array(text.utf8)))
  }

  private func text(_ line: HeldLine) -> String {
    guard case .bytes(let bytes) = line.line else { return "?" }
    return String(decoding: bytes, as: UTF8.self)
  }
}

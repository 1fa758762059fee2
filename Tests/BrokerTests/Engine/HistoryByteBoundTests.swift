import LineProtocol
import Testing

@testable import Broker

/// A conversation keeps at most `--history-per-conversation` messages and
/// `--history-bytes-per-conversation` bytes of text, the newest always
/// (chatbroker(8)): what it keeps is what a plain list trimmed from the
/// front to both bounds keeps, through appends, redactions and rollbacks.
@Suite("History: bounded in bytes as well as in messages")
struct HistoryByteBoundTests {
  @Test("keeps what a list trimmed to both bounds keeps, and a rollback puts back what it dropped")
  func agreesWithATrimmedList() {
    var random = SystemRandomNumberGenerator()
    for round in 0..<300 {
      let capacity = Int.random(in: 1...20, using: &random)
      let budget = Int.random(in: 0...100, using: &random)
      var history = History(capacity: capacity, byteCapacity: budget)
      var model: [StoredMessage] = []
      var undo: [(evicted: DroppedMessages, model: [StoredMessage])] = []
      for number in 0..<Int.random(in: 0...120, using: &random) {
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
          guard let last = undo.popLast() else { continue }
          history.removeNewest(restoring: last.evicted)
          model = last.model
        case 1:
          guard !model.isEmpty else { continue }
          let index = Int.random(in: 0..<model.count, using: &random)
          let sequence = history.firstSequence + index
          history.replace(at: sequence, with: history[sequence].redacted)
          model[index] = model[index].redacted
          // What was undone before a redaction is not undone after it.
          undo.removeAll()
        default:
          let message = StoredMessage(
            id: MessageID(value: UInt64(round * 1000 + number + 1)),
            time: Timestamp(milliseconds: Int64(number)), author: "a",
            text: String(repeating: "x", count: Int.random(in: 1...40, using: &random)))
          let before = model
          model.append(message)
          var dropped: [StoredMessage] = []
          while model.count > capacity { dropped.append(model.removeFirst()) }
          while model.count > 1 && textBytes(model) > budget { dropped.append(model.removeFirst()) }
          let evicted = history.append(message)
          #expect(evicted.all == dropped, "round \(round), step \(number)")
          undo.append((evicted, before))
        }
        #expect(kept(history) == model, "round \(round), step \(number)")
        #expect(history.textBytes == textBytes(model))
        #expect(history.newest == model.last)
        for (index, message) in model.enumerated() {
          #expect(history.sequence(of: message.id) == history.firstSequence + index)
        }
      }
    }
  }

  @Test("a text longer than the bound is kept alone; shorter ones fill it again")
  func longTextKeptAlone() {
    var history = History(capacity: 100, byteCapacity: 10)
    for number in 1...5 { _ = history.append(message(number, text: "abc")) }
    #expect(kept(history).map(\.text) == ["abc", "abc", "abc"])
    let evicted = history.append(message(6, text: String(repeating: "y", count: 25)))
    #expect(evicted.all.map(\.id.value) == [3, 4, 5], "all three older ones make room at once")
    #expect(kept(history).map(\.id.value) == [6] && history.textBytes == 25)
    _ = history.append(message(7, text: "12345"))
    #expect(kept(history).map(\.id.value) == [7], "the long one goes as soon as it is not newest")
    for number in 8...12 { _ = history.append(message(number, text: "ab")) }
    #expect(kept(history).map(\.id.value) == [8, 9, 10, 11, 12])
  }

  private func message(_ number: Int, text: String) -> StoredMessage {
    StoredMessage(
      id: MessageID(value: UInt64(number)), time: Timestamp(milliseconds: Int64(number)),
      author: "a", text: text)
  }

  private func kept(_ history: History) -> [StoredMessage] {
    (history.firstSequence..<history.endSequence).map { history[$0] }
  }

  private func textBytes(_ messages: [StoredMessage]) -> Int {
    messages.reduce(0) { $0 + $1.text.utf8.count }
  }
}

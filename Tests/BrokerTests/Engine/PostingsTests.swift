import LineProtocol
import Testing

@testable import Broker

/// ``Postings``, the first number kept inline: every change a history
/// makes to a word's postings gives what a plain sorted array gives.
@Suite("Postings: a word's sequence numbers, the first one inline")
struct PostingsTests {
  @Test("appends, evictions, rollbacks and redactions match a sorted array", arguments: 1...20)
  func matchesAnArray(seed: Int) {
    var random = SplitMix64(seed: UInt64(seed))
    var model: [Int] = []
    var postings: Postings?
    var next = 0
    for _ in 0..<400 {
      switch Int.random(in: 0..<6, using: &random) {
      case 0, 1:
        next += Int.random(in: 1...3, using: &random)
        model.append(next)
        if postings == nil { postings = Postings(next) } else { postings!.append(next) }
      case 2 where !model.isEmpty:
        model.removeFirst()
        postings!.removeFirst()
      case 3 where !model.isEmpty:
        model.removeLast()
        postings!.removeLast()
      case 4 where !model.isEmpty:
        let taken = model.remove(at: Int.random(in: 0..<model.count, using: &random))
        postings!.remove(taken)
        postings!.remove(taken)  // twice is nothing
      case 5:
        let low = (model.first ?? 1) - 1
        guard low >= 0, !model.contains(low) else { break }
        model.insert(low, at: 0)
        if postings == nil || postings!.isEmpty {
          postings = Postings(low)
        } else {
          postings!.prepend(low)
        }
        let middle = Int.random(in: low...max(low, next), using: &random)
        if !model.contains(middle) {
          model.insert(middle, at: model.firstIndex { $0 > middle } ?? model.count)
          postings!.insert(middle)
        }
      default:
        break
      }
      if let postings {
        #expect(Array(postings) == model)
        for probe in (model.first ?? 0)...((model.last ?? 0) + 1) {
          #expect(postings.contains(sequence: probe) == model.contains(probe))
        }
      }
    }
  }
}

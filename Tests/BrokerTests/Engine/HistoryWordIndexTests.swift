import LineProtocol
import Testing

@testable import Broker

/// The word index of a replayed history, built after start-up a slice at
/// a time (chatbroker(7), `SEARCH`): whatever happened to the history
/// meanwhile, the finished index is the one indexing as it went would
/// have built.
@Suite("History: the word index built after start-up")
struct HistoryWordIndexTests {
  private static let vocabulary = ["deploy", "lunch", "build", "red", "green", "ops", "café"]

  /// Every word's postings of kept messages, as plain arrays: those of
  /// messages dropped stay until a sweep, which a search skips.
  private func postings(_ history: History) -> [String: [Int]] {
    var all: [String: [Int]] = [:]
    for word in Self.vocabulary.map({ SearchWords.words(in: $0)[0] }) {
      all[word] =
        history.postings(of: [word]).map { Array($0[0]) }?
        .filter { $0 >= history.firstSequence } ?? []
    }
    return all
  }

  @Test(
    "a message dropped after its slice was indexed, then put back by a rollback, keeps its postings once"
  )
  func rolledBackAfterASlice() {
    var eager = History(capacity: 2)
    var deferred = History(capacity: 2, indexWordsLater: true)
    let messages = ["deploy red", "lunch", "build green"].enumerated().map { number, text in
      StoredMessage(
        id: MessageID(value: UInt64(number + 1)), time: Timestamp(milliseconds: Int64(number)),
        author: "a", text: text)
    }
    for message in messages[0..<2] {
      _ = eager.append(message)
      _ = deferred.append(message)
    }
    deferred.indexWords(upTo: 1)  // the first message only
    let dropped = eager.append(messages[2])
    #expect(deferred.append(messages[2]) == dropped)
    eager.removeNewest(restoring: dropped)
    deferred.removeNewest(restoring: dropped)
    deferred.indexWords(upTo: .max)
    #expect(postings(deferred) == postings(eager))
    #expect(postings(deferred)["deploy"] == [0])
  }

  @Test(
    "appends, evictions by count and bytes, rollbacks and redactions between slices leave the same index as indexing at once"
  )
  func deferredIndexMatchesEager() {
    var random = SystemRandomNumberGenerator()
    for round in 0..<300 {
      let capacity = Int.random(in: 1...30, using: &random)
      // Half of the rounds also bound the texts' bytes: one append then
      // drops several messages, and a rollback puts them all back.
      let bytes = Bool.random(using: &random) ? Int.random(in: 0...60, using: &random) : .max
      var eager = History(capacity: capacity, byteCapacity: bytes)
      var deferred = History(capacity: capacity, byteCapacity: bytes, indexWordsLater: true)
      var evictions: [DroppedMessages] = []
      var sliced = false
      for number in 0..<Int.random(in: 0...100, using: &random) {
        switch Int.random(in: 0..<20, using: &random) {
        case 0...1:
          if let evicted = evictions.popLast() {
            eager.removeNewest(restoring: evicted)
            deferred.removeNewest(restoring: evicted)
          }
        case 2:
          if eager.count > 0 {
            let sequence = Int.random(in: eager.firstSequence..<eager.endSequence, using: &random)
            eager.replace(at: sequence, with: eager[sequence].redacted)
            deferred.replace(at: sequence, with: deferred[sequence].redacted)
          }
        case 3...5:
          // Start-up is over: the index grows a slice at a time.
          sliced = true
          deferred.indexWords(upTo: Int.random(in: 0...7, using: &random))
        default:
          let words = (0..<Int.random(in: 1...3, using: &random)).map { _ in
            Self.vocabulary.randomElement(using: &random)!
          }
          let message = StoredMessage(
            id: MessageID(value: UInt64(round * 1000 + number + 1)),
            time: Timestamp(milliseconds: Int64(number)), author: "a",
            text: words.joined(separator: " "))
          let evicted = eager.append(message)
          #expect(deferred.append(message) == evicted)
          evictions.append(evicted)
        }
        if deferred.wordsComplete {
          #expect(postings(deferred) == postings(eager), "round \(round), step \(number)")
        }
      }
      #expect(deferred.unindexedCount <= deferred.count)
      deferred.indexWords(upTo: .max)
      #expect(deferred.wordsComplete && deferred.unindexedCount == 0)
      #expect(postings(deferred) == postings(eager), "round \(round), sliced: \(sliced)")
    }
  }
}

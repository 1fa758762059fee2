import LineProtocol
import Testing

@testable import Broker

/// What is unread after a read marker (chatbroker(7), "Your rooms and read
/// markers"), as ``History`` counts it from its index of authors and
/// mentions, must be what counting the kept messages one by one gives:
/// through full histories, byte bounds, rollbacks, and the sweeps that
/// take out what dropped messages left in the index.
@Suite("History: unread counts")
struct HistoryUnreadTests {
  static let users = ["alice", "bob", "carol", "dave"]
  static let texts = [
    "hi", "@bob look", "carol: done?", "thanks @dave.", "@alice @bob @carol", "me@host",
    "bob: @carol", "plain words only",
  ]

  @Test("counts what a scan of the kept messages counts, across many sweeps and rollbacks")
  func agreesWithAScan() {
    var random = SystemRandomNumberGenerator()
    for round in 0..<60 {
      let bytes = Bool.random(using: &random) ? Int.random(in: 10...120, using: &random) : .max
      var history = History(capacity: Int.random(in: 1...30, using: &random), byteCapacity: bytes)
      var undo: [DroppedMessages] = []
      for number in 0..<Int.random(in: 0...400, using: &random) {
        if !undo.isEmpty && Int.random(in: 0..<6, using: &random) == 0 {
          history.removeNewest(restoring: undo.removeLast())
        } else {
          let message = StoredMessage(
            id: MessageID(value: UInt64(round * 1000 + number + 1)),
            time: Timestamp(milliseconds: Int64(number)),
            author: Self.users.randomElement(using: &random)!,
            text: Self.texts.randomElement(using: &random)!)
          undo.append(history.append(message))
          if undo.count > 8 { undo.removeFirst() }
        }
        let user = Self.users.randomElement(using: &random)!
        let marker: Int? =
          Bool.random(using: &random)
          ? nil
          : Int.random(in: (history.firstSequence - 3)..<history.endSequence, using: &random)
        let direct = Bool.random(using: &random)
        let counted = history.unread(for: user, after: marker, direct: direct)
        let expected = scanned(history, user: user, after: marker, direct: direct)
        #expect(
          counted.unread == expected.unread && counted.mentions == expected.mentions,
          "round \(round), step \(number): \(user) after \(String(describing: marker))")
      }
    }
  }

  /// Unread and mentions for `user`, one kept message at a time.
  private func scanned(_ history: History, user: String, after marker: Int?, direct: Bool) -> (
    unread: Int, mentions: Int
  ) {
    let lower = max(history.firstSequence, (marker ?? history.firstSequence - 1) + 1)
    let others = (lower..<max(lower, history.endSequence)).map { history[$0] }
      .filter { $0.author != user }
    let mentioning = others.filter { Mentions.names(in: $0.text).contains(Substring(user)) }
    return (others.count, direct ? others.count : mentioning.count)
  }
}

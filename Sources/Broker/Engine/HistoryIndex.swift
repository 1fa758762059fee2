/// Which kept messages of a history each author wrote and each name is
/// mentioned in (chatbroker(7), "Your rooms and read markers"), as sequence
/// numbers, oldest first. With it, what is unread after any read marker is
/// counted by binary search, however long the history: `CONVERSATIONS`,
/// `JOIN` and `MARKREAD` never scan a history, and a message costs one
/// entry per author and per name it mentions.
///
/// A message dropped from the front of its history leaves its entries
/// behind until a sweep (``forget(below:kept:)``): counts are asked only of
/// kept sequence numbers, which the binary search tells apart, and finding
/// an old message's mentions again to remove them was a fifth of a full
/// history's append (`perf record`, fan-out to 10). A sweep runs once a
/// quarter as many messages have left as are kept, so the entries of the
/// messages gone are never more than a quarter of those kept (or 64).
struct HistoryIndex: Sendable {
  private var authors: [String: FIFOQueue<Int>] = [:]
  private var mentions: [String: FIFOQueue<Int>] = [:]
  /// Every entry from this sequence number on is held; none below it.
  private var heldFrom = 0

  /// A message entered the history as its newest, at `sequence`.
  mutating func addNewest(_ message: StoredMessage, at sequence: Int) {
    authors[message.author, default: FIFOQueue()].append(sequence)
    for name in Self.mentioned(by: message) {
      mentions[name, default: FIFOQueue()].append(sequence)
    }
  }

  /// The history keeps the messages from `firstSequence` on, `kept` of
  /// them: the entries of those before are swept out once a quarter as
  /// many have left (and at least 64).
  mutating func forget(below firstSequence: Int, kept: Int) {
    guard firstSequence - heldFrom > max(kept / 4, 64) else { return }
    Self.sweep(&authors, below: firstSequence)
    Self.sweep(&mentions, below: firstSequence)
    heldFrom = firstSequence
  }

  /// The newest message was taken back out (a rollback).
  mutating func removeNewest(_ message: StoredMessage) {
    Self.remove(message.author, from: &authors) { $0.removeLast() }
    for name in Self.mentioned(by: message) {
      Self.remove(name, from: &mentions) { $0.removeLast() }
    }
  }

  /// A dropped message was put back as the oldest (a rollback): its
  /// entries are still there unless a sweep took them.
  mutating func addOldest(_ message: StoredMessage, at sequence: Int) {
    guard sequence < heldFrom else { return }
    heldFrom = sequence
    authors[message.author, default: FIFOQueue()].prepend(sequence)
    for name in Self.mentioned(by: message) {
      mentions[name, default: FIFOQueue()].prepend(sequence)
    }
  }

  /// How many messages in `range` `user` wrote.
  func written(by user: String, in range: Range<Int>) -> Int {
    authors[user]?.count(in: range) ?? 0
  }

  /// How many messages in `range` mention `user`, their own not counted.
  func mentioning(_ user: String, in range: Range<Int>) -> Int {
    mentions[user]?.count(in: range) ?? 0
  }

  /// The names a message mentions, its author's own left out: a user's
  /// own lines are never unread.
  private static func mentioned(by message: StoredMessage) -> [String] {
    Mentions.names(in: message.text).compactMap { $0 == message.author ? nil : String($0) }
  }

  /// Drops every entry below `sequence`, and the keys left with none.
  private static func sweep(_ lists: inout [String: FIFOQueue<Int>], below sequence: Int) {
    var emptied: [String] = []
    var index = lists.startIndex
    while index != lists.endIndex {
      while let first = lists.values[index].first, first < sequence {
        _ = lists.values[index].popFirst()
      }
      if lists.values[index].isEmpty { emptied.append(lists.keys[index]) }
      index = lists.index(after: index)
    }
    for key in emptied { lists[key] = nil }
  }

  /// One hash of `key`, not three.
  private static func remove(
    _ key: String, from lists: inout [String: FIFOQueue<Int>],
    _ body: (inout FIFOQueue<Int>) -> Void
  ) {
    guard let index = lists.index(forKey: key) else { return }
    body(&lists.values[index])
    if lists.values[index].isEmpty { lists.remove(at: index) }
  }
}

/// Sequence numbers of a history, ascending: they grow at the back and
/// shrink at the front, as the history does.
extension FIFOQueue<Int> {
  /// How many of the numbers lie in `range`; they must be ascending.
  fileprivate func count(in range: Range<Int>) -> Int {
    firstPosition(notBelow: range.upperBound) - firstPosition(notBelow: range.lowerBound)
  }
}

/// Ascending sequence numbers at positions from 0: a ``HistoryIndex``'s
/// queues and a ``SearchIndex``'s ``Postings``.
extension RandomAccessCollection where Element == Int, Index == Int {
  /// The position of the first number not below `value` (or `count`), by
  /// binary search.
  func firstPosition(notBelow value: Int) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if self[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
  }
}

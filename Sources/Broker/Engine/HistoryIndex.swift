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
  /// The messages taken back (`REDACT`), by author and by the names they
  /// mentioned: a message taken back is neither unread nor a mention
  /// (chatbroker(7), `CONVERSATIONS`). Taken back in any order, so kept
  /// sorted: redactions are few.
  private var takenBack = SortedSequences()
  private var takenBackByAuthor: [String: SortedSequences] = [:]
  private var takenBackMentions: [String: SortedSequences] = [:]
  /// Every entry from this sequence number on is held; none below it.
  private var heldFrom = 0

  /// A message entered the history as its newest, at `sequence`.
  mutating func addNewest(_ message: StoredMessage, at sequence: Int) {
    authors[message.author, default: FIFOQueue()].append(sequence)
    for name in Self.mentioned(by: message) {
      mentions[name, default: FIFOQueue()].append(sequence)
    }
    // A compacted journal's message taken back: no text, so no mention.
    if message.isRedacted { noteTakenBack(message, at: sequence) }
  }

  /// The message at `sequence` was taken back (`REDACT`): `original` is
  /// what it was.
  mutating func noteTakenBack(_ original: StoredMessage, at sequence: Int) {
    takenBack.insert(sequence)
    takenBackByAuthor[original.author, default: SortedSequences()].insert(sequence)
    for name in Self.mentioned(by: original) {
      takenBackMentions[name, default: SortedSequences()].insert(sequence)
    }
  }

  /// A message taken back is back as it was (a rollback of `REDACT`).
  mutating func noteRestored(_ original: StoredMessage, at sequence: Int) {
    takenBack.remove(sequence)
    takenBackByAuthor[original.author]?.remove(sequence)
    for name in Self.mentioned(by: original) { takenBackMentions[name]?.remove(sequence) }
  }

  /// The history keeps the messages from `firstSequence` on, `kept` of
  /// them: the entries of those before are swept out once a quarter as
  /// many have left (and at least 64).
  mutating func forget(below firstSequence: Int, kept: Int) {
    guard firstSequence - heldFrom > max(kept / 4, 64) else { return }
    Self.sweep(&authors, below: firstSequence)
    Self.sweep(&mentions, below: firstSequence)
    takenBack.removeAll(below: firstSequence)
    for key in takenBackByAuthor.keys { takenBackByAuthor[key]?.removeAll(below: firstSequence) }
    takenBackByAuthor = takenBackByAuthor.filter { !$0.value.isEmpty }
    for key in takenBackMentions.keys { takenBackMentions[key]?.removeAll(below: firstSequence) }
    takenBackMentions = takenBackMentions.filter { !$0.value.isEmpty }
    heldFrom = firstSequence
  }

  /// The newest message was taken back out (a rollback).
  mutating func removeNewest(_ message: StoredMessage, at sequence: Int) {
    Self.remove(message.author, from: &authors) { $0.removeLast() }
    for name in Self.mentioned(by: message) {
      Self.remove(name, from: &mentions) { $0.removeLast() }
    }
    if message.isRedacted { noteRestored(message, at: sequence) }
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
    if message.isRedacted { noteTakenBack(message, at: sequence) }
  }

  /// A kept message's text changed in place: taken back (`REDACT`), or
  /// given back by a rollback. It mentions whom its text now names, as a
  /// replay of the journal compacted since finds it (chatbroker(7): an
  /// unread message mentions you when its text names you); its author
  /// stays. Rare, so its entries are found by binary search and moved
  /// one by one.
  mutating func replace(_ old: StoredMessage, with new: StoredMessage, at sequence: Int) {
    guard sequence >= heldFrom else { return }
    for name in Self.mentioned(by: old) {
      guard let index = mentions.index(forKey: name) else { continue }
      let position = mentions.values[index].firstPosition(notBelow: sequence)
      guard position < mentions.values[index].count,
        mentions.values[index][position] == sequence
      else { continue }
      mentions.values[index].remove(at: position)
      if mentions.values[index].isEmpty { mentions.remove(at: index) }
    }
    for name in Self.mentioned(by: new) {
      var list = mentions.removeValue(forKey: name) ?? FIFOQueue()
      list.insert(sequence, at: list.firstPosition(notBelow: sequence))
      mentions[name] = list
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

  /// What is unread in `range` for `user`: the messages others wrote and
  /// did not take back, and of those the ones that mention the user.
  func unread(for user: String, in range: Range<Int>) -> (unread: Int, mentions: Int) {
    let takenBackByOthers =
      takenBack.count(in: range) - (takenBackByAuthor[user]?.count(in: range) ?? 0)
    return (
      range.count - written(by: user, in: range) - takenBackByOthers,
      mentioning(user, in: range) - (takenBackMentions[user]?.count(in: range) ?? 0)
    )
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

/// Ascending sequence numbers added and removed anywhere: the messages of
/// a history taken back.
struct SortedSequences: Sendable {
  private var numbers: [Int] = []

  var isEmpty: Bool { numbers.isEmpty }

  mutating func insert(_ sequence: Int) {
    let position = numbers.firstPosition(notBelow: sequence)
    if position == numbers.count || numbers[position] != sequence {
      numbers.insert(sequence, at: position)
    }
  }

  mutating func remove(_ sequence: Int) {
    let position = numbers.firstPosition(notBelow: sequence)
    if position < numbers.count && numbers[position] == sequence { numbers.remove(at: position) }
  }

  mutating func removeAll(below sequence: Int) {
    numbers.removeFirst(numbers.firstPosition(notBelow: sequence))
  }

  /// How many of the numbers lie in `range`.
  func count(in range: Range<Int>) -> Int {
    numbers.firstPosition(notBelow: range.upperBound)
      - numbers.firstPosition(notBelow: range.lowerBound)
  }
}

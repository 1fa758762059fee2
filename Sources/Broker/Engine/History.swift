import LineProtocol

/// The delivered messages of one conversation, oldest first, bounded: when
/// full, appending drops the oldest. Every message has a sequence number that
/// only grows, so `BEFORE`/`AFTER` anchors stay valid while the ring turns.
struct History: Sendable {
  let capacity: Int
  private var ring: ContiguousArray<StoredMessage> = []
  /// Index in `ring` of the oldest message once the ring is full.
  private var head = 0
  /// Sequence number of the oldest kept message.
  private(set) var firstSequence = 0
  /// Messages from this sequence number on have ascending ids, and are
  /// found by binary search: ids are handed out in order, so this holds
  /// for almost every history. Hashing every id into a dictionary was a
  /// fifth of start-up replay (measured with `perf record` on a
  /// 1,000,000-record journal).
  private var idsAscendFrom = 0
  /// The sequence numbers of the kept messages before ``idsAscendFrom``:
  /// a late scheduled delivery or a line from another host broke the order.
  private var sequenceByID: [MessageID: Int] = [:]
  /// Who wrote and who is mentioned where, for unread counts.
  private var index = HistoryIndex()
  /// Which messages hold each word, for `SEARCH`: exactly the kept
  /// messages numbered below ``wordsIndexedBelow``.
  private var words = SearchIndex()
  /// Every kept message from this sequence number on is not in ``words``
  /// yet. A history replayed at start-up is indexed afterwards, a slice
  /// at a time (``indexWords(upTo:)``), so that the broker serves at once:
  /// indexing a million worded messages takes seconds.
  private var wordsIndexedBelow = 0
  /// Whether every kept message is in ``words``; from then on each change
  /// keeps it so.
  private(set) var wordsComplete: Bool
  /// Messages from this sequence number on are in time order, each no
  /// older than the one before it. A late scheduled delivery or a wall
  /// clock set back breaks the order; it holds again from that message on.
  private var orderedFrom = 0

  /// A history whose words are indexed as they come, or, with
  /// `indexWordsLater`, only by ``indexWords(upTo:)``.
  init(capacity: Int, indexWordsLater: Bool = false) {
    self.capacity = max(1, capacity)
    wordsComplete = !indexWordsLater
  }

  /// How many kept messages are not in the word index yet.
  var unindexedCount: Int { endSequence - wordsIndexedBelow }

  /// Indexes the words of at most `limit` more kept messages, oldest
  /// first; returns how many it took.
  @discardableResult
  mutating func indexWords(upTo limit: Int) -> Int {
    let end = wordsIndexedBelow + min(endSequence - wordsIndexedBelow, max(0, limit))
    for sequence in wordsIndexedBelow..<end { words.addNewest(self[sequence], at: sequence) }
    let taken = end - wordsIndexedBelow
    wordsIndexedBelow = end
    if end == endSequence { wordsComplete = true }
    return taken
  }

  var count: Int { ring.count }
  /// One past the sequence number of the newest message.
  var endSequence: Int { firstSequence + ring.count }

  /// Appends a message; returns the oldest one when it had to make room.
  @discardableResult
  mutating func append(_ message: StoredMessage) -> StoredMessage? {
    if !ring.isEmpty && message.time < self[endSequence - 1].time { orderedFrom = endSequence }
    if !ring.isEmpty && message.id <= self[endSequence - 1].id {
      startAscendingIDs(at: endSequence)
    }
    var evicted: StoredMessage?
    if ring.count < capacity {
      ring.append(message)
    } else {
      evicted = ring[head]
      if firstSequence < idsAscendFrom { sequenceByID[ring[head].id] = nil }
      index.removeOldest(ring[head])
      if firstSequence < wordsIndexedBelow { words.removeOldest(ring[head]) }
      ring[head] = message
      head = (head + 1) % capacity
      firstSequence += 1
      wordsIndexedBelow = max(wordsIndexedBelow, firstSequence)
    }
    index.addNewest(message, at: endSequence - 1)
    if wordsComplete {
      words.addNewest(message, at: endSequence - 1)
      wordsIndexedBelow = endSequence
    }
    return evicted
  }

  /// Undoes the last ``append(_:)``: takes the newest message back out and
  /// puts back the one it evicted, so a rolled-back message leaves the
  /// history as it was (a failed sync, chatbroker(8)).
  mutating func removeNewest(restoring evicted: StoredMessage?) {
    guard !ring.isEmpty else { return }
    let newest = endSequence - 1
    if newest < idsAscendFrom { sequenceByID[self[newest].id] = nil }
    idsAscendFrom = min(idsAscendFrom, newest)
    if let evicted {
      head = (head + capacity - 1) % capacity
      index.removeNewest(ring[head])
      if newest < wordsIndexedBelow {
        words.removeNewest(ring[head])
        wordsIndexedBelow = newest
      }
      ring[head] = evicted
      // The indexed messages stay those from the oldest on: the one put
      // back is indexed when any is, or when all must be.
      let indexesOldest = wordsComplete || wordsIndexedBelow > firstSequence
      firstSequence -= 1
      restoreOldestID(evicted.id)
      index.addOldest(evicted, at: firstSequence)
      if indexesOldest {
        words.addOldest(evicted, at: firstSequence)
      } else {
        wordsIndexedBelow = firstSequence
      }
    } else if let removed = ring.popLast() {
      index.removeNewest(removed)
      if newest < wordsIndexedBelow {
        words.removeNewest(removed)
        wordsIndexedBelow = newest
      }
    }
  }

  /// The oldest message was put back: found by id as part of the ascending
  /// ids when its id is below the next one's, else through the dictionary.
  private mutating func restoreOldestID(_ id: MessageID) {
    let oldest = firstSequence
    if oldest < idsAscendFrom {
      sequenceByID[id] = oldest
    } else if oldest + 1 < endSequence && id >= self[oldest + 1].id {
      startAscendingIDs(at: oldest + 1)
    }
  }

  /// Ids ascend from `sequence` on no longer: the kept messages before it
  /// are entered into ``sequenceByID``, each at most once in its life.
  private mutating func startAscendingIDs(at sequence: Int) {
    for kept in max(firstSequence, idsAscendFrom)..<sequence {
      sequenceByID[self[kept].id] = kept
    }
    idsAscendFrom = sequence
  }

  /// What is unread for `user` after sequence `marker` (before every
  /// kept message when nil): the messages others wrote, and of those the
  /// ones that mention the user, or all of them when `direct`.
  func unread(for user: String, after marker: Int?, direct: Bool) -> UnreadCount {
    let range = max(firstSequence, (marker ?? firstSequence - 1) + 1)..<endSequence
    guard !range.isEmpty else { return UnreadCount() }
    let unread = range.count - index.written(by: user, in: range)
    return UnreadCount(
      unread: unread, mentions: direct ? unread : index.mentioning(user, in: range))
  }

  /// The newest kept message, for `CONVERSATIONS`.
  var newest: StoredMessage? {
    ring.isEmpty ? nil : self[endSequence - 1]
  }

  func sequence(of id: MessageID) -> Int? {
    var low = max(firstSequence, idsAscendFrom)
    var high = endSequence
    while low < high {
      let middle = (low + high) / 2
      if self[middle].id < id { low = middle + 1 } else { high = middle }
    }
    if low < endSequence && self[low].id == id { return low }
    return sequenceByID.isEmpty ? nil : sequenceByID[id]
  }

  /// Replaces a kept message in place, as `REDACT` does (its author and
  /// place stay, so the index of authors needs no change; its mentions stay
  /// counted until it leaves, as for a message read). Its words change at
  /// once: a message taken back is never found again.
  mutating func replace(at sequence: Int, with message: StoredMessage) {
    let offset = sequence - firstSequence
    let slot = ring.count < capacity ? offset : (head + offset) % capacity
    if sequence < wordsIndexedBelow { words.replace(ring[slot], with: message, at: sequence) }
    ring[slot] = message
  }

  /// The postings of each of `words` (``SearchIndex``), or nil when a
  /// word is in no kept message; only for a history whose words are
  /// complete (``wordsComplete``).
  func postings(of words: [String]) -> [Postings]? {
    self.words.postings(of: words)
  }

  /// How many distinct words the kept messages hold, for tests.
  var indexedWordCount: Int { words.wordCount }

  /// Where the kept message at `sequence` stands among `SEARCH`'s
  /// results, read in place: a search reads it for each candidate, and a
  /// copy of the whole message would retain its texts each time.
  func searchKey(at sequence: Int) -> Engine.SearchKey {
    let offset = sequence - firstSequence
    let slot = ring.count < capacity ? offset : (head + offset) % capacity
    return Engine.SearchKey(time: ring[slot].time, id: ring[slot].id)
  }

  /// The message with sequence number `sequence`, which must be kept.
  subscript(sequence: Int) -> StoredMessage {
    let offset = sequence - firstSequence
    return ring[ring.count < capacity ? offset : (head + offset) % capacity]
  }

  /// Messages oldest first, for `HISTORY`: the latest `count` before
  /// `endBefore` (exclusive).
  func range(endBefore end: Int, count: Int) -> Range<Int> {
    max(firstSequence, end - count)..<end
  }

  /// A message id this history does not hold.
  struct MissingMessage: Error {
    let id: MessageID
  }

  /// The sequence numbers `HISTORY` (or the IRC gateway's `CHATHISTORY`)
  /// answers for `anchor`, oldest first, at most `count`.
  func range(_ anchor: HistoryAnchor?, count: Int) -> Result<Range<Int>, MissingMessage> {
    Result { () throws(MissingMessage) in try bounds(anchor, count: count) }
  }

  private func bounds(_ anchor: HistoryAnchor?, count: Int) throws(MissingMessage) -> Range<Int> {
    switch anchor {
    case nil:
      return range(endBefore: endSequence, count: count)
    case .before(let id):
      return range(endBefore: try start(of: .message(id)), count: count)
    case .beforePoint(let point):
      return range(endBefore: try start(of: point), count: count)
    case .after(let id):
      return firstAfter(try end(of: .message(id)), count: count)
    case .afterPoint(let point):
      return firstAfter(try end(of: point), count: count)
    case .latestAfter(let point):
      let lower = try end(of: point)
      return max(lower, endSequence - count)..<endSequence
    case .around(let point):
      let lower = max(firstSequence, try start(of: point) - count / 2)
      return lower..<min(endSequence, lower + count)
    case .between(let from, let to):
      let (fromStart, toStart) = (try start(of: from), try start(of: to))
      if fromStart <= toStart {
        let lower = try end(of: from)
        return lower..<max(lower, min(toStart, lower + count))
      }
      let lower = try end(of: to)
      return max(lower, fromStart - count)..<max(lower, fromStart)
    }
  }

  /// The first `count` from sequence `lower` on.
  private func firstAfter(_ lower: Int, count: Int) -> Range<Int> {
    lower..<max(lower, min(endSequence, lower + count))
  }

  /// The sequence number of the first message at or after `point`.
  private func start(of point: HistoryPoint) throws(MissingMessage) -> Int {
    switch point {
    case .message(let id):
      guard let sequence = sequence(of: id) else { throw MissingMessage(id: id) }
      return sequence
    case .time(let time):
      return firstSequence(where: { $0.time >= time })
    }
  }

  /// The sequence number of the first message after `point`.
  private func end(of point: HistoryPoint) throws(MissingMessage) -> Int {
    switch point {
    case .message(let id):
      guard let sequence = sequence(of: id) else { throw MissingMessage(id: id) }
      return sequence + 1
    case .time(let time):
      return firstSequence(where: { $0.time > time })
    }
  }

  /// The first message that passes `isPast`, or the end. A scan, not a
  /// binary search: a late scheduled delivery can be older than the one
  /// before it.
  private func firstSequence(where isPast: (StoredMessage) -> Bool) -> Int {
    (firstSequence..<endSequence).first { isPast(self[$0]) } ?? endSequence
  }

  /// The time of the newest message strictly between `after` and
  /// `before`, among those numbered below `end`: a binary search in the
  /// part in time order, a scan only of what comes before that part.
  func newestTime(after: Timestamp, before: Timestamp, endBefore end: Int) -> Timestamp? {
    let end = max(firstSequence, min(end, endSequence))
    let ordered = min(max(firstSequence, orderedFrom), end)
    var low = ordered
    var high = end
    while low < high {
      let middle = (low + high) / 2
      if self[middle].time < before { low = middle + 1 } else { high = middle }
    }
    // The newest of the ordered part before `before` is the only candidate
    // there: if it is not after `after`, neither is any older one of it.
    if low > ordered && self[low - 1].time > after { return self[low - 1].time }
    return (firstSequence..<ordered).reversed().lazy.map { self[$0].time }
      .first { after < $0 && $0 < before }
  }

  /// All kept messages, oldest first (for compaction).
  var all: [StoredMessage] {
    (firstSequence..<endSequence).map { self[$0] }
  }
}

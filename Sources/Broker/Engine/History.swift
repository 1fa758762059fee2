import LineProtocol

/// The delivered messages of one conversation, oldest first, bounded in
/// number and in the bytes of their texts (chatbroker(8),
/// `--history-per-conversation` and `--history-bytes-per-conversation`):
/// appending past either bound drops the oldest. Every message has a
/// sequence number that only grows, so `BEFORE`/`AFTER` anchors stay valid
/// while the ring turns.
struct History: Sendable {
  let capacity: Int
  /// The most bytes the kept texts add up to; the newest message is kept
  /// whatever its size, so a conversation is never empty for it.
  let byteCapacity: Int
  /// What the kept messages' texts add up to, in bytes.
  private(set) var textBytes = 0
  /// The kept messages, oldest at ``head``, in slots that wrap around; a
  /// slot past the kept ones holds ``vacant``. It grows up to `capacity`
  /// slots as messages come; dropping by bytes leaves slots free for the
  /// next ones.
  private var ring: ContiguousArray<StoredMessage> = []
  /// Index in `ring` of the oldest kept message.
  private var head = 0
  /// How many messages are kept.
  private var kept = 0
  /// What a free slot holds: no text, so a dropped message's is released.
  private static let vacant = StoredMessage(
    id: .none, time: Timestamp(milliseconds: 0), author: "", text: "")
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
  init(capacity: Int, byteCapacity: Int = .max, indexWordsLater: Bool = false) {
    self.capacity = max(1, capacity)
    self.byteCapacity = max(0, byteCapacity)
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

  var count: Int { kept }
  /// One past the sequence number of the newest message.
  var endSequence: Int { firstSequence + kept }

  /// Where in `ring` the kept message `offset` places after the oldest is.
  private func slot(_ offset: Int) -> Int {
    let index = head + offset
    return index < ring.count ? index : index - ring.count
  }

  /// Appends a message; returns the oldest ones it had to drop to stay
  /// within the bounds, oldest first (none, most of the time; several
  /// only when a long text pushes out shorter ones).
  mutating func append(_ message: StoredMessage) -> DroppedMessages {
    if kept > 0 && message.time < self[endSequence - 1].time { orderedFrom = endSequence }
    if kept > 0 && message.id <= self[endSequence - 1].id {
      startAscendingIDs(at: endSequence)
    }
    var evicted = DroppedMessages.none
    if kept == capacity { evicted.append(removeOldest()) }
    insertNewest(message)
    while textBytes > byteCapacity && kept > 1 { evicted.append(removeOldest()) }
    return evicted
  }

  /// Puts a message after the newest, in the next free slot, or in a new
  /// one when every slot is taken.
  private mutating func insertNewest(_ message: StoredMessage) {
    if kept < ring.count {
      ring[slot(kept)] = message
    } else {
      // Every slot is taken, and there are fewer than `capacity`: grow,
      // with the oldest first again if dropping by bytes had moved it.
      if head != 0 {
        var linear = ContiguousArray<StoredMessage>()
        linear.reserveCapacity(ring.count + 1)
        linear.append(contentsOf: ring[head...])
        linear.append(contentsOf: ring[..<head])
        ring = linear
        head = 0
      }
      ring.append(message)
    }
    kept += 1
    textBytes += message.text.utf8.count
    index.addNewest(message, at: endSequence - 1)
    if wordsComplete {
      words.addNewest(message, at: endSequence - 1)
      wordsIndexedBelow = endSequence
    }
  }

  /// Drops the oldest kept message from the history and its indexes.
  private mutating func removeOldest() -> StoredMessage {
    let oldest = ring[head]
    if firstSequence < idsAscendFrom { sequenceByID[oldest.id] = nil }
    ring[head] = Self.vacant
    head = head + 1 == ring.count ? 0 : head + 1
    kept -= 1
    textBytes -= oldest.text.utf8.count
    firstSequence += 1
    index.forget(below: firstSequence, kept: kept)
    words.forget(below: firstSequence, kept: kept)
    wordsIndexedBelow = max(wordsIndexedBelow, firstSequence)
    return oldest
  }

  /// Undoes the last ``append(_:)``: takes the newest message back out and
  /// puts back the ones it dropped, so a rolled-back message leaves the
  /// history as it was (a failed sync, chatbroker(8)).
  mutating func removeNewest(restoring evicted: DroppedMessages) {
    guard kept > 0 else { return }
    let newest = endSequence - 1
    let removed = self[newest]
    if newest < idsAscendFrom { sequenceByID[removed.id] = nil }
    idsAscendFrom = min(idsAscendFrom, newest)
    index.removeNewest(removed, at: newest)
    if newest < wordsIndexedBelow {
      words.removeNewest(removed)
      wordsIndexedBelow = newest
    }
    ring[slot(kept - 1)] = Self.vacant
    kept -= 1
    textBytes -= removed.text.utf8.count
    for message in evicted.all.reversed() { restoreOldest(message) }
  }

  /// Puts a dropped message back in front, in the free slot before the
  /// oldest (the one it left).
  private mutating func restoreOldest(_ message: StoredMessage) {
    // The indexed messages stay those from the oldest on: the one put
    // back is indexed when any is, or when all must be, or when its
    // postings are still there from before it was dropped.
    let indexesOldest =
      wordsComplete || wordsIndexedBelow > firstSequence
      || words.holds(message, at: firstSequence - 1)
    head = head == 0 ? ring.count - 1 : head - 1
    ring[head] = message
    kept += 1
    textBytes += message.text.utf8.count
    firstSequence -= 1
    restoreOldestID(message.id)
    index.addOldest(message, at: firstSequence)
    if indexesOldest {
      words.addOldest(message, at: firstSequence)
    } else {
      wordsIndexedBelow = firstSequence
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
    let counted = index.unread(for: user, in: range)
    return UnreadCount(
      unread: counted.unread, mentions: direct ? counted.unread : counted.mentions)
  }

  /// The newest kept message, for `CONVERSATIONS`.
  var newest: StoredMessage? {
    kept == 0 ? nil : self[endSequence - 1]
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

  /// Replaces a kept message in place, as `REDACT` does, or a rollback
  /// of it (its author and place stay, so the index of authors needs no
  /// change). A message taken back is no longer unread nor a mention, and
  /// its words change at once: it is never found again.
  mutating func replace(at sequence: Int, with message: StoredMessage) {
    let place = slot(sequence - firstSequence)
    if message.isRedacted && !ring[place].isRedacted {
      index.noteTakenBack(ring[place], at: sequence)
    } else if !message.isRedacted && ring[place].isRedacted {
      index.noteRestored(message, at: sequence)
    }
    if sequence < wordsIndexedBelow { words.replace(ring[place], with: message, at: sequence) }
    textBytes += message.text.utf8.count - ring[place].text.utf8.count
    ring[place] = message
  }

  /// The postings of each of `words` (``SearchIndex``), or nil when a
  /// word has none; only for a history whose words are complete
  /// (``wordsComplete``). Postings below ``firstSequence`` are of messages
  /// no longer kept: a search skips them.
  func postings(of words: [String]) -> [Postings]? {
    self.words.postings(of: words)
  }

  /// How many distinct words the kept messages hold, for tests.
  var indexedWordCount: Int { words.wordCount }

  /// Where the kept message at `sequence` stands among `SEARCH`'s
  /// results, read in place: a search reads it for each candidate, and a
  /// copy of the whole message would retain its texts each time.
  func searchKey(at sequence: Int) -> Engine.SearchKey {
    let place = slot(sequence - firstSequence)
    return Engine.SearchKey(time: ring[place].time, id: ring[place].id)
  }

  /// The message with sequence number `sequence`, which must be kept.
  subscript(sequence: Int) -> StoredMessage {
    ring[slot(sequence - firstSequence)]
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

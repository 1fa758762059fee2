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
  private var sequenceByID: [MessageID: Int] = [:]

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  var count: Int { ring.count }
  /// One past the sequence number of the newest message.
  var endSequence: Int { firstSequence + ring.count }

  /// Appends a message; returns the oldest one when it had to make room.
  @discardableResult
  mutating func append(_ message: StoredMessage) -> StoredMessage? {
    var evicted: StoredMessage?
    if ring.count < capacity {
      ring.append(message)
    } else {
      evicted = ring[head]
      sequenceByID[ring[head].id] = nil
      ring[head] = message
      head = (head + 1) % capacity
      firstSequence += 1
    }
    sequenceByID[message.id] = endSequence - 1
    return evicted
  }

  /// Undoes the last ``append(_:)``: takes the newest message back out and
  /// puts back the one it evicted, so a rolled-back message leaves the
  /// history as it was (a failed sync, chatbroker(8)).
  mutating func removeNewest(restoring evicted: StoredMessage?) {
    if let evicted {
      head = (head + capacity - 1) % capacity
      sequenceByID[ring[head].id] = nil
      ring[head] = evicted
      firstSequence -= 1
      sequenceByID[evicted.id] = firstSequence
    } else if let newest = ring.popLast() {
      sequenceByID[newest.id] = nil
    }
  }

  func sequence(of id: MessageID) -> Int? {
    sequenceByID[id]
  }

  /// The message with sequence number `sequence`, which must be kept.
  subscript(sequence: Int) -> StoredMessage {
    let offset = sequence - firstSequence
    return ring[ring.count < capacity ? offset : (head + offset) % capacity]
  }

  /// Messages oldest first, for `HISTORY`: the latest `count` before
  /// `endBefore` (exclusive), or the first `count` after `startAfter`.
  func range(endBefore end: Int, count: Int) -> Range<Int> {
    max(firstSequence, end - count)..<end
  }

  func range(startAfter start: Int, count: Int) -> Range<Int> {
    (start + 1)..<min(endSequence, start + 1 + count)
  }

  /// All kept messages, oldest first (for compaction).
  var all: [StoredMessage] {
    (firstSequence..<endSequence).map { self[$0] }
  }
}

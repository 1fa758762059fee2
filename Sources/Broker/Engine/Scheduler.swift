import LineProtocol

/// Pending scheduled messages: a binary min-heap ordered by due instant, then
/// id, beside a dense array of the messages and a table from id to slot. One
/// timer serves them all: the engine arms it for ``earliestDue``. A cancelled
/// message leaves a stale heap entry behind, which is skipped when it reaches
/// the top (cheaper than a heap delete).
///
/// Memory matters here (a million pending lines is a use case): a table of
/// whole messages costs its slack times ~80 bytes per bucket, a table of
/// slots only 16, so the messages live in an array (measured with chatbench
/// schedule: about 100 bytes less per pending line).
struct Scheduler: Sendable {
  private struct Entry: Comparable {
    var due: Int64
    var id: UInt64

    static func < (lhs: Entry, rhs: Entry) -> Bool {
      (lhs.due, lhs.id) < (rhs.due, rhs.id)
    }
  }

  private var heap: [Entry] = []
  private var messages: [PendingMessage] = []
  private var slots: [MessageID: Int] = [:]
  private var idsByAuthor: [String: Set<MessageID>] = [:]
  /// Pending messages and series per room: a room with one is kept even
  /// when empty (see Engine+Rooms).
  private var countByRoom: [RoomName: Int] = [:]
  /// The pending messages that are series; few, so kept apart rather than
  /// widening every ``PendingMessage``.
  private(set) var allSeries: [MessageID: Series] = [:]
  /// Series that ended by their rule, for a clear answer to a late change.
  private(set) var ended: [MessageID: EndedSeries] = [:]

  var count: Int { messages.count }

  /// Every pending message, in no particular order.
  var all: [PendingMessage] { messages }

  /// Most brokers have no series at all; then single messages, the hot
  /// path, pay no hashing for them.
  func series(_ id: MessageID) -> Series? {
    allSeries.isEmpty ? nil : allSeries[id]
  }

  subscript(id: MessageID) -> PendingMessage? {
    slots[id].map { messages[$0] }
  }

  func hasPending(in room: RoomName) -> Bool {
    countByRoom[room] != nil
  }

  func count(by author: String) -> Int {
    idsByAuthor[author]?.count ?? 0
  }

  /// The caller's own pending messages, by due instant then id.
  func messages(by author: String) -> [PendingMessage] {
    (idsByAuthor[author] ?? []).compactMap { self[$0] }.sorted {
      ($0.due, $0.id) < ($1.due, $1.id)
    }
  }

  /// Adds a message, or replaces the pending one with its id (a changed due
  /// instant, text or rule). `series` makes it a series; nil, a single message.
  mutating func insert(_ message: PendingMessage, series: Series? = nil) {
    let wasPaused = allSeries.isEmpty ? false : allSeries[message.id]?.paused == true
    if series != nil || !allSeries.isEmpty { allSeries[message.id] = series }
    // A paused series has no heap entry that counts (see discardStaleTop).
    if series?.paused == true, let slot = slots[message.id] {
      messages[slot] = message
      return
    }
    if let slot = slots[message.id] {
      let unchangedDue = messages[slot].due == message.due
      messages[slot] = message
      // Its heap entry is still right; a second one would deliver it twice.
      // A resumed series' entry was discarded while it was paused.
      if unchangedDue && !wasPaused { return }
    } else {
      slots[message.id] = messages.count
      messages.append(message)
      if case .room(let name) = message.target { countByRoom[name, default: 0] += 1 }
    }
    idsByAuthor[message.author, default: []].insert(message.id)
    heap.append(Entry(due: message.due.milliseconds, id: message.id.value))
    siftUp(heap.count - 1)
  }

  mutating func noteEnded(_ id: MessageID, _ ending: EndedSeries) {
    ended[id] = ending
  }

  /// A rolled-back last occurrence: the series is pending again.
  mutating func forgetEnded(_ id: MessageID) {
    ended[id] = nil
  }

  @discardableResult
  mutating func remove(_ id: MessageID) -> PendingMessage? {
    guard let slot = slots.removeValue(forKey: id) else { return nil }
    let message = messages[slot]
    // Keep the array dense: the last message moves into the freed slot.
    let last = messages.removeLast()
    if slot < messages.count {
      messages[slot] = last
      slots[last.id] = slot
    }
    if case .room(let name) = message.target, let count = countByRoom[name] {
      countByRoom[name] = count > 1 ? count - 1 : nil
    }
    idsByAuthor[message.author]?.remove(id)
    if idsByAuthor[message.author]?.isEmpty == true { idsByAuthor[message.author] = nil }
    if !allSeries.isEmpty { allSeries[id] = nil }
    return message
  }

  /// The due instant of the next message, skipping cancelled entries.
  mutating func earliestDue() -> Timestamp? {
    discardStaleTop()
    return heap.first.map { Timestamp(milliseconds: $0.due) }
  }

  /// Takes up to `limit` messages due at `now` off the heap, in due order.
  /// They stay pending until their delivery is applied with ``remove(_:)``;
  /// if it cannot be, ``restore(_:)`` puts them back.
  mutating func popDue(now: Timestamp, atMost limit: Int) -> [PendingMessage] {
    var due: [PendingMessage] = []
    while due.count < limit {
      discardStaleTop()
      guard let top = heap.first, top.due <= now.milliseconds,
        let message = self[MessageID(value: top.id)]
      else { break }
      popTop()
      // A cancellation rolled back re-inserts its message beside the stale
      // entry it left: the two are equal, so they come off one after another.
      if due.last?.id != message.id { due.append(message) }
    }
    return due
  }

  mutating func restore(_ messages: [PendingMessage]) {
    for message in messages {
      heap.append(Entry(due: message.due.milliseconds, id: message.id.value))
      siftUp(heap.count - 1)
    }
  }

  private mutating func discardStaleTop() {
    while let top = heap.first {
      let message = self[MessageID(value: top.id)]
      if let message, message.due.milliseconds == top.due, series(message.id)?.paused != true {
        return
      }
      popTop()
    }
  }

  private mutating func popTop() {
    heap.swapAt(0, heap.count - 1)
    heap.removeLast()
    if !heap.isEmpty { siftDown(0) }
  }

  private mutating func siftUp(_ start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child] < heap[parent] else { return }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(_ start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < heap.count else { return }
      var smallest = left
      if left + 1 < heap.count && heap[left + 1] < heap[left] { smallest = left + 1 }
      guard heap[smallest] < heap[parent] else { return }
      heap.swapAt(smallest, parent)
      parent = smallest
    }
  }
}

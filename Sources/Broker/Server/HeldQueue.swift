/// A connection's lines held for a sync (``HeldLine``), oldest first: a
/// ring that lines are moved into and out of, never copied.
///
/// A `SAY` to 1,000 receivers holds a line in each of 1,000 queues, and
/// all of them share the one encoded line. An array copied each line out
/// to release it and destroyed it again when the released prefix was
/// removed: two more atomic reference counts per delivery on the shared
/// line, and the array's tail moved down after every release. Here a
/// released line is moved out of its slot (``popFirst(durable:)``) and the
/// slot is free, so each held line costs one retain when it is queued and
/// one release when it leaves.
///
/// Not copyable: it owns its slots, and frees them when it goes.
struct HeldQueue: ~Copyable {
  private var slots: UnsafeMutablePointer<HeldLine>?
  /// A power of two, so that positions wrap with a mask.
  private var capacity = 0
  /// Where the oldest line is.
  private var head = 0
  private(set) var count = 0

  /// Slots of the first ring; it doubles when full.
  static let initialCapacity = 8

  init() {}

  deinit {
    guard let slots else { return }
    // The lines from the head to the end of the ring, then those that
    // wrapped around to its start.
    let first = min(count, capacity - head)
    (slots + head).deinitialize(count: first)
    slots.deinitialize(count: count - first)
    slots.deallocate()
  }

  var isEmpty: Bool { count == 0 }

  /// Queues `line` behind the others.
  mutating func append(_ line: consuming HeldLine) {
    if count == capacity { grow() }
    (slots! + ((head + count) & (capacity - 1))).initialize(to: line)
    count += 1
  }

  /// Removes and returns the oldest line, if it may leave once `durable`
  /// journal records are durable; nil when it may not, or none is held.
  mutating func popFirst(durable: UInt64) -> HeldLine? {
    guard count > 0, let slots, slots[head].journalCount <= durable else { return nil }
    let line = (slots + head).move()
    head = (head + 1) & (capacity - 1)
    count -= 1
    if count == 0 { head = 0 }
    return line
  }

  /// Removes every line and returns them, oldest first.
  mutating func takeAll() -> [HeldLine] {
    var lines: [HeldLine] = []
    lines.reserveCapacity(count)
    while count > 0 {
      lines.append((slots! + head).move())
      head = (head + 1) & (capacity - 1)
      count -= 1
    }
    head = 0
    return lines
  }

  /// Drops every line, keeping the slots for the next ones.
  mutating func removeAll() {
    while count > 0 {
      (slots! + head).deinitialize(count: 1)
      head = (head + 1) & (capacity - 1)
      count -= 1
    }
    head = 0
  }

  /// Twice the slots, the lines moved to the front in order.
  private mutating func grow() {
    let larger = max(Self.initialCapacity, capacity * 2)
    let moved = UnsafeMutablePointer<HeldLine>.allocate(capacity: larger)
    if let slots {
      // The lines from the head to the end of the ring, then those that
      // wrapped around to its start.
      let first = min(count, capacity - head)
      moved.moveInitialize(from: slots + head, count: first)
      (moved + first).moveInitialize(from: slots, count: count - first)
      slots.deallocate()
    }
    slots = moved
    capacity = larger
    head = 0
  }
}

/// A first-in, first-out queue over one array: elements join at the back
/// and leave at the front, where taking one moves a head index instead of
/// shifting the array, so `append` and `popFirst` are O(1) amortised. Its
/// users: the records awaiting a sync (``UnsyncedRecords``), the sequence
/// numbers of a ``HistoryIndex``, and the connections waiting for a turn.
///
/// The slots before the head are given back at one threshold, in
/// ``trimFront()``, after every removal: when the queue empties, the array
/// is emptied and keeps its capacity; otherwise, once ``trimThreshold`` or
/// more slots are dead and they are at least as many as the live
/// elements, the live elements move to the front. Moving n elements
/// follows at least n removals from the front since the last move, so each
/// pays for at most one element moved; and fewer slots are dead than the
/// threshold or than the live elements.
///
/// A dead slot keeps its element until that trim: a class reference taken
/// off the front is released then, not when it is taken.
///
/// Positions run from 0 (the front, the oldest) to `count`; like any
/// collection's, they are valid until the queue next changes.
struct FIFOQueue<Element>: RandomAccessCollection {
  /// Dead slots at the front below this many are never moved over, so that
  /// a short queue is not copied on every other removal.
  static var trimThreshold: Int { 64 }

  private var storage: [Element] = []
  /// The position in `storage` of the front; the slots before it are dead.
  private var head = 0

  init() {}

  var startIndex: Int { 0 }
  var endIndex: Int { storage.count - head }
  var count: Int { storage.count - head }
  var isEmpty: Bool { head == storage.count }

  subscript(position: Int) -> Element {
    precondition(position >= 0 && position < count, "FIFOQueue position out of range")
    return storage[head + position]
  }

  /// Joins at the back.
  mutating func append(_ element: Element) {
    storage.append(element)
  }

  /// Takes the front (the oldest) off, or nil when the queue is empty.
  mutating func popFirst() -> Element? {
    guard head < storage.count else { return nil }
    let element = storage[head]
    head += 1
    trimFront()
    return element
  }

  /// Takes the front off; the queue must not be empty.
  @discardableResult
  mutating func removeFirst() -> Element {
    guard let element = popFirst() else { preconditionFailure("removeFirst of an empty FIFOQueue") }
    return element
  }

  /// Takes the `k` oldest off; there must be as many.
  mutating func removeFirst(_ k: Int) {
    precondition(k >= 0 && k <= count, "removeFirst(\(k)) of a FIFOQueue of \(count)")
    head += k
    trimFront()
  }

  /// Takes the back (the newest) off, or nil when the queue is empty: an
  /// append undone.
  mutating func popLast() -> Element? {
    guard head < storage.count else { return nil }
    let element = storage.removeLast()
    trimFront()
    return element
  }

  /// Takes the back off; the queue must not be empty.
  @discardableResult
  mutating func removeLast() -> Element {
    guard let element = popLast() else { preconditionFailure("removeLast of an empty FIFOQueue") }
    return element
  }

  /// Puts an element back in front, a removal from the front undone: O(1)
  /// into the dead slot before the head, O(n) when there is none.
  mutating func prepend(_ element: Element) {
    if head > 0 {
      head -= 1
      storage[head] = element
    } else {
      storage.insert(element, at: 0)
    }
  }

  /// Takes out the element at `position`: O(n), for the rare change in
  /// the middle (a message taken back, in ``Postings``).
  mutating func remove(at position: Int) {
    precondition(position >= 0 && position < count, "FIFOQueue position out of range")
    storage.remove(at: head + position)
    trimFront()
  }

  /// Puts `element` in at `position` (0 to `count`): O(n), the undoing of
  /// ``remove(at:)``.
  mutating func insert(_ element: Element, at position: Int) {
    precondition(position >= 0 && position <= count, "FIFOQueue position out of range")
    storage.insert(element, at: head + position)
  }

  mutating func removeAll(keepingCapacity: Bool = false) {
    storage.removeAll(keepingCapacity: keepingCapacity)
    head = 0
  }

  /// The one place dead slots are given back (see the type's comment).
  private mutating func trimFront() {
    if head == storage.count {
      removeAll(keepingCapacity: true)
    } else if head >= Self.trimThreshold && head >= storage.count - head {
      storage.removeFirst(head)
      head = 0
    }
  }

  /// How many slots the array holds, dead ones included: for tests of the
  /// threshold.
  var slotsInUse: Int { storage.count }
}

extension FIFOQueue: Sendable where Element: Sendable {}

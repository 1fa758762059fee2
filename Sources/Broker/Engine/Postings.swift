/// The sequence numbers of the messages that hold one word in one
/// history, ascending (``SearchIndex``). The first is kept in the value
/// itself, the rest in a ``FIFOQueue`` only when there are more: most words
/// of a conversation occur in one of its messages, and an array for each
/// of them was most of the index's memory and of its building time
/// (`chatbench search`).
struct Postings: RandomAccessCollection, Sendable {
  private var first = 0
  private var rest = FIFOQueue<Int>()
  private(set) var count = 0

  init(_ sequence: Int) {
    first = sequence
    count = 1
  }

  var startIndex: Int { 0 }
  var endIndex: Int { count }
  var isEmpty: Bool { count == 0 }

  subscript(position: Int) -> Int {
    precondition(position >= 0 && position < count, "Postings position out of range")
    return position == 0 ? first : rest[position - 1]
  }

  /// Joins at the back (the newest message).
  mutating func append(_ sequence: Int) {
    if count == 0 { first = sequence } else { rest.append(sequence) }
    count += 1
  }

  /// Puts a number back in front (an evicted message restored).
  mutating func prepend(_ sequence: Int) {
    if count > 0 { rest.prepend(first) }
    first = sequence
    count += 1
  }

  /// Takes the front off; there must be one.
  mutating func removeFirst() {
    precondition(count > 0, "removeFirst of empty Postings")
    if let next = rest.popFirst() { first = next }
    count -= 1
  }

  /// Takes the back off; there must be one.
  mutating func removeLast() {
    precondition(count > 0, "removeLast of empty Postings")
    if rest.popLast() == nil { first = 0 }
    count -= 1
  }

  /// Takes out `sequence` if it is there (a message taken back).
  mutating func remove(_ sequence: Int) {
    let position = firstPosition(notBelow: sequence)
    guard position < count, self[position] == sequence else { return }
    if position == 0 {
      removeFirst()
    } else {
      rest.remove(at: position - 1)
      count -= 1
    }
  }

  /// Puts `sequence` in its place unless it is there (the undoing of
  /// ``remove(_:)``).
  mutating func insert(_ sequence: Int) {
    let position = firstPosition(notBelow: sequence)
    if position < count && self[position] == sequence { return }
    if position == 0 {
      prepend(sequence)
    } else {
      rest.insert(sequence, at: position - 1)
      count += 1
    }
  }

  /// The position of the first number not below `value` (or `count`).
  func firstPosition(notBelow value: Int) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if self[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Whether `sequence` is among the numbers, by binary search.
  func contains(sequence: Int) -> Bool {
    let position = firstPosition(notBelow: sequence)
    return position < count && self[position] == sequence
  }
}

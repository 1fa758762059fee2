/// The sequence numbers of the messages that hold one word in one
/// history, ascending (``SearchIndex``). The first is kept in the value
/// itself, the rest in a ``FIFOQueue`` only when there are more: most words
/// of a conversation occur in one of its messages, and an array for each
/// of them was most of the index's memory and of its building time
/// (`chatbench search`).
///
/// Its size is the dictionary's slot: 24 bytes, no count of its own (the
/// first slot says whether there is a first number).
struct Postings: RandomAccessCollection, Sendable {
  /// No number: sequence numbers are never negative.
  private static let none = -1
  private var first = Postings.none
  private var rest = FIFOQueue<Int>()

  init(_ sequence: Int) {
    first = sequence
  }

  var count: Int { first == Self.none ? 0 : 1 + rest.count }

  var startIndex: Int { 0 }
  var endIndex: Int { count }
  var isEmpty: Bool { first == Self.none }

  subscript(position: Int) -> Int {
    precondition(position >= 0 && position < count, "Postings position out of range")
    return position == 0 ? first : rest[position - 1]
  }

  /// Joins at the back (the newest message).
  mutating func append(_ sequence: Int) {
    if first == Self.none { first = sequence } else { rest.append(sequence) }
  }

  /// Puts a number back in front (an evicted message restored).
  mutating func prepend(_ sequence: Int) {
    if first != Self.none { rest.prepend(first) }
    first = sequence
  }

  /// Takes the front off; there must be one.
  mutating func removeFirst() {
    precondition(first != Self.none, "removeFirst of empty Postings")
    first = rest.popFirst() ?? Self.none
  }

  /// Takes the back off; there must be one.
  mutating func removeLast() {
    precondition(first != Self.none, "removeLast of empty Postings")
    if rest.popLast() == nil { first = Self.none }
  }

  /// Takes out `sequence` if it is there (a message taken back).
  mutating func remove(_ sequence: Int) {
    let position = firstPosition(notBelow: sequence)
    guard position < count, self[position] == sequence else { return }
    if position == 0 {
      removeFirst()
    } else {
      rest.remove(at: position - 1)
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
    }
  }

  /// Whether `sequence` is among the numbers, by binary search.
  func contains(sequence: Int) -> Bool {
    let position = firstPosition(notBelow: sequence)
    return position < count && self[position] == sequence
  }
}

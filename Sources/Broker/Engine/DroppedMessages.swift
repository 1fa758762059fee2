/// The messages one ``History/append(_:)`` dropped to stay within its
/// bounds, oldest first, which undoing the append puts back. Nearly always
/// none or one (a full history drops its oldest), held inline so that such
/// an append, on every message's path, allocates nothing; several only when
/// a long text pushes out shorter ones (the byte bound).
struct DroppedMessages: Equatable, Sendable {
  private var first: StoredMessage?
  private var more: [StoredMessage] = []

  static let none = DroppedMessages()

  var isEmpty: Bool { first == nil }

  mutating func append(_ message: StoredMessage) {
    if first == nil { first = message } else { more.append(message) }
  }

  /// Oldest first.
  var all: [StoredMessage] {
    guard let first else { return [] }
    return [first] + more
  }
}

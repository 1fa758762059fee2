import LineProtocol

/// A delivered message as history keeps it.
public struct StoredMessage: Equatable, Sendable {
  public var id: MessageID
  public var time: Timestamp
  public var author: String
  public var text: String

  public init(id: MessageID, time: Timestamp, author: String, text: String) {
    self.id = id
    self.time = time
    self.author = author
    self.text = text
  }
}

/// A message waiting for its due instant.
public struct PendingMessage: Equatable, Sendable {
  public var id: MessageID
  /// The target as its author wrote it (`#ops`, or `@bob`).
  public var target: Target
  public var author: String
  public var created: Timestamp
  public var due: Timestamp
  public var text: String

  public init(
    id: MessageID, target: Target, author: String, created: Timestamp, due: Timestamp,
    text: String
  ) {
    self.id = id
    self.target = target
    self.author = author
    self.created = created
    self.due = due
    self.text = text
  }
}

/// One conversation: a room, or the direct conversation of two users (named
/// by the pair in sorted order, so both sides find the same history).
public enum ConversationKey: Hashable, Sendable {
  case room(RoomName)
  case direct(String, String)

  /// The conversation that `target`, written by `author`, names.
  public init(target: Target, author: String) {
    switch target {
    case .room(let room): self = .room(room)
    case .user(let user): self = user < author ? .direct(user, author) : .direct(author, user)
    }
  }

  /// The target as `viewer` sees this conversation: the room, or the other
  /// party (`@bob` for alice).
  public func target(seenBy viewer: String) -> Target {
    switch self {
    case .room(let room): .room(room)
    case .direct(let first, let second): .user(first == viewer ? second : first)
    }
  }
}

import LineProtocol

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

import LineProtocol

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

import LineProtocol

/// A delivered message as history keeps it.
public struct StoredMessage: Equatable, Sendable {
  public var id: MessageID
  public var time: Timestamp
  public var author: String
  public var text: String
  /// Since 1.4: sent with `ACTION` (chatbroker(7)), shown as `* user text`.
  public var isAction: Bool

  public init(id: MessageID, time: Timestamp, author: String, text: String, isAction: Bool = false)
  {
    self.id = id
    self.time = time
    self.author = author
    self.text = text
    self.isAction = isAction
  }
}

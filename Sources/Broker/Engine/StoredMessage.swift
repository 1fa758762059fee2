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

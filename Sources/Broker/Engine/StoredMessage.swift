import LineProtocol

/// A delivered message as history keeps it.
public struct StoredMessage: Equatable, Sendable {
  public var id: MessageID
  public var time: Timestamp
  public var author: String
  public var text: String
  /// Since 1.4: sent with `ACTION` (chatbroker(7)), shown as `* user text`.
  public var isAction: Bool
  /// Since 1.4: its author took it back with `REDACT`: the text is gone,
  /// and what is left marks its place (chatbroker(7), `REDACT`).
  public var isRedacted: Bool

  public init(
    id: MessageID, time: Timestamp, author: String, text: String, isAction: Bool = false,
    isRedacted: Bool = false
  ) {
    self.id = id
    self.time = time
    self.author = author
    self.text = text
    self.isAction = isAction
    self.isRedacted = isRedacted
  }

  /// What is left of it once redacted: who, when, no text.
  var redacted: StoredMessage {
    StoredMessage(id: id, time: time, author: author, text: "", isRedacted: true)
  }
}

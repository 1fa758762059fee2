import LineProtocol

/// A delivered message as history keeps it.
public struct StoredMessage: Equatable, Sendable {
  public var id: MessageID
  public var time: Timestamp
  /// `.none` for none: since 1.4 the series this is an occurrence of, or
  /// since 1.6 (when `isReply`) the message this one answers. One plain id
  /// for both, rather than two optionals, which would widen every message
  /// in every history by 16 bytes: the broker sends an occurrence, a
  /// person a reply, so no message is both.
  private var reference: MessageID
  private var isReply: Bool
  public var author: String
  public var text: String
  /// Since 1.4: sent with `ACTION` (chatbroker(7)), shown as `* user text`.
  public var isAction: Bool
  /// Since 1.4: its author took it back with `REDACT`: the text is gone,
  /// and what is left marks its place (chatbroker(7), `REDACT`).
  public var isRedacted: Bool
  /// Since 1.6: its author changed its text with `AMEND` (chatbroker(7)),
  /// shown as `EDITED` on its `HIST` lines.
  public var isEdited = false

  public init(
    id: MessageID, time: Timestamp, author: String, text: String, isAction: Bool = false,
    isRedacted: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil
  ) {
    precondition(series == nil || replyTo == nil, "an occurrence of a series answers nothing")
    self.id = id
    self.time = time
    self.reference = replyTo ?? series ?? .none
    self.isReply = replyTo != nil
    self.author = author
    self.text = text
    self.isAction = isAction
    self.isRedacted = isRedacted
  }

  /// Since 1.4: the series (`SAYEVERY`) this is an occurrence of, shown
  /// as `SERIES <id>` on its `MSG` and `HIST` lines (chatbroker(7), `MSG`).
  public var series: MessageID? {
    isReply || reference == .none ? nil : reference
  }

  /// Since 1.6: the message of the same conversation this one answers
  /// (`REPLY`), shown as `REPLY <id>` on its `MSG` and `HIST` lines
  /// (chatbroker(7), `REPLY`). Only its id is kept, never its text: a
  /// reply to a line taken back shows nothing of it.
  public var replyTo: MessageID? {
    isReply && reference != .none ? reference : nil
  }

  /// The same message with the text its author gave it with `AMEND`.
  func amended(_ text: String) -> StoredMessage {
    var amended = self
    amended.text = text
    amended.isEdited = true
    return amended
  }

  /// What is left of it once redacted: who, when, no text.
  var redacted: StoredMessage {
    StoredMessage(id: id, time: time, author: author, text: "", isRedacted: true)
  }
}

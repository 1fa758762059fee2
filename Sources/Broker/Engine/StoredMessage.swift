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
  /// Since 1.6: who put which reaction on it (`REACT`; chatbroker(7)), in
  /// the order they were first put, shown as `REACTIONS` on its `HIST`
  /// lines. Kept here, with the message, so that whatever drops or
  /// replaces the message (a redaction, the history's capacity, a
  /// rollback) does the same to its reactions; an empty array costs
  /// every message one word.
  public var reactions: [ReactionTally] = []

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

  /// The same message with `user`'s `reaction` added, or taken off
  /// (`removed`); nil when that changes nothing.
  func reacting(_ user: String, _ reaction: String, removed: Bool) -> StoredMessage? {
    var changed = self
    let index = reactions.firstIndex { $0.reaction == reaction }
    if removed {
      guard let index, let position = reactions[index].users.firstIndex(of: user) else {
        return nil
      }
      changed.reactions[index].users.remove(at: position)
      if changed.reactions[index].users.isEmpty { changed.reactions.remove(at: index) }
    } else if let index {
      guard !reactions[index].users.contains(user) else { return nil }
      changed.reactions[index].users.append(user)
    } else {
      changed.reactions.append(ReactionTally(reaction: reaction, users: [user]))
    }
    return changed
  }

  /// How many reactions it carries, one per user and reaction.
  var reactionCount: Int { reactions.reduce(0) { $0 + $1.users.count } }

  /// What is left of it once redacted: who, when, no text, no reactions.
  var redacted: StoredMessage {
    StoredMessage(id: id, time: time, author: author, text: "", isRedacted: true)
  }
}

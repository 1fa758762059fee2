import LineProtocol

/// A delivered message as the chat model keeps it, from a `MSG` or `HIST`
/// line (chatbroker(7), "Lines from the broker"): names as text, since
/// the model and the screen go by the names people see.
public struct ChatMessage: Equatable, Sendable {
  public var target: String
  public var id: String
  public var time: Timestamp
  public var user: String
  public var text: String
  /// Since 1.4: sent with `ACTION` (`/me`), shown as `* user text`.
  public var isAction: Bool
  /// Since 1.4: the series (`SAYEVERY`) this is an occurrence of, from the
  /// line's `SERIES <id>` (chatbroker(7), `MSG`).
  public var series: String?
  /// Since 1.6: the message of the conversation this one answers, from
  /// the line's `REPLY <id>` (chatbroker(7), `REPLY`).
  public var replyTo: String?
  /// Since 1.6: its author changed its text (`AMEND`): `EDITED` on its
  /// `HIST` line, or an `AMEND` line while shown.
  public var isEdited = false
  /// Since 1.6: who put which reaction on it (`REACT`), in the order the
  /// reactions were first put: `REACTIONS` on its `HIST` line, then
  /// `REACT` and `UNREACT` lines while shown (chatbroker(7), `REACT`).
  public var reactions: [ReactionTally] = []

  public init(
    target: String, id: String, time: Timestamp, user: String, text: String,
    isAction: Bool = false, series: String? = nil, replyTo: String? = nil
  ) {
    self.target = target
    self.id = id
    self.time = time
    self.user = user
    self.text = text
    self.isAction = isAction
    self.series = series
    self.replyTo = replyTo
  }

  public init(
    target: Target, id: MessageID, time: Timestamp, user: String, text: String,
    isAction: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil
  ) {
    self.init(
      target: target.description, id: id.description, time: time, user: user, text: text,
      isAction: isAction, series: series?.description, replyTo: replyTo?.description)
  }

  /// `user` put `reaction` on it, or took it off (`removed`): a new
  /// reaction goes last, a user counts once per reaction, and a reaction
  /// nobody has any more goes. Returns whether anything changed.
  @discardableResult
  public mutating func react(user: String, _ reaction: String, removed: Bool) -> Bool {
    let index = reactions.firstIndex { $0.reaction == reaction }
    if removed {
      guard let index, let position = reactions[index].users.firstIndex(of: user) else {
        return false
      }
      reactions[index].users.remove(at: position)
      if reactions[index].users.isEmpty { reactions.remove(at: index) }
      return true
    }
    guard let index else {
      reactions.append(ReactionTally(reaction: reaction, users: [user]))
      return true
    }
    guard !reactions[index].users.contains(user) else { return false }
    reactions[index].users.append(user)
    return true
  }

  /// The text on one line, where a line of its own shows it (a search
  /// result, a question about it): each line feed of a block (chatbroker(7),
  /// `BLOCK`) as ` ↵ `, so that no line of it passes for a line of chatsh's.
  public var singleLineText: String { Self.singleLine(text) }

  /// `text`'s lines run on with ` ↵ ` (``singleLineText``).
  public static func singleLine(_ text: String) -> String {
    guard MessageBlock.isBlock(text) else { return text }
    return String(
      text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        .map { String(String.UnicodeScalarView($0)) }.joined(separator: " ↵ "))
  }

  /// The time as the broker wrote it: RFC 3339 in UTC with milliseconds,
  /// the one form ``LineCodec`` reads, so writing it again gives it back.
  public var timeText: String { time.description }
}

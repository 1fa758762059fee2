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

  public init(target: String, id: String, time: Timestamp, user: String, text: String) {
    self.target = target
    self.id = id
    self.time = time
    self.user = user
    self.text = text
  }

  public init(target: Target, id: MessageID, time: Timestamp, user: String, text: String) {
    self.init(
      target: target.description, id: id.description, time: time, user: user, text: text)
  }

  /// The time as the broker wrote it: RFC 3339 in UTC with milliseconds,
  /// the one form ``LineCodec`` reads, so writing it again gives it back.
  public var timeText: String { time.description }
}

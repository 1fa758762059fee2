/// A room's topic (chatbroker(7), `TOPIC`): its text, who set it and when,
/// as `TOPIC` lines and IRC's 332/333 show it; the broker keeps it, chatsh
/// shows it.
public struct RoomTopic: Equatable, Sendable {
  public var text: String
  public var user: String
  public var time: Timestamp

  public init(text: String, user: String, time: Timestamp) {
    self.text = text
    self.user = user
    self.time = time
  }
}

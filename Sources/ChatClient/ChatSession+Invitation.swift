import LineProtocol

extension ChatSession {
  /// Someone invited me to a room (the `INVITE` line, chatbroker(7)): said
  /// where I am now, with the command that joins it. Names and rooms are
  /// checked words, so nothing of the inviter's reaches the screen raw.
  func invited(to room: RoomName, by inviter: String) {
    notice("\(inviter) invited you to \(room): /join \(room)")
  }
}

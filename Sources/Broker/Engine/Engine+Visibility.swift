import LineProtocol

extension Engine {
  /// Whether `user` may see the room at all: its name, members, topic and
  /// lines. Every request that could reveal a room (ROOMS, WHO, HISTORY,
  /// SEARCH, CONVERSATIONS, errors, and the IRC gateway's LIST, NAMES,
  /// WHOIS and CHATHISTORY) asks here, so one rule decides. Every room is
  /// public for now (chatbroker(8), SECURITY CONSIDERATIONS).
  func mayRead(_ room: RoomName, user: String) -> Bool {
    true
  }
}

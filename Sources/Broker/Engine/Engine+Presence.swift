import LineProtocol

/// Who is connected and who is away: state of the moment, never journaled
/// (chatbroker(7), "IRC": `AWAY`, `ISON`, `USERHOST`). One away text per
/// user, whichever session set it, so that every session and every
/// client that asks reads the same; a line-protocol verb can set it
/// through ``setAway(_:text:)`` as the IRC gateway does.
extension Engine {
  /// Whether `user` has a session now.
  public func isOnline(_ user: String) -> Bool {
    connectionsByUser[user] != nil
  }

  /// The user's away text, nil when they are not away (or not connected).
  public func awayText(_ user: String) -> String? {
    awayTexts[user]
  }

  /// Marks a connected user away with `text`, or back with nil or an
  /// empty text; forgotten when their last session closes.
  public func setAway(_ user: String, text: String?) {
    guard isOnline(user) else { return }
    awayTexts[user] = text.flatMap { $0.isEmpty ? nil : $0 }
  }
}

import Foundation

/// What a server's IRC sessions know of their users that the engine does
/// not: the real name each gave in `USER`, when it registered and when it
/// last sent a message, for WHOIS (311, 317) and WHO (352, 354;
/// chatbroker(7), "IRC"). One entry per user, however many IRC sessions it
/// has, as the nick is one: the real name of its latest registration, its
/// first session's sign-on, and its last message from any of them; the
/// entry goes with its last IRC session. Nothing in it is identity: the
/// nick and the user field stay the login name.
final class IRCDirectory {
  struct Entry {
    var realName: String
    /// The user's registered IRC sessions.
    var sessions: Int
    /// Seconds since the epoch: registration, and the last message.
    var signedOn: Int
    var spoke: Int
  }

  private var entries: [String: Entry] = [:]
  /// Seconds since the epoch; a test's clock in tests.
  let now: () -> Int

  init(now: @escaping () -> Int = { Int(Date().timeIntervalSince1970) }) {
    self.now = now
  }

  /// A session of `user` registered, giving `realName`.
  func registered(_ user: String, realName: String) {
    let time = now()
    if var entry = entries[user] {
      entry.realName = realName
      entry.sessions += 1
      entries[user] = entry
    } else {
      entries[user] = Entry(realName: realName, sessions: 1, signedOn: time, spoke: time)
    }
  }

  /// A registered session of `user` closed.
  func closed(_ user: String) {
    guard var entry = entries[user] else { return }
    entry.sessions -= 1
    entries[user] = entry.sessions > 0 ? entry : nil
  }

  /// `user` sent a message (PRIVMSG or NOTICE): its idle time starts again.
  func spoke(_ user: String) {
    entries[user]?.spoke = now()
  }

  /// The real name `user` gave, nil for a user without an IRC session.
  func realName(_ user: String) -> String? { entries[user]?.realName }

  /// Seconds since `user` last sent a message, and when they signed on;
  /// nil for a user without an IRC session.
  func idle(_ user: String) -> (seconds: Int, signedOn: Int)? {
    guard let entry = entries[user] else { return nil }
    return (max(0, now() - entry.spoke), entry.signedOn)
  }
}

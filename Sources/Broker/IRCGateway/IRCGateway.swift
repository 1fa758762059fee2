import Foundation

/// The IRC door of one server (chatbroker(7), "IRC"): the options every
/// session is made with and what its sessions share, the count of clients
/// that have not registered yet, the most registered at once, and the
/// directory of real names and idle times. The server holds one and asks
/// it for a codec per IRC connection; it keeps no IRC state of its own.
final class IRCGateway {
  let serverName: String
  let timeZone: TimeZone
  /// How many lines of a room a client without chathistory gets on JOIN.
  let backlog: Int
  let directory: IRCDirectory
  /// IRC clients connected and not registered (LUSERS, 253).
  var unregistered = 0
  /// The most registered clients at once that LUSERS has seen (265, 266).
  var mostUsers = 0

  init(
    serverName: String, timeZone: TimeZone, backlog: Int,
    directory: IRCDirectory = IRCDirectory()
  ) {
    self.serverName = serverName
    self.timeZone = timeZone
    self.backlog = backlog
    self.directory = directory
  }

  /// A session for a new connection of `user`, reading the engine
  /// through `reader`.
  func session(user: String, reader: EngineReader) -> IRCSession {
    IRCSession(user: user, gateway: self, reader: reader)
  }
}

import LineProtocol

/// What a codec may read of the broker while it answers its client: the
/// one read-only view the server gives each connection's codec, asked as
/// the connection's user. IRC needs it for what its clients ask of the
/// server's state outside any chatbroker(7) request (LUSERS, WHO and WHOIS
/// of a nick, ISON, USERHOST, a room's creation time for MODE, NAMES'
/// prefixes, CHATHISTORY TARGETS);
/// the line protocol and the web door need nothing of it. Everything that
/// changes state goes through the server as a ``WireAction`` instead, so
/// that it is ordered, journaled and answered like any other request
/// (chatbroker(7), "Order and durability").
///
/// Questions about rooms are asked as the connection's user, so a codec
/// cannot learn more of a room than its user may read (the engine's
/// ``Engine/sight(of:for:)``).
final class EngineReader {
  /// The connection's user, as whom every question is asked.
  let user: String
  private unowned let engine: Engine
  private let connections: () -> Int
  private let charge: (Int) -> Void

  /// `connections`: how many clients the server has (LUSERS). `charge`:
  /// adds to the connection's turn the cost of a read that looks at every
  /// conversation, as requests are charged (chatbroker(8), fairness).
  init(
    engine: Engine, user: String, connections: @escaping () -> Int = { 1 },
    charge: @escaping (Int) -> Void = { _ in }
  ) {
    self.engine = engine
    self.user = user
    self.connections = connections
    self.charge = charge
  }

  /// The server's clients, of every wire format, registered or not.
  var connectionCount: Int { connections() }

  /// Whether a login name exists (WHOIS of a user who is not online).
  func userExists(_ name: String) -> Bool { engine.users.userExists(name) }

  /// How many rooms the user may see (LUSERS, 254).
  var visibleRoomCount: Int { engine.visibleRoomCount(for: user) }

  /// When a room the user may read was created, and whether it is private
  /// and secret; nil for a room they may not read, as for none.
  func roomMode(_ room: RoomName) -> (created: Timestamp, isPrivate: Bool, isSecret: Bool)? {
    engine.roomMode(room, seenBy: user)
  }

  /// A member's prefixes in a room, highest first, for a member list the
  /// engine already gave the user (``Engine/membershipPrefixes(of:in:)``).
  func membershipPrefixes(of member: String, in room: RoomName) -> String {
    engine.membershipPrefixes(of: member, in: room)
  }

  /// Whether a user has a session now, and their away text: what any
  /// user on the host may ask (Engine+Presence).
  func isOnline(_ name: String) -> Bool { engine.isOnline(name) }
  func awayText(of name: String) -> String? { engine.awayText(name) }

  /// The users online who share a room with the user, and the user.
  var onlineUsersSharingRooms: [String] { engine.onlineUsers(sharingRoomsWith: user) }

  /// The user's rooms, and up to where they have seen one.
  var rooms: [RoomName] { engine.rooms(of: user) }
  func seenUntil(in room: RoomName) -> HistoryPoint? { engine.seenUntil(user, in: room) }

  /// The user's conversations with lines between two times, newest
  /// first (IRC's `CHATHISTORY TARGETS`). It looks at every
  /// conversation, so it costs the connection a share of its turn in
  /// proportion, and a flood of it cannot hold the queue.
  func activeConversations(after: Timestamp, before: Timestamp, limit: Int)
    -> [ConversationActivity]
  {
    charge(engine.histories.count / Server.conversationsPerRequest)
    return engine.activeConversations(of: user, after: after, before: before, limit: limit)
  }
}

import LineProtocol

extension Engine {
  /// Whether `user` may see the room at all: its name, members, topic and
  /// lines. Every request that could reveal a room (ROOMS, WHO, HISTORY,
  /// SEARCH, CONVERSATIONS, errors, and the IRC gateway's LIST, NAMES,
  /// WHOIS and CHATHISTORY) asks here, so one rule decides
  /// (chatbroker(7), "Private rooms"): a public room is everyone's; a
  /// private one is its creator's, the invited users' and, for a room
  /// private to a group, the group's members' as the groups were last
  /// looked up (``knownGroups(of:)``).
  ///
  /// Since 1.5 a room with a key (`+k`) is read only by its members and
  /// operators: to anyone else it is as a private room, but for the JOIN
  /// that gives the key (chatbroker(7), "Moderation").
  func mayRead(_ room: RoomName, user: String) -> Bool {
    guard let found = rooms[room] else { return true }
    if found.modes.key != nil, !isMember(room, user: user), !isOperator(room, user: user) {
      return false
    }
    return mayReadAccess(found.access, user: user)
  }

  /// Whether a room's access lets `user` read it, its key aside.
  func mayReadAccess(_ access: RoomAccess?, user: String) -> Bool {
    guard let access else { return true }
    return user == Self.superuser || access.creator == user || access.invited.contains(user)
      || access.restriction.groupName.map { knownGroups(of: user).contains($0) } == true
  }

  /// Whether `user` is an operator of a private room by its access: for
  /// a room private to a group, the group's members. (Its creator was
  /// made an operator when it became private, ``changeAccess``.)
  func isPrivateRoomOperator(_ room: RoomName, user: String) -> Bool {
    guard let group = rooms[room]?.access?.restriction.groupName else { return false }
    return knownGroups(of: user).contains(group)
  }

  /// The conversation's history when `user` may read it; nil, as for a
  /// room that does not exist, when not.
  func readableHistory(_ conversation: ConversationKey, user: String) -> History? {
    if case .room(let name) = conversation, !mayRead(name, user: user) { return nil }
    return histories[conversation]
  }

  /// The user's groups as last looked up: at the first request of their
  /// sessions that needed them, or at their latest JOIN; kept while they
  /// have a session, so that a query costs no lookup per room.
  func knownGroups(of user: String) -> Set<String> {
    if let known = groupsByUser[user] { return known }
    let found = groups.groups(of: user)
    if connectionsByUser[user] != nil { groupsByUser[user] = found }
    return found
  }

  /// For a request that writes to a room (SAY, ACTION, SAYAT, SAYEVERY,
  /// the IRC gateway's TAGMSG): true when the target is no room the user
  /// may not read; otherwise answers `NOACCESS`, the same for every such
  /// room, and returns false.
  /// Since 1.5 the room's modes are checked too (``checkModeration``).
  func checkAccess(_ target: Target, verb: Verb, connection: ConnectionID, user: String) -> Bool {
    guard case .room(let name) = target else { return true }
    guard mayRead(name, user: user) else {
      failNoAccess(verb, name, connection: connection)
      return false
    }
    return checkModeration(name, verb: verb, connection: connection, user: user)
  }

  /// `ERR <verb> NOACCESS`: one text for every room the user may not read
  /// or change, whether it exists or not, so the error tells nothing of
  /// the room but that its name is not free (chatbroker(7), "Private
  /// rooms").
  func failNoAccess(_ verb: Verb, _ name: RoomName, connection: ConnectionID) {
    fail(verb, .noAccess, "\(name) is not open to you", to: connection)
  }
}

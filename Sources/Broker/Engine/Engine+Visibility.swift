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
  func mayRead(_ room: RoomName, user: String) -> Bool {
    guard let access = rooms[room]?.access else { return true }
    return access.creator == user || access.invited.contains(user)
      || access.restriction.groupName.map { knownGroups(of: user).contains($0) } == true
  }

  /// Whether `user` may invite to the room or change its access: its
  /// creator and, for a room private to a group, the group's members.
  func mayChangeAccess(_ room: RoomName, user: String) -> Bool {
    guard let access = rooms[room]?.access else { return false }
    return access.creator == user
      || access.restriction.groupName.map { knownGroups(of: user).contains($0) } == true
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
  func checkAccess(_ target: Target, verb: Verb, connection: ConnectionID, user: String) -> Bool {
    guard case .room(let name) = target, !mayRead(name, user: user) else { return true }
    failNoAccess(verb, name, connection: connection)
    return false
  }

  /// `ERR <verb> NOACCESS`: one text for every room the user may not read
  /// or change, whether it exists or not, so the error tells nothing of
  /// the room but that its name is not free (chatbroker(7), "Private
  /// rooms").
  func failNoAccess(_ verb: Verb, _ name: RoomName, connection: ConnectionID) {
    fail(verb, .noAccess, "\(name) is not open to you", to: connection)
  }
}

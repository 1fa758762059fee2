import LineProtocol

/// Who may read a room, decided when they read (chatbroker(7), "Private
/// rooms" and "Moderation"; chatbroker(8), "SECURITY CONSIDERATIONS").
/// ``sight(of:for:)`` is the one decision: every request that shows
/// something of a room (ROOMS, WHO, TOPIC, HISTORY, SEARCH, CONVERSATIONS,
/// MARKREAD, ACCESS, MODE, errors, the IRC gateway's LIST, NAMES, LUSERS
/// and CHATHISTORY) and every line fanned out to a room asks it, through
/// ``mayRead(_:user:)``, ``readableHistory(_:user:)`` or ``checkAccess``;
/// the group membership it reads is never older than
/// ``groupFactsMaximumAge``.
extension Engine {
  /// What a user may know of a room.
  enum RoomSight: Equatable {
    /// Everything: its name, members, topic and lines.
    case readable
    /// Nothing: it answers as a room that does not exist.
    case hidden
    /// Nothing, but for a ban alone: a write or a JOIN is told `BANNED`,
    /// as IRC servers tell it (474, 404), since nothing else keeps them
    /// out of the room.
    case banned
  }

  /// How old the group membership a decision reads may be: 60 s. A user
  /// taken out of a group reads a room private to it for at most this
  /// long from a session already open; a new session asks again at once.
  static let groupFactsMaximumAge: Int64 = 60_000

  /// The one decision (chatbroker(7), "Private rooms"): a room that does
  /// not exist hides nothing; root reads every room; a private room is
  /// its creator's, the invited users' and its group's members' (as NSS
  /// said within ``groupFactsMaximumAge``); a ban keeps a user out of any
  /// room but its operators; a room with a key (`+k`) or secret (`+s`) is
  /// its members' and operators'. Operators are held to none of the
  /// modes.
  func sight(of room: RoomName, for user: String) -> RoomSight {
    guard let found = rooms[room] else { return .readable }
    return sight(of: room, found, for: user)
  }

  /// The same, for a room already looked up: a line fanned out to a room
  /// private to a group asks it for each of its sessions (``broadcast``).
  func sight(of name: RoomName, _ room: Room, for user: String) -> RoomSight {
    let banned = !room.modes.bans.isEmpty
    let membersOnly = room.modes.key != nil || room.modes.flags.contains(.secret)
    // Most rooms restrict nobody: one look at them and done.
    guard room.access != nil || banned || membersOnly else { return .readable }
    if user == Self.superuser { return .readable }
    if !mayReadAccess(room.access, user: user) { return .hidden }
    guard banned || membersOnly else { return .readable }
    let isOperator = isOperator(name, user: user)
    if banned, !isOperator, room.modes.bans(user) { return .banned }
    if membersOnly, !isOperator, !isMember(name, user: user) { return .hidden }
    return .readable
  }

  /// Whether `user` may see the room at all: its name, members, topic and
  /// lines (``sight(of:for:)``).
  func mayRead(_ room: RoomName, user: String) -> Bool {
    sight(of: room, for: user) == .readable
  }

  /// Whether a room's access lets `user` read it, its modes aside: what a
  /// JOIN is held to before the room's bans, key and limit.
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

  /// How many rooms `user` may see: what IRC's `LUSERS` counts (254),
  /// so that nobody learns from it that a room they may not read was
  /// made or dropped.
  public func visibleRoomCount(for user: String) -> Int {
    rooms.count - guardedRooms.count { !mayRead($0, user: user) }
  }

  /// Keeps ``guardedRooms``: called wherever a room's access or modes
  /// change, or it is forgotten.
  func noteGuard(of name: RoomName) {
    guard let room = rooms[name],
      room.access != nil || room.modes.key != nil || !room.modes.bans.isEmpty
        || room.modes.flags.contains(.secret)
    else {
      guardedRooms.remove(name)
      return
    }
    guardedRooms.insert(name)
  }

  // MARK: - Group membership, with its age bounded

  /// The user's groups, as NSS said no longer than
  /// ``groupFactsMaximumAge`` ago: asked again when older, when a new
  /// session of theirs opened since (``connect(_:user:)``), or when the
  /// clock went back. Kept while they have a session, so that a query
  /// costs one lookup, not one per room. Groups lost are noted, for
  /// ``settleLostAccess()`` to take the rooms they gave.
  func knownGroups(of user: String) -> Set<String> {
    let now = clock.now
    if let known = groupsByUser[user], let asked = known.askedAt, asked <= now,
      now.milliseconds - asked.milliseconds < Self.groupFactsMaximumAge
    {
      return known.groups
    }
    return lookUpGroups(of: user)
  }

  /// Asks NSS for the user's groups now, and keeps the answer while they
  /// have a session. A group lost since the last answer, or a first
  /// answer in this session (they may have been taken out while away),
  /// has their private rooms looked at again (``settleLostAccess()``).
  @discardableResult
  func lookUpGroups(of user: String) -> Set<String> {
    let found = groups.groups(of: user)
    guard connectionsByUser[user] != nil else { return found }
    if groupsByUser[user].map({ !$0.groups.isSubset(of: found) }) ?? true {
      usersLosingGroups.insert(user)
    }
    groupsByUser[user] = GroupFacts(groups: found, askedAt: clock.now)
    return found
  }

  /// For a request that writes to a room (SAY, ACTION, SAYAT, SAYEVERY,
  /// the IRC gateway's TAGMSG): true when the target is no room the user
  /// may not read; otherwise answers `NOACCESS`, the same for every such
  /// room, or `BANNED` where a ban alone keeps them out, and returns false.
  /// Since 1.5 the room's modes are checked too (``checkModeration``).
  func checkAccess(_ target: Target, verb: Verb, connection: ConnectionID, user: String) -> Bool {
    guard case .room(let name) = target else { return true }
    switch sight(of: name, for: user) {
    case .readable:
      return checkModeration(name, verb: verb, connection: connection, user: user)
    case .banned:
      fail(verb, .banned, "you are banned from \(name) and may not write to it", to: connection)
      return false
    case .hidden:
      failNoAccess(verb, name, connection: connection)
      return false
    }
  }

  /// `ERR <verb> NOACCESS`: one text for every room the user may not read
  /// or change, whether it exists or not, so the error tells nothing of
  /// the room but that its name is not free (chatbroker(7), "Private
  /// rooms").
  func failNoAccess(_ verb: Verb, _ name: RoomName, connection: ConnectionID) {
    fail(verb, .noAccess, "\(name) is not open to you", to: connection)
  }
}

/// A user's Unix groups as NSS said them, and when (nil: to be asked
/// again at the next need).
struct GroupFacts {
  var groups: Set<String>
  var askedAt: Timestamp?
}

import LineProtocol

/// Private rooms (chatbroker(7), "Private rooms"): a room restricted to
/// the members of a Unix group, or to the users invited, made so by
/// `JOIN <room> group=<group>|invite` when it is created; `INVITE` and
/// `ACCESS` by its creator or a member of its group. Journaled as
/// `access` and `invite` records. Whoever may not read it is answered
/// as for a room that does not exist (``mayRead(_:user:)``).
extension Engine {
  /// What `JOIN <room> group=<group>|invite` checks before the room is
  /// created private: not a shared room, a group the user is in, and,
  /// for a room that exists, the same access. Answers and returns false
  /// when the JOIN cannot go on.
  func admitPrivateJoin(
    _ name: RoomName, _ restriction: RoomRestriction, connection: ConnectionID, user: String
  ) -> Bool {
    if isShared(.room(name)) {
      fail(
        .join, .limit, "\(name) is shared with other hosts, and a shared room is never private",
        to: connection)
      return false
    }
    guard let room = rooms[name] else {
      guard let group = restriction.groupName, !knownGroups(of: user).contains(group) else {
        return true
      }
      fail(
        .join, .noAccess,
        "you are not in group \(group): a room private to a group is made by one of its members",
        to: connection)
      return false
    }
    guard mayRead(name, user: user) else {
      failNoAccess(.join, name, connection: connection)
      return false
    }
    guard room.access?.restriction == restriction else {
      let now = RoomRestriction.word(room.access?.restriction)
      fail(
        .join, .limit,
        room.access == nil
          ? "\(name) exists and is public; a public room stays public, create another"
          : "\(name) exists with access \(now); ACCESS \(name) <access> changes it",
        to: connection)
      return false
    }
    return true
  }

  /// `INVITE <room> <user>`: `invited` may read the private room from now
  /// on (journaled). Since 1.5 (chatbroker(7), "Moderation"): only a
  /// member or operator invites (`NOTJOINED`), only an operator to a private
  /// room (`NOTOPERATOR`), and nobody who is in the room (`ALREADYIN`); to a
  /// public room a member invites without a record, the invited user's
  /// IRC clients told as for a private one. Anyone naming a room they may
  /// not read gets `NOACCESS`, as for a room that does not exist.
  func invite(_ invited: String, to name: RoomName, connection: ConnectionID, user: String) {
    guard mayRead(name, user: user), rooms[name] != nil else {
      return failNoAccess(.invite, name, connection: connection)
    }
    let isOperator = isOperator(name, user: user)
    guard isOperator || isMember(name, user: user) else {
      fail(.invite, .notJoined, "you have not joined \(name)", to: connection)
      return
    }
    let access = rooms[name]?.access
    guard access == nil || isOperator else {
      fail(
        .invite, .notOperator, "only an operator of \(name) invites to it (+i)", to: connection)
      return
    }
    guard checkRecipient(.user(invited), verb: .invite, connection: connection) else { return }
    guard rooms[name]?.sessionsByUser[invited] == nil else {
      fail(.invite, .alreadyIn, "\(invited) is in \(name) already", to: connection)
      return
    }
    if let access, !access.invited.contains(invited) {
      let record = JournalRecord.invite(name, user: invited, at: clock.now)
      guard journal([record], verb: .invite, connection: connection) else { return }
      apply(record)
    }
    // The invited user's IRC clients are told, as IRC servers do.
    let told = Outgoing(.invited(room: name, user: invited, by: user))
    for other in (connectionsByUser[invited] ?? []).sorted() where other != connection {
      send(told, to: other)
    }
    send(
      .ok(.invite, fields: [name.description, invited]), to: connection)
  }

  /// `ACCESS <room>`: `OK ACCESS <room> <access>`, `public` for a room
  /// the user may not read as for one that does not exist.
  func showAccess(_ name: RoomName, connection: ConnectionID, user: String) {
    let restriction = mayRead(name, user: user) ? rooms[name]?.access?.restriction : nil
    send(
      .ok(.access, fields: [name.description, RoomRestriction.word(restriction)]),
      to: connection)
  }

  /// `ACCESS <room> public|invite|group=<group>`: a room's operator
  /// changes who may read it (journaled); whoever is no longer allowed is
  /// removed at once. Since 1.5 a public room may be made private too
  /// (IRC's `MODE <room> +i`): who is in it or has it among their rooms is
  /// invited, and what they read while it was public stays read.
  func setAccess(
    _ name: RoomName, _ restriction: RoomRestriction?, connection: ConnectionID, user: String
  ) {
    guard mayRead(name, user: user), rooms[name] != nil else {
      return failNoAccess(.access, name, connection: connection)
    }
    guard isOperator(name, user: user) else {
      if rooms[name]?.access == nil {
        fail(.access, .notOperator, "you are not an operator of \(name)", to: connection)
        return
      }
      return failNoAccess(.access, name, connection: connection)
    }
    if isShared(.room(name)), restriction != nil {
      fail(
        .access, .limit,
        "\(name) is shared with other hosts, and a shared room is never private", to: connection)
      return
    }
    if let group = restriction?.groupName, !knownGroups(of: user).contains(group) {
      fail(
        .access, .noAccess,
        "you are not in group \(group): a room is made private to a group by one of its members",
        to: connection)
      return
    }
    let word = RoomRestriction.word(restriction)
    if rooms[name]?.access?.restriction != restriction {
      // A public room made private keeps who is in it (Engine+Moderation).
      let records = accessRecords(name, restriction, user: user)
      guard journal(records, verb: .access, connection: connection) else { return }
      for record in records { apply(record) }
      for other in holdersByRoom[name] ?? [] { revokeLostRooms(of: other) }
      for other in Set((rooms[name]?.connections ?? []).compactMap { sessions[$0]?.user }) {
        revokeLostRooms(of: other)
      }
    }
    send(.ok(.access, fields: [name.description, word]), to: connection)
  }

  /// Sets a room's access as a record says; returns what it was. The
  /// first restriction's user is the room's creator; a later one keeps
  /// the creator and the invited; public forgets both.
  func changeAccess(
    _ name: RoomName, _ restriction: RoomRestriction?, user: String, at time: Timestamp
  ) -> RoomAccess? {
    let before = rooms[name]?.access
    guard let restriction else {
      setAccess(nil, of: name)
      return before
    }
    var access = before ?? RoomAccess(restriction: restriction, creator: user, since: time)
    // Who makes a room private is one of its operators (chatbroker(7),
    // "Moderation"), and stays one until an operator takes it back (-o).
    // Applied as a change, so that the modes say who made it and when: a
    // compacted journal's `mode` records name them.
    if before == nil {
      let op = ModeChange(adding: true, letter: .op, argument: user)
      _ = rooms[name]?.modes.apply(op, user: user, at: time)
    }
    access.restriction = restriction
    access.since = time
    setAccess(access, of: name)
    return before
  }

  /// The one place a room's access is set, so that ``privateRooms`` and
  /// ``guardedRooms`` say which rooms have one.
  func setAccess(_ access: RoomAccess?, of name: RoomName) {
    rooms[name]?.access = access
    if access != nil && rooms[name] != nil {
      privateRooms.insert(name)
    } else {
      privateRooms.remove(name)
    }
    noteGuard(of: name)
  }

  // MARK: - Group membership, looked up again

  /// At a JOIN: the user's groups are looked up again when the JOIN names
  /// or creates a private room, when the user has a private room, or when
  /// their groups were looked up before in this session (they may have
  /// seen a private room listed). A JOIN of a public room by a user with
  /// none of these costs no lookup: NSS may be slow (LDAP), and the broker
  /// waits for it.
  func refreshGroupsIfNeeded(
    of user: String, joining name: RoomName, restriction: RoomRestriction?
  ) {
    let needed =
      restriction != nil || rooms[name]?.access != nil || groupsByUser[user] != nil
      || privateRooms.contains { roomsByUser[user]?[$0] != nil }
    if needed { refreshGroups(of: user) }
  }

  /// The user's groups are looked up again: every private room they may
  /// no longer read is taken from them at once.
  func refreshGroups(of user: String) {
    lookUpGroups(of: user)
    usersLosingGroups.remove(user)
    revokeLostRooms(of: user)
  }

  /// The end of a request: whoever a read found out of a group
  /// (``lookUpGroups(of:)``) loses the private rooms it gave them, as at
  /// their next JOIN. Not in the middle of the read, so that no reply is
  /// cut by the lines and records this makes.
  /// A step of its own: its lines show its own records, not the request's.
  func settleLostAccess() {
    guard !usersLosingGroups.isEmpty else { return }
    inStep(.other) {
      while let user = usersLosingGroups.popFirst() { revokeLostRooms(of: user) }
    }
  }

  /// Removes the user from each guarded room of theirs, or that a session
  /// of theirs is in, that they may no longer read: their sessions get a
  /// `PART` for it and leave it (the others see the `PART`), and it
  /// stops being one of their rooms (a `leave` record).
  func revokeLostRooms(of user: String) {
    let connections = connectionsByUser[user] ?? []
    let lost = guardedRooms.filter { name in
      let held =
        roomsByUser[user]?[name] != nil
        || connections.contains { sessions[$0]?.rooms.contains(name) == true }
      return held && !mayRead(name, user: user)
    }
    for name in lost.sorted() { revoke(name, from: user) }
  }

  private func revoke(_ name: RoomName, from user: String) {
    log.info("access lost", ["room": name.description, "user": user])
    let parted = Outgoing(
      .parted(room: name, user: user, reason: "you may no longer read \(name)"))
    for connection in (connectionsByUser[user] ?? []).sorted()
    where sessions[connection]?.rooms.contains(name) == true {
      send(parted, to: connection)
      sessions[connection]?.rooms.remove(name)
      leave(name, connection: connection, user: user)
    }
    guard isHolder(user, of: name) else { return }
    let record = JournalRecord.leave(user: user, room: name, at: clock.now)
    do {
      try append([record])
      apply(record)
    } catch {
      // Not durable: it stays theirs in memory, and mayRead still keeps
      // everything of it from them.
      log.error("journal write failed", ["reason": error.reason, "verb": "JOIN"])
    }
  }
}

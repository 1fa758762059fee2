import LineProtocol

extension Engine {
  /// The most `ROOM` lines one `ROOMS` reply holds; see chatbroker(7).
  public static let roomsPerReply = 1000

  /// `JOIN`: the session joins, and the room becomes one of the user's
  /// rooms (journaled with the room's creation, in one append). When that
  /// wrote a `member` record, `OK JOIN` waits until it is durable, so a room
  /// acknowledged as yours stays yours through a crash; if the sync fails,
  /// the join is undone (``rollBack(_:)``) and the reply is `STORAGE`.
  ///
  /// A JOIN looks the user's groups up again first, when private rooms
  /// are in play for them: a private room they may no longer read is
  /// taken from them, and one they may not read is refused `NOACCESS`
  /// (chatbroker(7), "Private rooms").
  /// `restriction`: `JOIN <room> group=<group>|invite` creates the room
  /// private (Engine+Privacy).
  /// `key`: `JOIN <room> key=<key>`, for a room with one (since 1.5);
  /// bans, key and limit are checked after the room's access
  /// (Engine+Moderation).
  func join(
    _ name: RoomName, restriction: RoomRestriction? = nil, key: String? = nil,
    connection: ConnectionID, user: String
  ) {
    refreshGroupsIfNeeded(of: user, joining: name, restriction: restriction)
    if let restriction {
      guard admitPrivateJoin(name, restriction, connection: connection, user: user) else { return }
    } else if !mayReadAccess(rooms[name]?.access, user: user) {
      return failNoAccess(.join, name, connection: connection)
    }
    guard admitModes(name, key: key, connection: connection, user: user) else { return }
    guard
      ensureRoom(
        name, verb: .join, connection: connection, user: user, restriction: restriction)
    else { return }
    if sessions[connection]?.rooms.contains(name) == false {
      if rooms[name]?.sessionsByUser[user] == nil {
        broadcast(Outgoing(.joined(room: name, user: user)), in: name)
        // Whoever is away says so as they join (IRCv3 away-notify).
        if let away = awayTexts[user] {
          broadcast(Outgoing(.awayChanged(user: user, text: away)), in: name)
        }
      }
      enter(name, connection: connection, user: user)
    }
    let members = rooms[name]?.sessionsByUser.count ?? 0
    sendTopic(of: name, to: connection)
    send(.ok(.join, fields: [name.description, String(members)]), to: connection)
  }

  /// `PART`: the session leaves; when none of the user's sessions is left
  /// in the room, it stops being one of the user's rooms (journaled). A
  /// session that is not in the room may PART it too when none of the
  /// user's sessions is: that only drops it from the user's rooms
  /// (chatbroker(7), "Your rooms and read markers").
  func part(_ name: RoomName, reason: String? = nil, connection: ConnectionID, user: String) {
    let inRoom = sessions[connection]?.rooms.contains(name) == true
    let sessionsInRoom = rooms[name]?.sessionsByUser[user] ?? 0
    guard inRoom || (sessionsInRoom == 0 && isHolder(user, of: name)) else {
      let elsewhere = sessionsInRoom > 0 ? "; another session of yours has" : ""
      fail(.part, .notJoined, "you have not joined \(name)\(elsewhere)", to: connection)
      return
    }
    let lastSession = sessionsInRoom <= 1
    let record: JournalRecord? =
      lastSession && isHolder(user, of: name)
      ? .leave(user: user, room: name, at: clock.now) : nil
    if let record {
      guard journal([record], verb: .part, connection: connection) else { return }
    }
    if inRoom {
      if lastSession { keepSeen(seenRecord(name, by: user).map { [$0] } ?? []) }
      sessions[connection]?.rooms.remove(name)
      leave(name, connection: connection, user: user, reason: reason)
    }
    if let record { apply(record) }
    send(.ok(.part, fields: [name.description]), to: connection)
  }

  /// Puts a session in a room, for a JOIN or for a rollback of what took
  /// it out (the caller tells the others, if anyone).
  func enter(_ name: RoomName, connection: ConnectionID, user: String) {
    guard sessions[connection]?.rooms.insert(name).inserted == true else { return }
    if rooms[name]?.sessionsByUser[user] == nil { notePresenceChange(name) }
    rooms[name]?.connections.insert(connection)
    rooms[name]?.sessionsByUser[user, default: 0] += 1
    unsynced.noteMove(connection, name, user, entered: true)
  }

  /// Takes a connection out of a room; `PART` to the others when it was the
  /// user's last session there. A room left empty, without history and
  /// without pending lines is forgotten.
  /// `announced` false: the caller tells the others itself (a QUIT).
  func leave(
    _ name: RoomName, connection: ConnectionID, user: String, reason: String? = nil,
    announced: Bool = true
  ) {
    guard rooms[name]?.connections.remove(connection) != nil else { return }
    unsynced.noteMove(connection, name, user, entered: false)
    let remaining = (rooms[name]?.sessionsByUser[user] ?? 1) - 1
    rooms[name]?.sessionsByUser[user] = remaining > 0 ? remaining : nil
    if remaining == 0 && announced {
      broadcast(Outgoing(.parted(room: name, user: user, reason: reason)), in: name)
    }
    if remaining == 0 { notePresenceChange(name) }
    forgetIfUnused(name)
  }

  /// Creates the room (with its journal record) when it does not exist yet
  /// and the limits allow it; and makes it one of the user's rooms (with
  /// its `member` record) when it is not yet.
  /// A new room with a `restriction` is private from its first record
  /// on: its `access` record is written in the same append.
  func ensureRoom(
    _ name: RoomName, verb: Verb, connection: ConnectionID, user: String,
    restriction: RoomRestriction? = nil
  ) -> Bool {
    guard admitNewRoom(.room(name), verb: verb, connection: connection, user: user) else {
      return false
    }
    let newRoom = newRoomRecord(for: .room(name))
    let access: JournalRecord? =
      newRoom != nil && restriction != nil
      ? .access(name, restriction, user: user, at: clock.now) : nil
    // Whose JOIN creates a room is its first operator (chatbroker(7),
    // "Moderation"), in the same append; a shared room has no modes.
    let creator: JournalRecord? =
      newRoom != nil && verb == .join && !isShared(.room(name))
      ? .mode(
        name, ModeChange(adding: true, letter: .op, argument: user), user: user, at: clock.now)
      : nil
    let member: JournalRecord? =
      isHolder(user, of: name) ? nil : .member(user: user, room: name, at: clock.now)
    let records = [newRoom, access, creator, member].compactMap { $0 }
    guard !records.isEmpty else { return true }
    guard journal(records, verb: verb, connection: connection) else { return false }
    if let newRoom { applyNewRoom(newRoom) }
    if let access { apply(access) }
    if let creator { apply(creator) }
    if let member { apply(member) }
    return true
  }

  /// Whether `user` may have the target's room created now: always when it
  /// is no new room; otherwise within the limit of rooms in all and the
  /// user's rooms per minute (each new room takes one from the allowance).
  /// Answers `LIMIT` and returns false when not.
  func admitNewRoom(_ target: Target, verb: Verb, connection: ConnectionID, user: String)
    -> Bool
  {
    guard case .room(let name) = target, rooms[name] == nil else { return true }
    guard rooms.count < limits.rooms else {
      logLimit("rooms", user: user, [("rooms", "\(rooms.count)")])
      fail(
        verb, .limit,
        "there are already \(rooms.count) rooms, the most the broker keeps; "
          + "use an existing room, or wait until an empty one is forgotten",
        to: connection)
      return false
    }
    let perMinute = limits.newRoomsPerUserPerMinute
    var allowance = roomAllowances[user] ?? RoomAllowance(perMinute: perMinute, now: clock.now)
    if let wait = allowance.take(perMinute: perMinute, now: clock.now) {
      logLimit("new-rooms", user: user)
      fail(
        verb, .limit,
        "you may create at most \(perMinute) new rooms per minute; "
          + "try again in \((wait + 999) / 1000) s",
        to: connection)
      return false
    }
    roomAllowances[user] = allowance
    return true
  }

  /// The record creating the target's room, when it is a room that does not
  /// exist yet. SAY and SAYAT write it in one append with their own record,
  /// so a request refused with STORAGE leaves no room behind.
  func newRoomRecord(for target: Target) -> JournalRecord? {
    guard case .room(let name) = target, rooms[name] == nil else { return nil }
    return .room(name, created: clock.now)
  }

  func applyNewRoom(_ record: JournalRecord) {
    apply(record)
    if case .room(let name, _) = record { log.info("room created", ["room": name.description]) }
  }

  // MARK: - Which rooms are kept

  func addRoom(_ name: RoomName, created: Timestamp) {
    rooms[name] = Room(created: created)
    sortedRoomNames = nil
  }

  /// A room nobody is in, that never had a message, has no line pending,
  /// has no topic, is not private and is nobody's room (chatbroker(7), "Your rooms and read markers") keeps nothing
  /// worth keeping: it is forgotten, so that rooms made and
  /// left do not pile up (and compaction does not write them).
  func isUnused(_ name: RoomName) -> Bool {
    rooms[name]?.connections.isEmpty == true && histories[.room(name)] == nil
      && !scheduler.hasPending(in: name) && holdersByRoom[name] == nil
      && rooms[name]?.topic == nil && rooms[name]?.access == nil
  }

  /// Returns the room forgotten, modes and all, for a rollback to put
  /// back (``restoreRoom(_:_:)``).
  @discardableResult
  func forgetIfUnused(_ name: RoomName) -> Room? {
    guard isUnused(name), let room = rooms.removeValue(forKey: name) else { return nil }
    privateRooms.remove(name)
    guardedRooms.remove(name)
    sortedRoomNames = nil
    log.debug("room forgotten", ["room": name.description])
    return room
  }

  /// Puts back a room a record forgot, as it was: a rollback's. A room of
  /// that name made since, by records undone already, may still hold the
  /// sessions the rollback has yet to take out (Engine+Rollback): they
  /// stay in the room put back.
  func restoreRoom(_ name: RoomName, _ room: Room) {
    var restored = room
    if let present = rooms[name] {
      restored.connections = present.connections
      restored.sessionsByUser = present.sessionsByUser
    }
    rooms[name] = restored
    if room.access != nil { privateRooms.insert(name) } else { privateRooms.remove(name) }
    sortedRoomNames = nil
  }

  /// After a replay: the rooms that were only ever joined are gone too.
  func forgetUnusedRooms() {
    for name in rooms.keys.filter(isUnused) { forgetIfUnused(name) }
  }

  /// Rooms were dropped wholesale (a replay from scratch): the sorted
  /// names for ROOMS are made anew.
  func resetRoomBookkeeping() {
    sortedRoomNames = nil
  }

  // MARK: - Listing

  /// Sends one event to every connection in a room, except one; each wire
  /// format encodes it once. In a room private to a group, only to the
  /// sessions of users who may still read it (``mayRead(_:user:)``, their
  /// membership no older than ``groupFactsMaximumAge``): who has left the
  /// group is taken out of the room when the request is done
  /// (``settleLostAccess()``), and reads nothing of it meanwhile.
  func broadcast(
    _ line: Outgoing, in name: RoomName, except excluded: ConnectionID? = nil
  ) {
    guard let room = rooms[name] else { return }
    guard room.access?.restriction.groupName != nil else {
      for connection in room.connections where connection != excluded {
        send(line, to: connection)
      }
      return
    }
    for connection in room.connections where connection != excluded {
      guard let user = sessions[connection]?.user, sight(of: name, room, for: user) == .readable
      else { continue }
      send(line, to: connection)
    }
  }

  /// `ROOMS [AFTER <room>]`: one page of rooms by name, after `after` if
  /// given; `MORE` on the final line says that more follow the last one.
  /// Rooms the user may not read (private, secret, banned) are left out,
  /// as if they did not exist (chatbroker(7), "Private rooms"), and
  /// `MORE` only counts the rest.
  func listRooms(after: RoomName?, connection: ConnectionID, user: String) {
    let names = sortedRoomNames ?? rooms.keys.sorted()
    sortedRoomNames = names
    var start = names.startIndex
    if let after {
      // The first name past `after`, by binary search.
      var end = names.endIndex
      while start < end {
        let middle = (start + end) / 2
        if names[middle] <= after { start = middle + 1 } else { end = middle }
      }
    }
    var sent = 0
    var index = start
    while index < names.endIndex && sent < Self.roomsPerReply {
      let name = names[index]
      index += 1
      guard mayRead(name, user: user) else { continue }
      let room = rooms[name]
      send(
        .room(
          name, members: room?.sessionsByUser.count ?? 0, shared: isShared(name),
          topic: room?.topic?.text, isPrivate: room?.access != nil),
        to: connection)
      sent += 1
    }
    let more = names[index...].contains { mayRead($0, user: user) }
    let count = String(sent)
    send(
      more ? .ok(.rooms, fields: [count, "MORE"]) : .ok(.rooms, fields: [count]),
      to: connection)
  }

  /// `WHO <room>`: the room's members here, then, in a shared room, its
  /// members on the other hosts as `user@node` (Engine+FederatedPresence).
  /// Nobody is in a room the user may not read, as in one that does not
  /// exist.
  func who(_ name: RoomName, connection: ConnectionID, user: String) {
    let visible = mayRead(name, user: user) ? rooms[name] : nil
    let members = (visible?.sessionsByUser.keys).map { $0.sorted() } ?? []
    for member in members {
      send(.member(room: name, user: member, away: awayTexts[member]), to: connection)
    }
    let remote = visible == nil ? [] : remoteMembers(of: name)
    for member in remote {
      send(.member(room: name, user: member), to: connection)
    }
    send(
      .ok(.who, fields: [name.description, String(members.count + remote.count)]), to: connection)
  }
}

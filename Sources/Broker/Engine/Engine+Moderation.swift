import LineProtocol

/// Who moderates a room and what its modes hold everyone to (chatbroker(7),
/// "Moderation", since 1.5). A room's operators are the user whose JOIN
/// created it, whoever an operator made one (`+o`), for a private room its
/// creator and the members of its group, and root; operator status belongs
/// to a login name, so every session of the user has it. The modes are
/// enforced here, so the line protocol and IRC are held to them alike, and
/// journaled as `mode` records.
extension Engine {
  /// The host's administrator: an operator of every room.
  static let superuser = "root"

  // MARK: - Who is what

  /// Whether `user` is one of the room's operators.
  func isOperator(_ room: RoomName, user: String) -> Bool {
    if user == Self.superuser { return true }
    guard let modes = rooms[room]?.modes else { return false }
    return modes.operators.contains(user) || isPrivateRoomOperator(room, user: user)
  }

  /// Whether `user` has the room among their rooms or a session in it.
  func isMember(_ room: RoomName, user: String) -> Bool {
    isHolder(user, of: room) || rooms[room]?.sessionsByUser[user] != nil
  }

  /// The one place that says how a member of a room is shown as one of its
  /// members: `@` for an operator, `+` for a voiced user, both (`@+`) for
  /// an operator also voiced, highest first; empty for anyone else. NAMES,
  /// WHO and WHOIS show the first (or, with IRCv3 `multi-prefix`, all).
  public func membershipPrefixes(of user: String, in room: RoomName) -> String {
    var prefixes = ""
    if isOperator(room, user: user) { prefixes += "@" }
    if rooms[room]?.modes.voiced.contains(user) == true { prefixes += "+" }
    return prefixes
  }

  /// Whether a ban of the room matches `user` (as `user!user@host`, any
  /// host: a login name is the same user on every connection).
  func isBanned(_ room: RoomName, user: String) -> Bool {
    rooms[room]?.modes.bans(user) == true
  }

  /// The room's modes as `MODE <room>` shows them, `+` and its letters
  /// then the key (to members and operators alone) and the limit:
  /// `["+iklnt", "beer", "10"]`.
  func modeWords(_ name: RoomName, seenBy user: String) -> [String] {
    guard let room = rooms[name] else { return ["+"] }
    var letters = "+"
    var arguments: [String] = []
    if room.access != nil { letters += "i" }
    if let key = room.modes.key {
      letters += "k"
      if isMember(name, user: user) || isOperator(name, user: user) { arguments.append(key) }
    }
    if let limit = room.modes.limit {
      letters += "l"
      arguments.append(String(limit))
    }
    for letter in [ModeChange.Letter.moderated, .noExternal, .secret, .topicLock]
    where room.modes.flags.contains(letter) {
      letters.append(letter.rawValue)
    }
    return [letters] + arguments
  }

  /// What the IRC gateway shows of a room: its creation, whether it is
  /// private and secret (353's `@`), `nil` for a room that does not exist
  /// or that `user` may not read.
  public func roomMode(_ name: RoomName, seenBy user: String) -> (
    created: Timestamp, isPrivate: Bool, isSecret: Bool
  )? {
    guard let room = rooms[name], mayRead(name, user: user) else { return nil }
    return (room.created, room.access != nil, room.modes.flags.contains(.secret))
  }

  // MARK: - What the modes hold writers and joiners to

  /// For a request that writes to a room its writer may read (a ban is
  /// decided with the rest of who may read it, ``sight(of:for:)``): `+n`
  /// for who is not a member (`NOTJOINED`), `+m` for who is neither an
  /// operator nor voiced (`MODERATED`). Answers and returns false when the
  /// line may not be written. Operators are held to none.
  func checkModeration(_ name: RoomName, verb: Verb, connection: ConnectionID, user: String)
    -> Bool
  {
    guard let modes = rooms[name]?.modes, !modes.isEmpty, !isOperator(name, user: user) else {
      return true
    }
    if modes.flags.contains(.noExternal) && !isMember(name, user: user) {
      fail(
        verb, .notJoined, "\(name) takes lines from its members only (+n): join it first",
        to: connection)
      return false
    }
    if modes.flags.contains(.moderated) && !modes.voiced.contains(user) {
      fail(
        verb, .moderated,
        "\(name) is moderated (+m): only its operators and voiced members write to it",
        to: connection)
      return false
    }
    return true
  }

  /// For a JOIN of an existing room by a user who is not yet a member:
  /// its bans (`BANNED`), its key (`BADKEY`) and its limit (`FULL`).
  /// Operators pass; a member joins again whatever the key and limit.
  func admitModes(_ name: RoomName, key: String?, connection: ConnectionID, user: String) -> Bool {
    guard let modes = rooms[name]?.modes, !modes.isEmpty, !isOperator(name, user: user) else {
      return true
    }
    if isBanned(name, user: user) {
      fail(.join, .banned, "you are banned from \(name)", to: connection)
      return false
    }
    guard !isMember(name, user: user) else { return true }
    if let roomKey = modes.key, roomKey != key {
      fail(
        .join, .badKey,
        key == nil
          ? "\(name) has a key (+k): JOIN \(name) key=<key>" : "that is not the key of \(name)",
        to: connection)
      return false
    }
    let members = rooms[name]?.sessionsByUser.count ?? 0
    if let limit = modes.limit, members >= limit {
      fail(
        .join, .full, "\(name) has \(members) members, its limit (+l \(limit))", to: connection)
      return false
    }
    return true
  }

  // MARK: - MODE

  /// `MODE <room>`: `OK MODE <room> <modes> [<key>] [<limit>]`.
  func showModes(_ name: RoomName, connection: ConnectionID, user: String) {
    guard rooms[name] != nil, mayRead(name, user: user) else {
      return failNoAccess(.mode, name, connection: connection)
    }
    send(
      .ok(.mode, fields: [name.description] + modeWords(name, seenBy: user)), to: connection)
  }

  /// `MODE <room> +b`: a `BAN` line per mask, then `OK MODE <room> +b <count>`.
  func listBans(_ name: RoomName, connection: ConnectionID, user: String) {
    guard let room = rooms[name], mayRead(name, user: user) else {
      return failNoAccess(.mode, name, connection: connection)
    }
    for ban in room.modes.bans {
      send(.ban(room: name, mask: ban.mask, user: ban.user, time: ban.time), to: connection)
    }
    send(
      .ok(.mode, fields: [name.description, "+b", String(room.modes.bans.count)]), to: connection)
  }

  /// `MODE <room> <changes>` by an operator: every change is checked before
  /// any is made, the ones that change something are journaled in one
  /// append, the room's other sessions get a `MODE` line, and the sender
  /// `OK MODE <room> <changes made>`. `+i` and `-i` change the room's
  /// access, as `ACCESS` does.
  func setModes(
    _ name: RoomName, _ changes: [ModeChange], connection: ConnectionID, user: String
  ) {
    guard let room = rooms[name], mayRead(name, user: user) else {
      return failNoAccess(.mode, name, connection: connection)
    }
    if isShared(.room(name)) {
      fail(
        .mode, .limit, "\(name) is shared with other hosts, and modes are not shared between hosts",
        to: connection)
      return
    }
    guard isOperator(name, user: user) else {
      fail(.mode, .notOperator, "you are not an operator of \(name)", to: connection)
      return
    }
    var modes = room.modes
    var made: [ModeChange] = []
    var records: [JournalRecord] = []
    var access = room.access?.restriction
    for change in changes {
      if change.letter == .inviteOnly {
        let wanted: RoomRestriction? = change.adding ? (access ?? .invited) : nil
        guard wanted != access else { continue }
        access = wanted
        records += accessRecords(name, wanted, user: user)
        made.append(change)
        continue
      }
      if change.letter == .op || change.letter == .voice, change.adding,
        let target = change.argument
      {
        guard isMember(name, user: target) else {
          // Who has no session is no nick IRC could name (401).
          if connectionsByUser[target] == nil {
            fail(
              .mode, .noSuchUser, "there is no user named \"\(target)\" connected, nor in \(name)",
              to: connection)
          } else {
            fail(.mode, .notMember, "\(target) is not in \(name)", to: connection)
          }
          return
        }
      }
      if change.letter == .ban, change.adding, modes.bans.count >= RoomModes.maximumBans,
        !modes.bans.contains(where: { $0.mask == change.argument })
      {
        fail(
          .mode, .limit,
          "\(name) has \(RoomModes.maximumBans) bans, the most a room keeps; take one back first",
          to: connection)
        return
      }
      guard modes.apply(change, user: user, at: clock.now) else { continue }
      records.append(.mode(name, change, user: user, at: clock.now))
      made.append(change)
    }
    // A ban removes whom it matches, as a KICK does: no longer in the
    // room, nor one of their rooms, nor invited (chatbroker(7), "Moderation").
    let banned = made.contains { $0.letter == .ban && $0.adding }
    let removed = banned ? bannedMembers(of: name, under: modes) : []
    records += removed.compactMap { removalRecord(of: $0, from: name, by: user) }
    if !records.isEmpty {
      guard journal(records, verb: .mode, connection: connection) else { return }
      for record in records { apply(record) }
      if records.contains(where: { if case .access = $0 { true } else { false } }) {
        for other in Set((rooms[name]?.connections ?? []).compactMap { sessions[$0]?.user }) {
          revokeLostRooms(of: other)
        }
      }
      broadcast(
        Outgoing(.modeChanged(room: name, user: user, changes: made)), in: name,
        except: connection)
      for member in removed where rooms[name]?.sessionsByUser[member] != nil {
        removeSessions(of: member, from: name, by: user, reason: "banned")
      }
    }
    send(
      .ok(.mode, fields: [name.description] + (made.isEmpty ? [] : ModeChange.summary(made))),
      to: connection)
  }

  /// The records that change a room's access to `restriction` (nil:
  /// public). A public room made private (`+i`) invites who has it among
  /// their rooms or is in it, so nobody in it is put out.
  func accessRecords(_ name: RoomName, _ restriction: RoomRestriction?, user: String)
    -> [JournalRecord]
  {
    var records: [JournalRecord] = [.access(name, restriction, user: user, at: clock.now)]
    if restriction != nil, rooms[name]?.access == nil {
      let present = (rooms[name]?.sessionsByUser.keys).map(Array.init) ?? []
      let members = Set(present).union(holdersByRoom[name] ?? []).subtracting([user])
      for member in members.sorted() {
        records.append(.invite(name, user: member, at: clock.now))
      }
    }
    return records
  }

  /// Applies one `mode` record; returns the modes before, to undo it.
  func changeModes(_ name: RoomName, _ change: ModeChange, user: String, at time: Timestamp)
    -> RoomModes?
  {
    guard let before = rooms[name]?.modes else { return nil }
    _ = rooms[name]?.modes.apply(change, user: user, at: time)
    noteGuard(of: name)
    return before
  }

  /// Who a room's bans, as `modes` has them, now keep out of it: its
  /// members and the users invited to it, but its operators.
  private func bannedMembers(of name: RoomName, under modes: RoomModes) -> [String] {
    guard let room = rooms[name] else { return [] }
    let candidates = Set(room.sessionsByUser.keys).union(holdersByRoom[name] ?? [])
      .union(room.access?.invited ?? [])
    return candidates.filter { candidate in
      candidate != Self.superuser && !modes.operators.contains(candidate)
        && !isPrivateRoomOperator(name, user: candidate) && modes.bans(candidate)
    }.sorted()
  }

  /// The record of an operator removing `member` from a room (a `leave`
  /// with `by`): it is no longer one of their rooms, and they are no
  /// longer invited. Nil when it is neither.
  func removalRecord(of member: String, from name: RoomName, by user: String) -> JournalRecord? {
    let invited = rooms[name]?.access?.invited.contains(member) == true
    guard invited || isHolder(member, of: name) else { return nil }
    return .leave(user: member, room: name, at: clock.now, by: user)
  }

  /// The member's sessions get a `KICK` line and leave the room, then
  /// the room's other sessions get it. Theirs directly: a ban has already
  /// made the room one they may not read (``broadcast``).
  private func removeSessions(
    of member: String, from name: RoomName, by user: String, reason: String?
  ) {
    let line = Outgoing(.kicked(room: name, user: member, by: user, reason: reason))
    for other in (connectionsByUser[member] ?? []).sorted()
    where sessions[other]?.rooms.contains(name) == true {
      send(line, to: other)
      sessions[other]?.rooms.remove(name)
      if rooms[name]?.sessionsByUser[member] == 1 {
        keepSeen(seenRecord(name, by: member).map { [$0] } ?? [])
      }
      leave(name, connection: other, user: member, announced: false)
    }
    broadcast(line, in: name)
  }

  // MARK: - KICK

  /// `KICK <room> <user> [<reason>]` by an operator: the room's sessions,
  /// the removed user's too, get a `KICK` line; the removed user's
  /// sessions leave the room, it stops being one of their rooms and they
  /// are no longer invited to it (a `leave` record with `by`), so no
  /// reconnect brings them back. They may join a public room again
  /// unless a ban stops them, a private one only when invited again or
  /// by its group.
  func kick(
    _ kicked: String, from name: RoomName, reason: String?, connection: ConnectionID,
    user: String
  ) {
    guard rooms[name] != nil, mayRead(name, user: user) else {
      return failNoAccess(.kick, name, connection: connection)
    }
    guard isOperator(name, user: user) else {
      if !isMember(name, user: user) {
        fail(.kick, .notJoined, "you have not joined \(name)", to: connection)
      } else {
        fail(.kick, .notOperator, "you are not an operator of \(name)", to: connection)
      }
      return
    }
    guard isMember(name, user: kicked) else {
      fail(.kick, .notMember, "\(kicked) is not in \(name)", to: connection)
      return
    }
    let record = removalRecord(of: kicked, from: name, by: user)
    if let record {
      guard journal([record], verb: .kick, connection: connection) else { return }
    }
    log.info("kicked", ["room": name.description, "user": kicked, "by": user])
    removeSessions(of: kicked, from: name, by: user, reason: reason)
    if let record { apply(record) }
    send(.ok(.kick, fields: [name.description, kicked]), to: connection)
  }
}

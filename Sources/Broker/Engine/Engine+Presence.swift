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

  /// The users with a session now who share one of `user`'s rooms, and
  /// `user` when online, sorted: whom IRC's `WHO <mask>` may show. Found
  /// through the members of `user`'s own rooms, so a `WHO *` costs what
  /// `NAMES` of those rooms costs, not a look at every user online and
  /// all of their rooms.
  /// A room of theirs they may no longer read (a group they left) shows
  /// nobody.
  public func onlineUsers(sharingRoomsWith user: String) -> [String] {
    var users: Set<String> = connectionsByUser[user] != nil ? [user] : []
    for room in (roomsByUser[user] ?? [:]).keys where mayRead(room, user: user) {
      for other in holdersByRoom[room] ?? [] where connectionsByUser[other] != nil {
        users.insert(other)
      }
    }
    return users.sorted()
  }

  /// The user's away text, nil when they are not away (or not connected).
  public func awayText(_ user: String) -> String? {
    awayTexts[user]
  }

  /// Marks a connected user away with `text`, or back with nil or an
  /// empty text; forgotten when their last session closes.
  public func setAway(_ user: String, text: String?) {
    inStep(.other) { changeAway(of: user, to: text) }
  }

  private func changeAway(of user: String, to text: String?) {
    guard isOnline(user) else { return }
    let changed = text.flatMap { $0.isEmpty ? nil : $0 }
    let before = awayTexts[user]
    awayTexts[user] = changed
    // Back, or away again: whoever writes is told afresh.
    for writer in awayToldAt.keys { awayToldAt[writer]?[user] = nil }
    if changed != before { announceAway(of: user) }
  }

  /// Tells the sessions of other users who share a room with `user` that
  /// their away state changed (IRC's away-notify): one line each, however
  /// many rooms they share, encoded once per wire format.
  func announceAway(of user: String) {
    guard let own = connectionsByUser[user] else { return }
    var sharing: Set<ConnectionID> = []
    for connection in own {
      for room in sessions[connection]?.rooms ?? [] {
        sharing.formUnion(rooms[room]?.connections ?? [])
      }
    }
    let line = Outgoing(.awayChanged(user: user, text: awayTexts[user]))
    for connection in sharing.subtracting(own).sorted() {
      send(line, to: connection)
    }
  }

  /// A direct message went to `recipient`: when they are away, the writer
  /// is told (`AWAY <user> :<text>`, chatbroker(7)), once an hour per
  /// conversation, not for every line.
  func tellAway(_ recipient: String, to writer: String, connection: ConnectionID) {
    guard recipient != writer, let text = awayTexts[recipient] else { return }
    if let told = awayToldAt[writer]?[recipient],
      clock.now.milliseconds - told.milliseconds < 3_600_000
    {
      return
    }
    awayToldAt[writer, default: [:]][recipient] = clock.now
    send(.away(user: recipient, text: text), to: connection)
  }

  /// The user's last session leaves `room` (a PART, a KICK, the
  /// connection closing or the broker stopping; not a JOIN undone by a
  /// failed sync): they have seen it up to its newest message. Returns
  /// the `seen` record that keeps this across a restart, nil when the
  /// room has no message or the user's last record names the same one;
  /// ``keepSeen(_:)`` writes and applies it.
  func seenRecord(_ room: RoomName, by user: String) -> JournalRecord? {
    guard let newest = histories[.room(room)]?.newest,
      seenUntilByUser[user]?[room]?.id != newest.id
    else { return nil }
    return .seen(user: user, room: room, id: newest.id, at: newest.time)
  }

  /// Journals `seen` records and applies them. Records that cannot be
  /// written are only logged, and change nothing (the state is what the
  /// journal replays to): what they keep is a convenience, so no request
  /// fails for them, and the read marker says what it can.
  func keepSeen(_ records: [JournalRecord]) {
    guard !records.isEmpty else { return }
    do {
      try append(records)
    } catch {
      log.error("journal write failed", ["reason": error.reason, "record": "seen"])
      return
    }
    for record in records { apply(record) }
  }

  /// Sets (or, rolling back, restores) where the user's last session left
  /// the room.
  func setSeen(
    _ seen: (id: MessageID, time: Timestamp)?, of user: String, in room: RoomName
  ) {
    seenUntilByUser[user, default: [:]][room] = seen
    if seenUntilByUser[user]?.isEmpty == true { seenUntilByUser[user] = nil }
  }

  /// The user's rooms (chatbroker(7), "Your rooms and read markers"), by
  /// name: those an IRC client is joined to when it registers.
  public func rooms(of user: String) -> [RoomName] {
    (roomsByUser[user] ?? [:]).keys.sorted()
  }

  /// Up to where `user` has seen `room`: the later of the message their
  /// read marker is on and the room's newest message when their last
  /// session left it, as that message while the history keeps it, else
  /// as its time; nil when neither is known. What a client that joins
  /// again has missed comes after it.
  public func seenUntil(_ user: String, in room: RoomName) -> HistoryPoint? {
    var seen: (id: MessageID, time: Timestamp)?
    if let marker = readMarkers[user]?[.room(room)], let time = marker.delivered {
      seen = (marker.id, time)
    }
    if let left = seenUntilByUser[user]?[room], seen.map({ left.time >= $0.time }) ?? true {
      seen = left
    }
    guard let seen else { return nil }
    if histories[.room(room)]?.sequence(of: seen.id) != nil { return .message(seen.id) }
    return .time(seen.time)
  }
}

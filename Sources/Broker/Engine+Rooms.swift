import LineProtocol

extension Engine {
  func join(_ name: RoomName, connection: ConnectionID, user: String) {
    guard ensureRoom(name, verb: .join, connection: connection) else { return }
    if sessions[connection]?.rooms.contains(name) == false {
      sessions[connection]?.rooms.insert(name)
      let firstSession = rooms[name]?.sessionsByUser[user] == nil
      if firstSession {
        broadcast(BrokerLine.join(room: name, user: user), in: name)
      }
      rooms[name]?.connections.insert(connection)
      rooms[name]?.sessionsByUser[user, default: 0] += 1
    }
    let members = rooms[name]?.sessionsByUser.count ?? 0
    send(BrokerLine.ok(.join, name.description, String(members)), to: connection)
  }

  func part(_ name: RoomName, connection: ConnectionID, user: String) {
    guard sessions[connection]?.rooms.contains(name) == true else {
      fail(.part, .notJoined, "you have not joined \(name)", to: connection)
      return
    }
    sessions[connection]?.rooms.remove(name)
    leave(name, connection: connection, user: user)
    send(BrokerLine.ok(.part, name.description), to: connection)
  }

  /// Takes a connection out of a room; `PART` to the others when it was the
  /// user's last session there.
  func leave(_ name: RoomName, connection: ConnectionID, user: String) {
    guard rooms[name]?.connections.remove(connection) != nil else { return }
    let remaining = (rooms[name]?.sessionsByUser[user] ?? 1) - 1
    rooms[name]?.sessionsByUser[user] = remaining > 0 ? remaining : nil
    if remaining == 0 {
      broadcast(BrokerLine.part(room: name, user: user), in: name)
    }
  }

  /// Creates the room (with its journal record) when it does not exist yet.
  func ensureRoom(_ name: RoomName, verb: Verb, connection: ConnectionID) -> Bool {
    guard let record = newRoomRecord(for: .room(name)) else { return true }
    guard journal([record], verb: verb, connection: connection) else { return false }
    applyNewRoom(record)
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

  /// Sends one encoded line to every connection in a room, except one.
  func broadcast(
    _ line: [UInt8], in name: RoomName, except excluded: ConnectionID? = nil,
    kind: LineKind = .neutral
  ) {
    guard let connections = rooms[name]?.connections, let output else { return }
    for connection in connections where connection != excluded {
      output.send(line, to: connection, kind: kind)
    }
  }

  func listRooms(connection: ConnectionID) {
    let names = rooms.keys.sorted()
    let kinds = listKinds(answering: .rooms, showsUnsynced: roomsShowUnsynced)
    for name in names {
      send(
        BrokerLine.room(name, members: rooms[name]?.sessionsByUser.count ?? 0), to: connection,
        kind: kinds.item)
    }
    send(BrokerLine.ok(.rooms, String(names.count)), to: connection, kind: kinds.end)
  }

  func who(_ name: RoomName, connection: ConnectionID) {
    let members = (rooms[name]?.sessionsByUser.keys).map { $0.sorted() } ?? []
    for member in members {
      send(BrokerLine.member(room: name, user: member), to: connection)
    }
    send(BrokerLine.ok(.who, name.description, String(members.count)), to: connection)
  }
}

import LineProtocol

/// Who is in a shared room on the other hosts (chatbroker(8), "FEDERATION",
/// "Presence"). Each host announces its own members of each shared room
/// when they change and at least every ``presenceInterval``, outside the
/// stream (presence is what is true now, never history); a host's
/// announcement counts for ``presenceTimeout``, so the members of a host
/// that is cut off or stopped leave `WHO` within it. Nothing of it is
/// journaled.
extension Engine {
  /// How often each host announces its members of each shared room.
  public static let presenceInterval: Int64 = 30_000
  /// How long an announcement counts: three intervals, so one or two lost
  /// announcements drop nobody.
  public static let presenceTimeout: Int64 = 90_000
  /// The most users one announcement may name; one naming more is ignored.
  public static let presenceUsersLimit = 1000
  /// The most (room, host) announcements kept; more are ignored.
  public static let presenceEntriesLimit = 10_000

  /// The shared rooms whose members here changed since last asked, each
  /// with this host's members now: for the shell to announce.
  public func takePresenceChanges() -> [(room: RoomName, users: [String])] {
    let changed = federation.live.presenceChanged.sorted()
    federation.live.presenceChanged.removeAll()
    return changed.map { ($0, localMembers(of: $0)) }
  }

  /// Every shared room that has members here, with them: announced again
  /// every ``presenceInterval``.
  public func localPresence() -> [(room: RoomName, users: [String])] {
    rooms.keys.filter { isShared($0) }.sorted().compactMap { room in
      let users = localMembers(of: room)
      return users.isEmpty ? nil : (room, users)
    }
  }

  /// Host `node` says `users` are in `room` there. Passed over for a room
  /// this host does not share and for this host's own node; ignored, and
  /// false, for a node or user name that is not one, or past the limits.
  @discardableResult
  public func remotePresence(room: RoomName, node: String, users: [String]) -> Bool {
    guard let own = federation.settings?.node, node != own, isShared(room) else { return true }
    guard FederationSettings.isValidNode(node), users.count <= Self.presenceUsersLimit,
      users.allSatisfy(UserName.isValid)
    else { return false }
    let known = federation.live.presence[room]?[node] != nil
    if !known && presenceEntries >= Self.presenceEntriesLimit { return false }
    if users.isEmpty {
      federation.live.presence[room]?[node] = nil
      if federation.live.presence[room]?.isEmpty == true { federation.live.presence[room] = nil }
      return true
    }
    federation.live.presence[room, default: [:]][node] = RemoteMembers(
      users: users.sorted(), announced: clock.now)
    return true
  }

  /// The room's members on other hosts whose announcement still counts, as
  /// `user@node`, sorted.
  func remoteMembers(of room: RoomName) -> [String] {
    guard let hosts = federation.live.presence[room] else { return [] }
    let now = clock.now.milliseconds
    return hosts.sorted { $0.key < $1.key }.flatMap { node, members in
      now - members.announced.milliseconds <= Self.presenceTimeout
        ? members.users.map { "\($0)@\(node)" } : []
    }
  }

  /// A local member joined or left `room`: announce it when it is shared.
  func notePresenceChange(_ room: RoomName) {
    guard federation.settings != nil, isShared(room) else { return }
    federation.live.presenceChanged.insert(room)
  }

  private func localMembers(of room: RoomName) -> [String] {
    (rooms[room]?.sessionsByUser.keys).map { $0.sorted() } ?? []
  }

  private var presenceEntries: Int {
    federation.live.presence.values.reduce(0) { $0 + $1.count }
  }
}

import LineProtocol

/// Rooms shared across hosts (chatbroker(8), "FEDERATION"). A line said in
/// a shared room is journaled into the outbox and acknowledged; the shell
/// publishes durable outbox lines to the stream, and every host, this one
/// included, shows the room's lines only as they come back from the stream,
/// so that each shared room has one order and one set of ids everywhere.
extension Engine {
  /// Shares the rooms `settings` names; set once, before the first event.
  public func federate(_ settings: FederationSettings) {
    federation.settings = settings
  }

  public var federationSettings: FederationSettings? { federation.settings }

  func isShared(_ room: RoomName) -> Bool {
    federation.settings?.shares(room) ?? false
  }

  /// A shared room, or `@user@node`: a user of another host.
  func isShared(_ target: Target) -> Bool {
    switch target {
    case .room(let room): isShared(room)
    case .user(let name): name.contains("@")
    }
  }

  /// The last stream sequence applied: the link resumes after it.
  public var streamSequence: UInt64 { federation.sequence }

  /// The outbox, oldest first: lines said here that have not come back
  /// from the stream yet. The shell publishes only those the journal
  /// committer counts durable (Server+Federation).
  public var outbox: [OutboxLine] { federation.outbox }

  public var outboxCount: Int { federation.outbox.count }

  /// `SAY` to a shared room, or to `@user@node` on another host:
  /// journaled into the outbox, acknowledged with the outbox id; the
  /// conversation sees it when it comes back from the stream.
  func sayShared(_ target: Target, text: String, connection: ConnectionID, user: String) {
    guard let node = federation.settings?.node else {
      fail(
        .say, .noSuchUser,
        "\(target) is a user of another host, and this broker shares no rooms (see --nats)",
        to: connection)
      return
    }
    guard admitNewRoom(target, verb: .say, connection: connection, user: user),
      let id = takeID(.say, connection: connection)
    else { return }
    let newRoom = newRoomRecord(for: target)
    let line = OutboxLine(
      id: id, node: node, target: target, author: user, time: clock.now, text: text)
    let record = JournalRecord.outbox(line)
    guard journal([newRoom, record].compactMap { $0 }, verb: .say, connection: connection)
    else { return }
    if let newRoom { applyNewRoom(newRoom) }
    apply(record)
    federation.senders[id] = connection
    send(.accepted(.say, id: id, time: line.time), to: connection, kind: .outcome(.say))
  }

  /// A scheduled line due in a shared room: taken off the schedule and
  /// put into the outbox under a fresh id, since a node's outbox ids must
  /// grow in the order they are published (chatbroker(8), "FEDERATION");
  /// nil for any other line.
  func sharedDelivery(_ pending: PendingMessage, at now: Timestamp) -> [JournalRecord]? {
    guard isShared(pending.target), let node = federation.settings?.node,
      scheduler.series(pending.id) == nil,
      let id = takeFreshID()
    else { return nil }
    let line = OutboxLine(
      id: id, node: node, target: pending.target, author: pending.author, time: now,
      text: pending.text)
    return [.cancel(pending.id, at: now), .outbox(line)]
  }

  /// A line read from the stream. Lines at or before the last applied
  /// sequence, and a node's outbox line seen before (published twice), are
  /// skipped; anything else is journaled, enters the room's history and is
  /// sent to this host's members but the session that said it. Returns
  /// false when the journal could not be written: the link must then read
  /// again from ``streamSequence``.
  @discardableResult
  public func receive(_ line: StreamLine) -> Bool {
    guard let settings = federation.settings, line.position.sequence > federation.sequence else {
      return true
    }
    let position = line.position
    // A node vouches for its own users only: an author that already names
    // a node (`root@h1` published by h2) is another node's user, and the
    // line is passed over like one this host does not share.
    let seen =
      federation.lastOrigin[position.node].map { position.origin <= $0 } ?? false
      || !UserName.isValid(line.user)
    let own = position.node == settings.node
    let author = own ? line.user : "\(line.user)@\(position.node)"
    var records: [JournalRecord] = []
    var message: StoredMessage?
    if !seen, let target = localTarget(line.target, fromOwnNode: own, settings: settings),
      let id = FederatedID.id(forSequence: position.sequence)
    {
      let stored = StoredMessage(id: id, time: line.time, author: author, text: line.text)
      message = stored
      if let newRoom = newRoomRecord(for: target) { records.append(newRoom) }
      records.append(.remote(stored, target: target, position: position))
    } else {
      records.append(.streamPosition(position))
    }
    do {
      try journal.append(records)
    } catch {
      log.error(
        "journal write failed", ["reason": error.reason, "stream_seq": "\(position.sequence)"])
      return false
    }
    for record in records { apply(record) }
    if let message, case .remote(_, let target, _) = records.last {
      let sender = own ? federation.senders.removeValue(forKey: position.origin) : nil
      fanOut(message, in: ConversationKey(target: target, author: author), except: sender)
    }
    return true
  }

  /// Where a line from the stream goes on this host: a room it shares; a
  /// direct message of one of its users (as they wrote it, `@bob@h2`); one
  /// to one of its users from another host (`@bob`); or nowhere.
  private func localTarget(
    _ target: Target, fromOwnNode own: Bool, settings: FederationSettings
  ) -> Target? {
    switch target {
    case .room(let room):
      return settings.shares(room) ? target : nil
    case .user(let name):
      guard let at = name.lastIndex(of: "@") else { return nil }
      if own { return target }
      guard name[name.index(after: at)...] == settings.node else { return nil }
      return .user(String(name[..<at]))
    }
  }

  /// The federation records' change to the state, for ``apply(_:)``.
  func applyFederated(_ record: JournalRecord) -> UnsyncedRecords.Undo {
    let before = federation.durable
    switch record {
    case .outbox(let line):
      noteTaken(line.id)
      // A compacted journal lists the stream position before the outbox.
      if let last = federation.lastOrigin[line.node], last >= line.id { return .nothing }
      federation.outbox.append(line)
      return .federated(before, message: nil, newRoom: nil)
    case .remote(let message, let target, let position):
      advance(to: position)
      let added = addMessage(message, to: target)
      return .federated(
        before, message: (added.conversation, added.evicted, added.newHistory),
        newRoom: added.newRoom)
    case .streamPosition(let position):
      advance(to: position)
      return .federated(before, message: nil, newRoom: nil)
    default:
      return .nothing
    }
  }

  /// The stream reached `position`: a line of this host's own outbox that
  /// came back leaves the outbox (with every older one: the stream keeps
  /// the order they were published in).
  private func advance(to position: StreamPosition) {
    federation.sequence = max(federation.sequence, position.sequence)
    if let last = federation.lastOrigin[position.node], last >= position.origin { return }
    federation.lastOrigin[position.node] = position.origin
    // The outbox is in id order; most lines from the stream are not ours,
    // and leave it untouched (and unshared with the undo records).
    while let first = federation.outbox.first, first.node == position.node,
      first.id <= position.origin
    {
      federation.outbox.removeFirst()
    }
  }
}

extension EngineSnapshot {
  /// The stream position (one record per node, the newest sequence last)
  /// and the outbox, for a compacted journal.
  func forEachFederationRecord(_ body: (JournalRecord) throws -> Void) rethrows {
    let nodes = federation.lastOrigin.sorted { $0.key < $1.key }
    for (index, (node, origin)) in nodes.enumerated() {
      // Only the last record carries the real sequence; the others are
      // below it, so applying them in order ends at the right place.
      let sequence = index == nodes.count - 1 ? federation.sequence : 1
      try body(.streamPosition(StreamPosition(sequence: sequence, node: node, origin: origin)))
    }
    for line in federation.outbox {
      try body(.outbox(line))
    }
  }
}

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

  /// A private room is never shared, even when the shared rooms' names
  /// come to match it later: its lines stay on this host (chatbroker(7),
  /// "Private rooms").
  func isShared(_ room: RoomName) -> Bool {
    guard federation.settings?.shares(room) == true else { return false }
    return rooms[room]?.access == nil
  }

  /// A shared room, or `@user@node`: a user of another host.
  func isShared(_ target: Target) -> Bool {
    switch target {
    case .room(let room): isShared(room)
    case .user(let name): name.contains("@")
    }
  }

  /// The last stream sequence the rooms' reader applied.
  public var streamSequence: UInt64 { federation.sequences[.rooms] }

  /// The last stream sequence each reader applied: each resumes after its
  /// own.
  public var streamSequences: StreamSequences { federation.sequences }

  /// When the stream read was created, as the journal last noted it; nil
  /// before the link first looked.
  public var streamCreated: Timestamp? { federation.streamCreated }

  /// The line `id` waits in the outbox: the stream has not brought it
  /// back.
  public func outboxHolds(_ id: MessageID) -> Bool { !outbox(in: id...id).isEmpty }

  /// The outbox, oldest first: lines said here that have not come back
  /// from the stream yet. The shell publishes only those the journal
  /// committer counts durable (Server+Federation).
  public var outbox: [OutboxLine] { Array(federation.outbox) }

  /// The outbox lines with ids in `range`, oldest first: found by their
  /// ids, in order, without a look at every line of a long outbox.
  public func outbox(in range: ClosedRange<MessageID>) -> [OutboxLine] {
    let lines = federation.outbox
    /// The first position whose id is not below `id`, by binary search.
    func position(notBelow id: MessageID) -> Int {
      var (low, high) = (0, lines.count)
      while low < high {
        let middle = (low + high) / 2
        if lines[middle].id < id { low = middle + 1 } else { high = middle }
      }
      return low
    }
    let start = position(notBelow: range.lowerBound)
    var end = position(notBelow: range.upperBound)
    if end < lines.count && lines[end].id == range.upperBound { end += 1 }
    return start < end ? (start..<end).map { lines[$0] } : []
  }

  public var outboxCount: Int { federation.outbox.count }

  /// The id of the newest outbox line: asked every pass, without the copy
  /// of the whole outbox that ``outbox`` makes.
  public var newestOutboxID: MessageID? { federation.outbox.last?.id }

  /// `SAY` to a shared room, or to `@user@node` on another host:
  /// journaled into the outbox, acknowledged with the outbox id; the
  /// conversation sees it when it comes back from the stream. Refused
  /// while it could not leave: the stream refuses this node's lines, or
  /// a new state directory does not know yet which ids the node used.
  func sayShared(_ target: Target, text: String, connection: ConnectionID, user: String) {
    guard let node = federation.settings?.node else {
      fail(
        .say, .noSuchUser,
        "\(target) is a user of another host, and this broker shares no rooms (see --nats)",
        to: connection)
      return
    }
    if let reason = federation.live.refusal {
      fail(
        .say, .limit,
        "\(target) is shared with other hosts, and the stream refuses this host's lines (\(reason)); "
          + "nothing was accepted, and the administrator must fix the NATS permissions or stream",
        to: connection)
      return
    }
    guard federation.knowsOwnIDs || federation.live.checkedOwnIDs else {
      fail(
        .say, .limit,
        "\(target) is shared with other hosts, and this host has not yet read from the stream "
          + "which ids node \(node) used before; nothing was accepted, try again once the link is up",
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
    send(.accepted(.say, id: id, time: line.time), to: connection)
  }

  /// The link found `lastID`, the highest id this node has in the stream
  /// (nil: none): ids are handed out above it from now on, and the
  /// journal says so, so that a new state directory never reuses an id
  /// the other hosts have already applied (chatbroker(8), "FEDERATION").
  public func streamHoldsOwnLines(upTo lastID: MessageID?) {
    guard let node = federation.settings?.node else { return }
    federation.live.checkedOwnIDs = true
    guard let lastID else { return }
    let behind = lastID.value >= nextID && lastID.value < FederatedID.base
    if behind {
      let clashing = federation.outbox.filter { $0.id <= lastID }.count
      log.warning(
        "journal is behind the stream for this node: ids continue after the stream's",
        [
          "node": node, "stream_last_id": lastID.description,
          "journal_next_id": MessageID(value: nextID).description,
          "outbox_lines_at_or_below": "\(clashing)",
        ])
    }
    guard behind || !federation.knowsOwnIDs else { return }
    let record = JournalRecord.streamLastID(node: node, id: lastID)
    do {
      try append([record])
    } catch {
      log.error("journal write failed", ["reason": error.reason])
    }
    apply(record)
  }

  /// The link found the stream created at `created`. The first time, the
  /// journal notes it; another time than before means the stream was lost
  /// or reset: its sequences start again, so this host reads it from the
  /// start, and its lines get ids no line of the old one had
  /// (``FederatedID/offset(forStreamCreated:)``; chatbroker(8),
  /// "FEDERATION"). Lines of every node seen before are
  /// still known by their ids, and are not shown twice. This node's latest
  /// lines go back into the outbox, to be published into the new stream
  /// for the hosts that had not read them (chatbroker(8), "When the stream
  /// is lost"): true when so, and the shell must offer the whole outbox
  /// again.
  @discardableResult
  public func streamFound(created: Timestamp) -> Bool {
    guard let node = federation.settings?.node, federation.streamCreated != created else {
      return false
    }
    let reset = federation.streamCreated != nil
    if let before = federation.streamCreated {
      log.warning(
        "the stream was lost or reset: reading the new one from its start",
        [
          "node": node, "created_before": before.description, "created": created.description,
          "seq_before": "\(federation.sequences[.rooms])", "outbox": "\(federation.outbox.count)",
          "published_again": "\(federation.published.count)",
        ])
    }
    let record = JournalRecord.streamCreated(
      created, offset: FederatedID.offset(forStreamCreated: created))
    do {
      try append([record])
    } catch {
      log.error("journal write failed", ["reason": error.reason])
      return false
    }
    apply(record)
    return reset
  }

  /// The link's word on whether the stream takes this node's lines: a
  /// reason while it refuses them, nil once one is stored.
  public func streamRefuses(_ reason: String?) {
    federation.live.refusal = reason
  }

  public var streamRefusal: String? { federation.live.refusal }

  /// A scheduled line or a series' occurrence due in a shared room: put
  /// into the outbox under a fresh id, since a node's outbox ids must grow
  /// in the order they are published (chatbroker(8), "FEDERATION"), and
  /// shown, like a `SAY` there, when the stream brings it back. A single
  /// line is taken off the schedule; a series fires here, on its author's
  /// host, and its record is written again with its next due instant and
  /// count (or cancelled after its last), since its occurrence enters no
  /// history here until the stream brings it. Nil for any other line.
  /// `next` is what comes after a series' occurrence (nil for a single
  /// line).
  func sharedDelivery(_ pending: PendingMessage, at now: Timestamp, next: SeriesNext?)
    -> [JournalRecord]?
  {
    guard isShared(pending.target), let node = federation.settings?.node,
      let id = takeFreshID()
    else { return nil }
    let series = scheduler.series(pending.id)
    let line = OutboxLine(
      id: id, node: node, target: pending.target, author: pending.author, time: now,
      text: pending.text, series: series == nil ? pending.replacing : pending.id)
    if let series, case .paused = next {
      return [.series(pending, series.pausedAfterDelivery(due: pending.due)), .outbox(line)]
    }
    guard var series, case .due(let due) = next, let next = due else {
      return [.cancel(pending.id, at: now), .outbox(line)]
    }
    var advanced = pending
    advanced.due = next
    series.done += 1
    series.forgetSkipped(before: next)
    return [.series(advanced, series), .outbox(line)]
  }

  /// A line read from the stream. Lines at or before the last sequence its
  /// reader applied, and a line whose (node, id) was applied before (published
  /// twice), are skipped; anything else is journaled, enters the room's
  /// history and is sent to this host's members but the session that said
  /// it. A line no conversation here takes, or one ignored, moves nothing
  /// but the sequence read. Returns false when the journal could not be
  /// written: the link must then read again from ``streamSequence``.
  @discardableResult
  public func receive(_ line: StreamLine) -> Bool {
    inStep(.other) { apply(line) }
  }

  private func apply(_ line: StreamLine) -> Bool {
    guard let settings = federation.settings,
      line.position.sequence > federation.sequences[line.position.reader ?? .rooms]
    else {
      return true
    }
    let position = line.position
    let seen = federation.seen[position.node]?.contains(position.origin) ?? false
    let own = position.node == settings.node
    let author = own ? line.user : "\(line.user)@\(position.node)"
    var records: [JournalRecord] = []
    var message: StoredMessage?
    // A node vouches for its own users only: an author that already names
    // a node (`root@h1` published by h2) is another node's user, and the
    // line is passed over like one this host does not share.
    // Remote text is held to a local SAY's length (chatbroker(8),
    // "FEDERATION"); the journal's rules have already checked the rest.
    let fits = line.text.utf8.count <= limits.lineBytes
    if !fits {
      log.warning(
        "a line from the stream is longer than --max-line-bytes: ignored",
        [
          "node": position.node, "stream_seq": "\(position.sequence)",
          "bytes": "\(line.text.utf8.count)",
        ])
    }
    if !seen, fits, UserName.isValid(line.user),
      let target = localTarget(line.target, fromOwnNode: own, settings: settings),
      let id = FederatedID.id(forSequence: federation.idOffset + position.sequence)
    {
      let stored = StoredMessage(
        id: id, time: line.shownTime, author: author, text: line.text, series: line.series)
      message = stored
      if let newRoom = newRoomRecord(for: target) { records.append(newRoom) }
      records.append(.remote(stored, target: target, position: position))
    } else if seen && own {
      // This node's line back again (published twice, or again into a
      // new stream): it leaves the outbox, and is shown no second time.
      records.append(.streamPosition(position))
    } else {
      records.append(.streamSequence(position.sequence, reader: position.reader))
    }
    do {
      try append(records)
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
    switch record {
    case .outbox(let line):
      let knew = federation.knowsOwnIDs
      noteTaken(line.id)
      if line.node == federation.settings?.node { federation.knowsOwnIDs = true }
      let unchanged = FederationUndo.advanced(
        sequence: federation.sequences, seen: nil, left: nil, knewOwnIDs: knew)
      if line.standing == .published {
        keepPublished(line)
        return .federated(unchanged, message: nil, newRoom: nil)
      }
      // A compacted journal lists the ids applied before the outbox: a
      // waiting line among them has come back since.
      let applied = federation.seen[line.node]?.contains(line.id) == true
      if applied && line.standing == .waiting { return .nothing }
      federation.outbox.append(line)
      return .federated(.appended(knewOwnIDs: knew), message: nil, newRoom: nil)
    case .remote(let message, let target, let position):
      let undo = advance(to: position)
      let added = addMessage(message, to: target)
      return .federated(
        undo, message: (added.conversation, added.evicted, added.newHistory),
        newRoom: added.newRoom)
    case .streamPosition(let position):
      return .federated(advance(to: position), message: nil, newRoom: nil)
    case .streamSequence(let sequence, let reader):
      let undo = FederationUndo.advanced(
        sequence: federation.sequences, seen: nil, left: nil, knewOwnIDs: federation.knowsOwnIDs)
      federation.sequences.advance(reader, to: sequence)
      return .federated(undo, message: nil, newRoom: nil)
    case .streamCreated(let created, let offset):
      let before = federation.restorable
      if let old = federation.streamCreated, old != created {
        federation.sequences = StreamSequences()
        publishAgain()
      }
      federation.streamCreated = created
      federation.idOffset = offset
      return .federated(.whole(before), message: nil, newRoom: nil)
    case .streamLastID(let node, let id):
      guard node == federation.settings?.node else { return .nothing }
      let before = federation.restorable
      noteTaken(id)
      federation.knowsOwnIDs = true
      return .federated(.whole(before), message: nil, newRoom: nil)
    default:
      return .nothing
    }
  }

  /// The stream reached `position`: its (node, id) is applied, and the
  /// line of this host's own outbox with that id, if any, has been
  /// published; an id of this node in the stream is never handed out
  /// again. Returns how to undo it.
  private func advance(to position: StreamPosition) -> FederationUndo {
    let sequence = federation.sequences
    let knew = federation.knowsOwnIDs
    federation.sequences.advance(position.reader, to: position.sequence)
    let insertion = federation.seen[position.node, default: SeenIDs()].insert(position.origin)
    let seen = insertion.map { (node: position.node, insertion: $0) }
    guard position.node == federation.settings?.node else {
      return .advanced(sequence: sequence, seen: seen, left: nil, knewOwnIDs: knew)
    }
    federation.knowsOwnIDs = true
    noteTaken(position.origin)
    // The outbox is in id order and published in that order: the line
    // that came back is almost always the first.
    guard let index = federation.outbox.firstIndex(where: { $0.id == position.origin }) else {
      return .advanced(sequence: sequence, seen: seen, left: nil, knewOwnIDs: knew)
    }
    let line = federation.outbox[index]
    if index == 0 {
      federation.outbox.removeFirst()
    } else {
      federation.outbox.remove(at: index)
    }
    var published = line
    published.standing = .published
    keepPublished(published)
    return .advanced(sequence: sequence, seen: seen, left: (index, line), knewOwnIDs: knew)
  }

  /// A federation record undone (``rollBack(_:)``): the published lines
  /// stay as they are (``FederationState/restorable``).
  func undoFederated(_ undo: FederationUndo) {
    switch undo {
    case .whole(let before):
      let (settings, live, published) =
        (federation.settings, federation.live, federation.published)
      federation = before
      (federation.settings, federation.live, federation.published) = (settings, live, published)
    case .appended(let knew):
      _ = federation.outbox.popLast()
      federation.knowsOwnIDs = knew
    case .advanced(let sequence, let seen, let left, let knew):
      federation.sequences = sequence
      if let seen { federation.seen[seen.node]?.undo(seen.insertion) }
      if let left {
        if left.position == 0 {
          federation.outbox.prepend(left.line)
        } else {
          federation.outbox.insert(left.line, at: left.position)
        }
      }
      federation.knowsOwnIDs = knew
    }
  }

  /// Keeps `line` among this node's latest published lines, dropping the
  /// oldest beyond their number. Lines come back in id order; one kept
  /// already (read again after a rollback) is not kept twice.
  private func keepPublished(_ line: OutboxLine) {
    let published = federation.published
    if let last = published.last, line.id <= last.id,
      published.reversed().contains(where: { $0.id == line.id })
    {
      return
    }
    federation.published.append(line)
    let excess = federation.published.count - FederationState.publishedCapacity
    if excess > 0 { federation.published.removeFirst(excess) }
  }

  /// The stream was lost or reset: this node's latest published lines go
  /// back into the outbox, before the lines still waiting, in id order.
  private func publishAgain() {
    let waiting = Set(federation.outbox.map(\.id))
    let again = federation.published.filter { !waiting.contains($0.id) }.map { line in
      var line = line
      line.standing = .again
      return line
    }
    federation.published = FIFOQueue()
    var outbox = FIFOQueue<OutboxLine>()
    for line in (again + federation.outbox).sorted(by: { $0.id < $1.id }) { outbox.append(line) }
    federation.outbox = outbox
  }
}

extension EngineSnapshot {
  /// How far each reader applied the stream, the ids applied from each
  /// node (as stream records at sequence 0, which move no reader), this
  /// node's latest published lines and the outbox, for a compacted
  /// journal: this node's own ids among them keep it knowing which ids it
  /// used.
  func forEachFederationRecord(_ body: (JournalRecord) throws -> Void) rethrows {
    if let created = federation.streamCreated {
      try body(.streamCreated(created, offset: federation.idOffset))
    }
    for reader in StreamReader.allCases where federation.sequences[reader] > 0 {
      try body(.streamSequence(federation.sequences[reader], reader: reader))
    }
    for (node, ids) in federation.seen.sorted(by: { $0.key < $1.key }) {
      for id in ids.order {
        try body(
          .streamPosition(StreamPosition(sequence: 0, node: node, origin: id, reader: nil)))
      }
    }
    for line in Array(federation.published) + Array(federation.outbox) {
      try body(.outbox(line))
    }
  }
}

import LineProtocol

extension Engine {
  /// Changes the state as a journal record says. Live requests and start-up
  /// replay both come through here, so the journal replays to exactly the
  /// state that wrote it. A live record is also remembered with how to undo
  /// it until the shell says it is synced (see ``rollBack(_:)``).
  func apply(_ record: JournalRecord) {
    let undo = change(record)
    if unsynced.isTracking { unsynced.push(undo) }
  }

  private func change(_ record: JournalRecord) -> UnsyncedRecords.Undo {
    switch record {
    case .header(let next):
      nextID = max(nextID, next.value)
      return .nothing
    case .room(let name, let created):
      guard rooms[name] == nil else { return .nothing }
      addRoom(name, created: created)
      return .room(name)
    case .message(let message, let target):
      noteTaken(message.id)
      let added = addMessage(message, to: target)
      return .message(
        added.conversation, evicted: added.evicted, newHistory: added.newHistory,
        newRoom: added.newRoom)
    case .schedule(let pending):
      noteTaken(pending.id)
      let replaced = scheduler[pending.id]
      scheduler.insert(pending)
      return .schedule(pending, replaced: replaced)
    case .cancel(let id, _):
      let series = scheduler.series(id)
      guard let cancelled = scheduler.remove(id) else { return .nothing }
      var forgotten: Room?
      if case .room(let name) = cancelled.target { forgotten = forgetIfUnused(name) }
      return .cancel(cancelled, series: series, forgotten: forgotten)
    case .delivery(let id, let time):
      guard let pending = scheduler.remove(id) else { return .nothing }
      let message = StoredMessage(
        id: id, time: time, author: pending.author, text: pending.text, series: pending.replacing)
      let conversation = ConversationKey(target: pending.target, author: pending.author)
      let (evicted, newHistory) = appendHistory(message, to: conversation)
      return .delivery(pending, evicted: evicted, newHistory: newHistory)
    case .series, .occurrence, .reschedule, .edit, .skip:
      return applySeriesOrChange(record)
    case .member(let user, let room, let time):
      guard !isHolder(user, of: room) else { return .nothing }
      var newRoom: RoomName?
      if rooms[room] == nil {
        addRoom(room, created: time)
        newRoom = room
      }
      addHolder(user, of: room, since: time)
      return .member(user, room, newRoom: newRoom)
    case .leave(let user, let room, _, let by):
      // Removed by an operator: no longer invited either (a `leave`
      // without `by`, as every one before 1.5, leaves the invitation).
      let uninvited = by != nil && rooms[room]?.access?.invited.remove(user) != nil
      guard let since = roomsByUser[user]?[room] else {
        return uninvited ? .uninvite(room, user) : .nothing
      }
      removeHolder(user, of: room)
      return .leave(
        user, room, since: since, forgotten: forgetIfUnused(room), uninvited: uninvited)
    case .seen(let user, let room, let id, let time):
      let before = seenUntilByUser[user]?[room]
      setSeen((id, time), of: user, in: room)
      return .seen(user, room, before: before)
    case .read(let user, let target, let id, let time):
      let conversation = ConversationKey(target: target, author: user)
      let before = readMarkers[user]?[conversation]
      setMarker(marker(for: id, in: conversation, at: time), of: user, in: conversation)
      return .read(user, conversation, before: before)
    case .redact(let target, let id, let user, _):
      guard let (conversation, sequence, before) = applyRedaction(target, id: id, user: user)
      else { return .nothing }
      return .changedMessage(conversation, sequence: sequence, before: before)
    case .amend(let target, let id, let user, _, let text):
      guard let (conversation, sequence, before) = applyAmendment(target, id: id, user: user, text)
      else { return .nothing }
      return .changedMessage(conversation, sequence: sequence, before: before)
    case .react(let target, let id, let user, let reaction, let removed):
      guard
        let (conversation, sequence, before) = applyReaction(
          target, id: id, user: user, reaction, removed: removed)
      else { return .nothing }
      return .changedMessage(conversation, sequence: sequence, before: before)
    case .topic(let name, let text, let user, let time):
      guard rooms[name] != nil else { return .nothing }
      let before = changeTopic(name, text: text, user: user, at: time)
      return .topic(name, before: before, forgotten: forgetIfUnused(name))
    case .access(let name, let restriction, let user, let time):
      guard let modes = rooms[name]?.modes else { return .nothing }
      let before = changeAccess(name, restriction, user: user, at: time)
      return .access(name, before: before, modes: modes, forgotten: forgetIfUnused(name))
    case .invite(let name, let user, _):
      guard rooms[name]?.access?.invited.insert(user).inserted == true else { return .nothing }
      return .invite(name, user)
    case .mode(let name, let change, let user, let time):
      guard let before = changeModes(name, change, user: user, at: time) else { return .nothing }
      return .modes(name, before: before)
    case .outbox, .remote, .streamPosition, .streamSequence, .streamLastID, .streamCreated:
      return applyFederated(record)
    case .webToken, .webRevoke:
      return applyWebDoor(record)
    }
  }

  func noteTaken(_ id: MessageID) {
    // Replayed ids are at most MessageID.maximumValue: the +1 cannot overflow.
    if id.value >= nextID && id.value < FederatedID.base {
      nextID = min(id.value, MessageID.maximumValue) + 1
    }
  }

  private static func newHistory(_ limits: Limits, deferringWords: Bool, _ made: inout Bool)
    -> History
  {
    made = true
    return History(
      capacity: limits.historyPerConversation, byteCapacity: limits.historyBytesPerConversation,
      indexWordsLater: deferringWords)
  }

  /// A message enters its conversation's history, one said here (a
  /// `message` record) and one read from the stream (a `remote` record)
  /// alike (chatbroker(8), "JOURNAL FORMAT"); a room it names that is not
  /// there yet is created at the message's time. Returns what undoing it
  /// takes.
  func addMessage(_ message: StoredMessage, to target: Target) -> (
    conversation: ConversationKey, evicted: DroppedMessages, newHistory: Bool, newRoom: RoomName?
  ) {
    var newRoom: RoomName?
    if case .room(let name) = target, rooms[name] == nil {
      addRoom(name, created: message.time)
      newRoom = name
    }
    let conversation = ConversationKey(target: target, author: message.author)
    let (evicted, newHistory) = appendHistory(message, to: conversation)
    return (conversation, evicted, newHistory, newRoom)
  }

  func appendHistory(
    _ message: StoredMessage, to conversation: ConversationKey
  ) -> (evicted: DroppedMessages, newHistory: Bool) {
    // One lookup, not three: the key hashes a room name or two user names,
    // and every message of a replay comes here.
    var newHistory = false
    let evicted = histories[
      conversation,
      default: Self.newHistory(limits, deferringWords: replayDefersWords, &newHistory)
    ].append(message)
    if newHistory { addDirectConversation(conversation) }
    return (evicted, newHistory)
  }

  /// Start-up: one record of the journal, in order.
  public func replay(_ record: JournalRecord) {
    replayDefersWords = true
    _ = change(record)
  }

  /// After a failed sync, when the records cannot be rolled back one by one:
  /// forget the durable state, to be replayed from the file again. Sessions
  /// and the rooms people are in stay; ids already handed out are never
  /// reused.
  public func resetDurableState() {
    histories.removeAll()
    roomsByUser.removeAll()
    holdersByRoom.removeAll()
    readMarkers.removeAll()
    conversationsByUser.removeAll()
    scheduler = Scheduler()
    rooms = rooms.filter { !$0.value.connections.isEmpty }.mapValues { room in
      var kept = room
      kept.topic = nil
      kept.access = nil
      kept.modes = RoomModes()
      return kept
    }
    privateRooms.removeAll()
    guardedRooms.removeAll()
    webTokens = WebTokens()
    resetRoomBookkeeping()
    armedDue = nil
    unsynced.removeAll()
  }

  /// Start-up is over: arm the timer, so that what fell due while the broker
  /// was down is delivered right away, in due order.
  public func finishReplay() {
    forgetUnusedRooms()
    reportSparseRules()
    rearmTimer()
    queueWordIndexing()
  }

  /// A series the journal kept whose rule is too sparse to expand within
  /// the budget (written before there was one): said in the log, and kept
  /// as it is. Its due occurrence goes out; finding the one after it
  /// costs more than a step may, so it is then paused (chatbroker(8),
  /// LOGGING). Nothing is expanded here: a start-up costs no more for it.
  private func reportSparseRules() {
    for (id, series) in scheduler.allSeries.sorted(by: { $0.key < $1.key })
    where !series.paused && series.rule.isTooSparse {
      log.warning(
        "series rule over budget",
        [
          "series": "\(id)", "user": scheduler[id]?.author ?? "",
          "steps": "\(RecurrenceBudget.stepsPerRequest)", "rule": series.rule.description,
        ])
    }
  }

  /// What a compacted journal must hold to replay to the present state. The
  /// parts are value types, so taking a snapshot copies nothing until the
  /// engine next changes them; the records can be written on another thread.
  public func snapshot() -> EngineSnapshot {
    EngineSnapshot(
      nextID: MessageID(value: nextID),
      rooms: rooms.filter { !isUnused($0.key) }.mapValues(\.created),
      histories: histories, pending: scheduler.all, series: scheduler.allSeries,
      roomsByUser: roomsByUser, readMarkers: readMarkers, federation: federation.durable,
      topics: rooms.compactMapValues(\.topic), accesses: rooms.compactMapValues(\.access),
      modes: rooms.compactMapValues { $0.modes.isEmpty ? nil : $0.modes },
      webTokens: webTokensToKeep(at: clock.now),
      seen: seenUntilByUser.mapValues { $0.filter { rooms[$0.key] != nil && !isUnused($0.key) } }
        .filter { !$0.value.isEmpty })
  }
}

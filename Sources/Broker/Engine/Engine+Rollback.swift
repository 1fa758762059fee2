import LineProtocol

extension Engine {
  /// The shell syncs the journal and tells the engine how far: from now on
  /// every record is remembered, with how to undo it, until it is synced.
  public func trackUnsyncedRecords() {
    unsynced.isTracking = true
  }

  /// Records applied since the last ``recordsSynced(_:)``.
  public var unsyncedRecordCount: Int { unsynced.count }

  /// The oldest `count` unsynced records reached stable storage.
  public func recordsSynced(_ count: Int) {
    unsynced.confirm(count)
  }

  /// A sync failed and the journal was cut back: undoes the newest `count`
  /// records, newest first, so the state is what the journal now replays
  /// to. A room whose creation is undone stays in memory while people are
  /// in it, exactly like a room that was only ever joined: a restart forgets
  /// both (see Engine+Rooms), so its record need not be written again.
  /// Sessions stay, and ids already handed out are never reused.
  public func rollBack(_ count: Int) {
    for _ in 0..<count {
      guard let undo = unsynced.popLast() else { break }
      switch undo {
      case .nothing:
        break
      case .room(let name):
        forgetIfUnused(name)
      case .message(let conversation, let evicted, let newHistory, let newRoom):
        undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        if let newRoom { forgetIfUnused(newRoom) }
      case .schedule(let message, let replaced):
        scheduler.remove(message.id)
        if let replaced { scheduler.insert(replaced) }
      case .cancel(let message):
        scheduler.insert(message)
      case .delivery(let message, let evicted, let newHistory):
        let conversation = ConversationKey(target: message.target, author: message.author)
        undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        scheduler.insert(message)
      case .pendingChange(let id, _, let before, let beforeSeries, let delivered, let ended):
        if let (conversation, evicted, newHistory) = delivered {
          undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        }
        if ended { scheduler.forgetEnded(id) }
        scheduler.remove(id)
        if let before { scheduler.insert(before, series: beforeSeries) }
      case .member(let user, let room, let newRoom):
        // The JOIN that made the room the user's is answered STORAGE: its
        // sessions leave the room again, as if it had never been joined.
        removeHolder(user, of: room)
        for connection in rooms[room]?.connections ?? []
        where sessions[connection]?.user == user {
          sessions[connection]?.rooms.remove(room)
          leave(room, connection: connection, user: user)
        }
        if let newRoom { forgetIfUnused(newRoom) }
      case .leave(let user, let room, let since, let forgotten):
        if let forgotten, rooms[room] == nil { addRoom(room, created: forgotten) }
        addHolder(user, of: room, since: since)
      case .read(let user, let conversation, let before):
        setMarker(before, of: user, in: conversation)
      case .redact(let conversation, let sequence, let before):
        histories[conversation]?.replace(at: sequence, with: before)
      case .topic(let name, let before, let forgotten):
        if let forgotten, rooms[name] == nil {
          addRoom(name, created: forgotten, topic: before)
        } else {
          rooms[name]?.topic = before
        }
        forgetIfUnused(name)
      case .access(let name, let before, let modes, let forgotten):
        if let forgotten, rooms[name] == nil { addRoom(name, created: forgotten) }
        setAccess(before, of: name)
        rooms[name]?.modes = modes
        forgetIfUnused(name)
      case .invite(let name, let user):
        rooms[name]?.access?.invited.remove(user)
      case .modes(let name, let before):
        rooms[name]?.modes = before
      case .federated(let undo, let message, let newRoom):
        if let (conversation, evicted, newHistory) = message {
          undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        }
        if let newRoom { forgetIfUnused(newRoom) }
        undoFederated(undo)
      }
    }
    rearmTimer()
  }

  private func undoHistory(
    _ conversation: ConversationKey, evicted: DroppedMessages, newHistory: Bool
  ) {
    histories[conversation]?.removeNewest(restoring: evicted)
    if newHistory && histories[conversation]?.count == 0 {
      histories[conversation] = nil
      removeDirectConversation(conversation)
    }
  }

  /// A query whose reply showed state that a failed sync then rolled back
  /// (its lines were ``LineKind/answer(_:)`` and ``LineKind/revealing``):
  /// answers it again from the state as it now is.
  public func answerAgain(_ request: Request, for connection: ConnectionID) {
    guard let user = sessions[connection]?.user else { return }
    switch request {
    case .history(let target, let count, let anchor):
      history(target, count: count, anchor: anchor, connection: connection, user: user)
    case .search(let target, let count, let before, let words):
      search(target, count: count, before: before, words: words, connection: connection, user: user)
    case .scheduled(let target):
      listScheduled(target, connection: connection, user: user)
    case .upcoming(let id, let count):
      listUpcoming(id, count: count, connection: connection, user: user)
    case .rooms(let after):
      listRooms(after: after, connection: connection, user: user)
    case .conversations:
      listConversations(connection: connection, user: user)
    case .topic(let room):
      showTopic(room, connection: connection, user: user)
    case .access(let room):
      showAccess(room, connection: connection, user: user)
    default:
      break
    }
  }

  /// The kinds of a list's items and of its final reply: neutral unless
  /// the list shows what an unsynced record changed.
  func listKinds(answering request: Request, showsUnsynced: Bool) -> (
    item: LineKind, end: LineKind
  ) {
    showsUnsynced ? (.revealing, .answer(request)) : (.neutral, .neutral)
  }

  /// Whether `range` of a conversation's history holds a message whose
  /// record is not synced yet (those are its newest).
  func showsUnsynced(_ range: Range<Int>, of conversation: ConversationKey) -> Bool {
    guard let unsyncedCount = unsynced.messages[conversation], !range.isEmpty else { return false }
    let firstUnsynced = (histories[conversation]?.endSequence ?? 0) - unsyncedCount
    return range.upperBound > firstUnsynced
  }

  /// Whether `ROOMS` would show a room whose creation is not synced yet.
  var roomsShowUnsynced: Bool { unsynced.rooms > 0 || !unsynced.topics.isEmpty }

  /// Whether `SCHEDULED` would show a change not synced yet.
  func scheduledShowsUnsynced(for user: String) -> Bool { unsynced.pending[user] != nil }
}

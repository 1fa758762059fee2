import LineProtocol

extension Engine {
  /// The shell syncs the journal and tells the engine how far: from now on
  /// every record is remembered, with how to undo it, until it is synced.
  public func trackUnsyncedRecords() {
    unsynced.isTracking = true
  }

  /// Records applied since the last ``recordsSynced(_:)``.
  public var unsyncedRecordCount: Int { unsynced.count }

  /// Serves one request so that a rollback of its records also undoes
  /// the rooms it made sessions enter or leave
  /// (``UnsyncedRecords/SessionMove``): whatever handler moved them, a
  /// request answered `STORAGE` changed nobody's rooms.
  func undoable(_ serve: () -> Void) {
    guard unsynced.isTracking else { return serve() }
    unsynced.beginRequest()
    serve()
    unsynced.endRequest()
  }

  /// The oldest `count` unsynced records reached stable storage.
  public func recordsSynced(_ count: Int) {
    unsynced.confirm(count)
  }

  /// A sync failed and the journal was cut back: undoes the newest `count`
  /// records, newest first, so the state is what the journal now replays
  /// to. Sessions stay, back in the rooms the requests of those records
  /// took them out of and out of those they put them in; a room that is no
  /// longer a user's loses the user's sessions (``leaveRoomsNoLongerHeld(_:)``),
  /// and with them, when nothing else keeps it, a room whose creation is
  /// undone. Ids already handed out are never reused.
  public func rollBack(_ count: Int) {
    inStep(.other) { undo(count) }
  }

  private func undo(_ count: Int) {
    var unheld: [(user: String, room: RoomName)] = []
    for _ in 0..<count {
      guard let (undo, moves) = unsynced.popLast() else { break }
      // After the request's first record: the rooms it names are back.
      defer { undoMoves(moves) }
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
      case .cancel(let message, let series, let forgotten):
        if let forgotten, case .room(let name) = message.target { restoreRoom(name, forgotten) }
        scheduler.insert(message, series: series)
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
        // session leaves the room again with its moves.
        removeHolder(user, of: room)
        unheld.append((user, room))
        if let newRoom { forgetIfUnused(newRoom) }
      case .leave(let user, let room, let since, let forgotten, let uninvited):
        if let forgotten { restoreRoom(room, forgotten) }
        addHolder(user, of: room, since: since)
        if uninvited { rooms[room]?.access?.invited.insert(user) }
      case .uninvite(let name, let user):
        rooms[name]?.access?.invited.insert(user)
      case .read(let user, let conversation, let before):
        setMarker(before, of: user, in: conversation)
      case .seen(let user, let room, let before):
        setSeen(before, of: user, in: room)
      case .changedMessage(let conversation, let sequence, let before):
        histories[conversation]?.replace(at: sequence, with: before)
      case .topic(let name, let before, let forgotten):
        if let forgotten { restoreRoom(name, forgotten) }
        rooms[name]?.topic = before
        forgetIfUnused(name)
      case .access(let name, let before, let modes, let forgotten):
        if let forgotten { restoreRoom(name, forgotten) }
        setAccess(before, of: name)
        rooms[name]?.modes = modes
        noteGuard(of: name)
        forgetIfUnused(name)
      case .invite(let name, let user):
        rooms[name]?.access?.invited.remove(user)
      case .modes(let name, let before):
        rooms[name]?.modes = before
        noteGuard(of: name)
      case .webToken, .webRevoke:
        undoWebDoor(undo)
      case .federated(let undo, let message, let newRoom):
        if let (conversation, evicted, newHistory) = message {
          undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        }
        if let newRoom { forgetIfUnused(newRoom) }
        undoFederated(undo)
      }
    }
    leaveRoomsNoLongerHeld(unheld)
    rearmTimer()
  }

  /// After a rollback took rooms from users (`member` records undone): a
  /// session of theirs still in one whose JOIN came after the record and
  /// wrote nothing, as the room was the user's by it, leaves too, unless
  /// an older record makes the room the user's again (a PART undone with
  /// it). Kept there, it would keep in memory a room a restart does not
  /// have, whose creation may be undone as well.
  private func leaveRoomsNoLongerHeld(_ unheld: [(user: String, room: RoomName)]) {
    for (user, room) in unheld where !isHolder(user, of: room) {
      for connection in (rooms[room]?.connections ?? []).sorted()
      where sessions[connection]?.user == user {
        sessions[connection]?.rooms.remove(room)
        leave(room, connection: connection, user: user)
      }
    }
  }

  /// The rooms one request made sessions enter or leave, back as they
  /// were, newest first; a session gone since, or back in the room by a
  /// request of its own, stays as it is. Nobody is told here: what
  /// becomes of the lines that showed the moves (a KICK's, a PART's) is
  /// the shell's to settle with the records' other lines.
  private func undoMoves(_ moves: [UnsyncedRecords.SessionMove]) {
    for move in moves.reversed() {
      guard let session = sessions[move.connection] else { continue }
      if move.entered, session.rooms.contains(move.room) {
        sessions[move.connection]?.rooms.remove(move.room)
        leave(move.room, connection: move.connection, user: move.user, announced: false)
      } else if !move.entered, !session.rooms.contains(move.room), rooms[move.room] != nil {
        enter(move.room, connection: move.connection, user: move.user)
      }
    }
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

  /// A request whose reply waited for records that a failed sync then
  /// rolled back, and that wrote nothing itself (its final line was
  /// ``LineKind/answer(_:)``): answers it again from the state as it now
  /// is, as if it had just arrived. False when the connection is no
  /// session any more (its client went): nothing was answered.
  @discardableResult
  public func answerAgain(_ request: Request, for connection: ConnectionID) -> Bool {
    guard sessions[connection] != nil else { return false }
    receive(request, from: connection)
    return true
  }
}

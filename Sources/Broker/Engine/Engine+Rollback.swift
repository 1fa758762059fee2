import LineProtocol

/// The records the engine applied since the last sync the journal
/// committer confirmed (its durable count decides what is durable; this
/// follows it), oldest first, each with what undoing it takes. With them a
/// failed sync is rolled back in memory, record by record, instead of
/// replaying the whole journal while everyone waits; and the engine knows
/// which replies would show state that is not durable yet.
struct UnsyncedRecords {
  /// How to take one record's change back out of the state.
  enum Undo {
    case nothing
    case room(RoomName)
    case message(ConversationKey, evicted: StoredMessage?, newHistory: Bool, newRoom: RoomName?)
    case schedule(PendingMessage, replaced: PendingMessage?)
    case cancel(PendingMessage)
    case delivery(PendingMessage, evicted: StoredMessage?, newHistory: Bool)
    /// A series started, fired or ended, or a pending message was
    /// rescheduled or edited: what it was before (nil when it is new) and,
    /// for an occurrence, the message it added to history.
    case pendingChange(
      MessageID, author: String, before: PendingMessage?, beforeSeries: Series?,
      delivered: (ConversationKey, evicted: StoredMessage?, newHistory: Bool)?, ended: Bool)
    /// A room became the user's; perhaps the room was created with it.
    case member(String, RoomName, newRoom: RoomName?)
    /// A room stopped being the user's (theirs since `since`); `forgotten`
    /// is the creation time of the room when that left it unused.
    case leave(String, RoomName, since: Timestamp, forgotten: Timestamp?)
    /// A read marker moved; `before` is where it was.
    case read(String, ConversationKey, before: ReadMarker?)
    /// A shared room's outbox or stream position changed (`before`), and
    /// perhaps a line from the stream entered a history (Engine+Federation).
    case federated(
      FederationState, message: (ConversationKey, evicted: StoredMessage?, newHistory: Bool)?,
      newRoom: RoomName?, outbox: Bool)
  }

  /// Off for an engine alone (tests, compaction's scratch copy) and with
  /// `--no-sync`: then no record ever waits for a sync.
  var isTracking = false
  private var undos: [Undo] = []
  private var start = 0
  /// Unsynced messages per conversation; they are always its newest.
  private(set) var messages: [ConversationKey: Int] = [:]
  /// Unsynced changes to each author's pending messages.
  private(set) var pending: [String: Int] = [:]
  /// Unsynced room creations.
  private(set) var rooms = 0

  var count: Int { undos.count - start }

  mutating func push(_ undo: Undo) {
    undos.append(undo)
    tally(undo, 1)
  }

  /// The oldest `synced` records are durable: forget how to undo them.
  /// Messages to one conversation come in runs (a busy room's lines between
  /// two syncs): their count is taken off once per run, one hash instead
  /// of one per message.
  mutating func confirm(_ synced: Int) {
    let end = start + max(0, min(synced, count))
    var run: (conversation: ConversationKey, count: Int)?
    for index in start..<end {
      guard case .message(let conversation, _, _, newRoom: nil) = undos[index] else {
        tally(undos[index], -1)
        continue
      }
      if run?.conversation == conversation {
        run?.count += 1
      } else {
        if let run { tally(run.conversation, -run.count) }
        run = (conversation, 1)
      }
    }
    if let run { tally(run.conversation, -run.count) }
    start = end
    if start == undos.count {
      undos.removeAll(keepingCapacity: true)
      start = 0
    } else if start > 4096 && start * 2 > undos.count {
      undos.removeFirst(start)
      start = 0
    }
  }

  mutating func popLast() -> Undo? {
    guard count > 0 else { return nil }
    let undo = undos.removeLast()
    tally(undo, -1)
    return undo
  }

  mutating func removeAll() {
    undos.removeAll()
    start = 0
    messages.removeAll()
    pending.removeAll()
    rooms = 0
  }

  private mutating func tally(_ undo: Undo, _ delta: Int) {
    switch undo {
    case .nothing, .leave, .read:
      break
    case .room:
      rooms += delta
    case .member(_, _, let newRoom):
      if newRoom != nil { rooms += delta }
    case .message(let conversation, _, _, let newRoom):
      tally(conversation, delta)
      if newRoom != nil { rooms += delta }
    case .schedule(let message, _), .cancel(let message):
      tally(author: message.author, delta)
    case .delivery(let message, _, _):
      tally(author: message.author, delta)
      tally(ConversationKey(target: message.target, author: message.author), delta)
    case .pendingChange(_, let author, _, _, let delivered, _):
      tally(author: author, delta)
      if let (conversation, _, _) = delivered { tally(conversation, delta) }
    case .federated(_, let message, let newRoom, _):
      if let (conversation, _, _) = message { tally(conversation, delta) }
      if newRoom != nil { rooms += delta }
    }
  }

  private mutating func tally(_ conversation: ConversationKey, _ delta: Int) {
    Self.tally(conversation, delta, in: &messages)
  }

  private mutating func tally(author: String, _ delta: Int) {
    Self.tally(author, delta, in: &pending)
  }

  /// Adds `delta` to `key`'s count, which goes when it reaches 0: one
  /// hash of the key either way.
  private static func tally<Key: Hashable>(_ key: Key, _ delta: Int, in counts: inout [Key: Int]) {
    guard delta <= 0 else {
      counts[key, default: 0] += delta
      return
    }
    guard let index = counts.index(forKey: key) else { return }
    let total = counts.values[index] + delta
    if total > 0 { counts.values[index] = total } else { counts.remove(at: index) }
  }
}

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
      case .federated(let before, let message, let newRoom, _):
        if let (conversation, evicted, newHistory) = message {
          undoHistory(conversation, evicted: evicted, newHistory: newHistory)
        }
        if let newRoom { forgetIfUnused(newRoom) }
        let settings = federation.settings
        federation = before
        federation.settings = settings
      }
    }
    rearmTimer()
  }

  private func undoHistory(
    _ conversation: ConversationKey, evicted: StoredMessage?, newHistory: Bool
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
    case .scheduled(let target):
      listScheduled(target, connection: connection, user: user)
    case .rooms(let after):
      listRooms(after: after, connection: connection)
    case .conversations:
      listConversations(connection: connection, user: user)
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
  var roomsShowUnsynced: Bool { unsynced.rooms > 0 }

  /// Whether `SCHEDULED` would show a change not synced yet.
  func scheduledShowsUnsynced(for user: String) -> Bool { unsynced.pending[user] != nil }
}

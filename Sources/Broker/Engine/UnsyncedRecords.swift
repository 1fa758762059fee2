import LineProtocol

/// The records the engine applied since the last sync the journal
/// committer confirmed (its durable count decides what is durable; this
/// follows it), oldest first, each with what undoing it takes. With them a
/// failed sync is rolled back in memory, record by record, instead of
/// replaying the whole journal while everyone waits. (Which lines wait for
/// them is decided elsewhere, for every line alike: Engine+Lines.)
struct UnsyncedRecords {
  /// How to take one record's change back out of the state.
  enum Undo {
    case nothing
    case room(RoomName)
    case message(ConversationKey, evicted: DroppedMessages, newHistory: Bool, newRoom: RoomName?)
    case schedule(PendingMessage, replaced: PendingMessage?)
    /// A pending message or series (`series`: its rule and count) was
    /// cancelled; `forgotten` is its room when that left it unused.
    case cancel(PendingMessage, series: Series?, forgotten: Engine.Room?)
    case delivery(PendingMessage, evicted: DroppedMessages, newHistory: Bool)
    /// A series started, fired or ended, or a pending message was
    /// rescheduled or edited: what it was before (nil when it is new) and,
    /// for an occurrence, the message it added to history.
    case pendingChange(
      MessageID, author: String, before: PendingMessage?, beforeSeries: Series?,
      delivered: (ConversationKey, evicted: DroppedMessages, newHistory: Bool)?, ended: Bool)
    /// A room became the user's; perhaps the room was created with it.
    case member(String, RoomName, newRoom: RoomName?)
    /// A room stopped being the user's (theirs since `since`); `forgotten`
    /// is the room, modes and all, when that left it unused; `uninvited`:
    /// an operator's removal took their invitation too.
    case leave(String, RoomName, since: Timestamp, forgotten: Engine.Room?, uninvited: Bool)
    /// A read marker moved; `before` is where it was.
    case read(String, ConversationKey, before: ReadMarker?)
    /// Where a user's last session left a room moved; `before` is where
    /// it was.
    case seen(String, RoomName, before: (id: MessageID, time: Timestamp)?)
    /// A room's topic changed; `before` is what it was, and `forgotten`
    /// the room when clearing it left the room unused.
    case topic(RoomName, before: RoomTopic?, forgotten: Engine.Room?)
    /// A room's access changed (Engine+Privacy); `before` is what it was,
    /// and `forgotten` the room when making it public left it unused.
    /// `modes`: the room's modes before (who made it private became an
    /// operator).
    case access(RoomName, before: RoomAccess?, modes: RoomModes, forgotten: Engine.Room?)
    /// A room's modes changed (a `mode` record); `before` is what they were.
    case modes(RoomName, before: RoomModes)
    /// A user was invited to a private room they were not invited to.
    case invite(RoomName, String)
    /// An operator's removal took a user's invitation to a room that was
    /// not theirs (a ban of someone invited who never joined).
    case uninvite(RoomName, String)
    /// A message was taken back (`REDACT`), given a new text (`AMEND`),
    /// or a reaction (`REACT`, `UNREACT`); `before` is what it was.
    case changedMessage(ConversationKey, sequence: Int, before: StoredMessage)
    /// A shared room's outbox or stream position changed (`before`), and
    /// perhaps a line from the stream entered a history (Engine+Federation).
    case federated(
      FederationUndo, message: (ConversationKey, evicted: DroppedMessages, newHistory: Bool)?,
      newRoom: RoomName?)
    /// A token of the browser door was made (its hash), and these of its
    /// user's went with it (expired, or the oldest over the limit).
    case webToken(String, removed: [WebTokenGrant])
    /// A user's tokens were revoked.
    case webRevoke([WebTokenGrant])
  }

  /// A session entered (or left) a room while a request that wrote
  /// records was served: not journaled, but undone with the request's
  /// records, so that a request answered `STORAGE` changed nobody's rooms
  /// (a KICK's, a PART's, a JOIN's own session).
  struct SessionMove {
    let connection: ConnectionID
    let room: RoomName
    let user: String
    let entered: Bool
  }

  /// Off for an engine alone (tests, compaction's scratch copy) and with
  /// `--no-sync`: then no record ever waits for a sync.
  var isTracking = false
  private var undos = FIFOQueue<Undo>()
  /// Records confirmed since tracking began: with `undos.count`, the
  /// number of the next record.
  private var confirmedCount = 0
  /// The moves of the requests that wrote records, by the number of each
  /// request's first record: undone after all of its records, once the
  /// rooms they name are back.
  private var movesByRecord: [Int: [SessionMove]] = [:]
  /// The request being served: the number of its first record, and its
  /// moves so far.
  private var request: (firstRecord: Int, moves: [SessionMove])?
  /// Unsynced messages per conversation; they are always its newest. Only
  /// the IRC gateway's `CHATHISTORY TARGETS`, which reads the engine
  /// outside a request, still needs it (Engine+Activity).
  private(set) var messages: [ConversationKey: Int] = [:]

  var count: Int { undos.count }

  /// A request is served from here to ``endRequest()``.
  mutating func beginRequest() {
    request = (confirmedCount + count, [])
  }

  /// A session entered or left a room; kept when the request being
  /// served writes records.
  mutating func noteMove(
    _ connection: ConnectionID, _ room: RoomName, _ user: String, entered: Bool
  ) {
    request?.moves.append(
      SessionMove(connection: connection, room: room, user: user, entered: entered))
  }

  mutating func endRequest() {
    if let request, !request.moves.isEmpty, confirmedCount + count > request.firstRecord {
      movesByRecord[request.firstRecord] = request.moves
    }
    request = nil
  }

  mutating func push(_ undo: Undo) {
    undos.append(undo)
    tally(undo, 1)
  }

  /// The oldest `synced` records are durable: forget how to undo them.
  /// Messages to one conversation come in runs (a busy room's lines between
  /// two syncs): their count is taken off once per run, one hash instead
  /// of one per message.
  mutating func confirm(_ synced: Int) {
    let end = max(0, min(synced, count))
    var run: (conversation: ConversationKey, count: Int)?
    for index in 0..<end {
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
    undos.removeFirst(end)
    confirmedCount += end
    if !movesByRecord.isEmpty { movesByRecord = movesByRecord.filter { $0.key >= confirmedCount } }
  }

  /// The newest record's undo, and the moves of its request when it was
  /// the request's first record.
  mutating func popLast() -> (undo: Undo, moves: [SessionMove])? {
    guard let undo = undos.popLast() else { return nil }
    tally(undo, -1)
    let moves =
      movesByRecord.isEmpty ? nil : movesByRecord.removeValue(forKey: confirmedCount + count)
    return (undo, moves ?? [])
  }

  mutating func removeAll() {
    undos.removeAll()
    movesByRecord.removeAll()
    messages.removeAll()
  }

  /// Counts the messages an undo takes back out of a history.
  private mutating func tally(_ undo: Undo, _ delta: Int) {
    switch undo {
    case .message(let conversation, _, _, _):
      tally(conversation, delta)
    case .delivery(let message, _, _):
      tally(ConversationKey(target: message.target, author: message.author), delta)
    case .pendingChange(_, _, _, _, let delivered?, _):
      tally(delivered.0, delta)
    case .federated(_, let message?, _):
      tally(message.0, delta)
    default:
      break
    }
  }

  private mutating func tally(_ conversation: ConversationKey, _ delta: Int) {
    Self.tally(conversation, delta, in: &messages)
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

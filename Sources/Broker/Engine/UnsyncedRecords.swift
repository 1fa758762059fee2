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
    case message(ConversationKey, evicted: DroppedMessages, newHistory: Bool, newRoom: RoomName?)
    case schedule(PendingMessage, replaced: PendingMessage?)
    case cancel(PendingMessage)
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
    /// is the creation time of the room when that left it unused.
    case leave(String, RoomName, since: Timestamp, forgotten: Timestamp?)
    /// A read marker moved; `before` is where it was.
    case read(String, ConversationKey, before: ReadMarker?)
    /// A room's topic changed; `before` is what it was, and `forgotten`
    /// the room's creation time when clearing it left the room unused.
    case topic(RoomName, before: RoomTopic?, forgotten: Timestamp?)
    /// A room's access changed (Engine+Privacy); `before` is what it was,
    /// and `forgotten` the room's creation time when making it public
    /// left it unused.
    /// `modes`: the room's modes before (who made it private became an
    /// operator).
    case access(RoomName, before: RoomAccess?, modes: RoomModes, forgotten: Timestamp?)
    /// A room's modes changed (a `mode` record); `before` is what they were.
    case modes(RoomName, before: RoomModes)
    /// A user was invited to a private room they were not invited to.
    case invite(RoomName, String)
    /// A message was taken back; `before` is what it was.
    case redact(ConversationKey, sequence: Int, before: StoredMessage)
    /// A shared room's outbox or stream position changed (`before`), and
    /// perhaps a line from the stream entered a history (Engine+Federation).
    case federated(
      FederationUndo, message: (ConversationKey, evicted: DroppedMessages, newHistory: Bool)?,
      newRoom: RoomName?)
  }

  /// Off for an engine alone (tests, compaction's scratch copy) and with
  /// `--no-sync`: then no record ever waits for a sync.
  var isTracking = false
  private var undos = FIFOQueue<Undo>()
  /// Unsynced messages per conversation; they are always its newest.
  private(set) var messages: [ConversationKey: Int] = [:]
  /// Unsynced changes to each author's pending messages.
  private(set) var pending: [String: Int] = [:]
  /// Unsynced room creations.
  private(set) var rooms = 0
  /// Unsynced topic and access changes per room: both show in `ROOMS`.
  private(set) var topics: [RoomName: Int] = [:]

  var count: Int { undos.count }

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
  }

  mutating func popLast() -> Undo? {
    guard let undo = undos.popLast() else { return nil }
    tally(undo, -1)
    return undo
  }

  mutating func removeAll() {
    undos.removeAll()
    messages.removeAll()
    pending.removeAll()
    rooms = 0
    topics.removeAll()
  }

  private mutating func tally(_ undo: Undo, _ delta: Int) {
    switch undo {
    case .nothing, .leave, .read, .redact, .invite, .modes:
      break
    case .access(let name, _, _, _):
      Self.tally(name, delta, in: &topics)
    case .room:
      rooms += delta
    case .topic(let name, _, _):
      Self.tally(name, delta, in: &topics)
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
    case .federated(_, let message, let newRoom):
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

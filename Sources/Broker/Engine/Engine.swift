import Foundation
import LineProtocol

/// The broker's whole behaviour as a deterministic state machine: events go
/// in (a connection opened, a line arrived, the timer fired), effects come
/// out through ``EngineOutput`` and records through ``JournalSink``. It owns no
/// socket and reads time only from its ``WallClock``, so tests drive it on
/// virtual time.
///
/// One owner: the engine runs on one serial executor and takes no locks.
public final class Engine {
  public let limits: Limits
  let clock: WallClock
  let users: UserDirectory
  /// Unix group membership, for rooms private to a group (Engine+Privacy).
  let groups: GroupDirectory
  /// Private: every record goes through ``append(_:)``, which counts it
  /// for the labels of the lines after it.
  private let journal: JournalSink
  let log: Logger
  /// Set once, before the first event (``attach(_:)``). Strong on purpose:
  /// the shell and the engine live and die together, and a weak reference
  /// would send every retain of the shell down the runtime's slow path
  /// (measured: half the fan-out time). Private: lines leave only through
  /// ``send(_:to:)``, which labels each one (Engine+Lines), so no feature
  /// can show an unsynced record by labelling a line itself.
  private var output: EngineOutput?
  /// What the engine is doing, and the records written so far: what the
  /// label of each line it sends is decided from (Engine+Lines).
  var step = Step()
  var recordsWritten = 0

  struct Session {
    let user: String
    var rooms: Set<RoomName> = []
    /// What an IRC `QUIT` said, shown when the session closes.
    var quitReason: String?
    /// The hash of the token a browser showed to open it (Engine+WebDoor):
    /// `WEB REVOKE` ends it.
    var webToken: String?
  }

  struct Room {
    var created: Timestamp
    var connections: Set<ConnectionID> = []
    /// How many of each user's sessions joined: a user joins with the first
    /// and leaves with the last.
    var sessionsByUser: [String: Int] = [:]
    /// Since 1.4, journaled.
    var topic: RoomTopic?
    /// Since 1.4: who may read the room, when it is private; journaled
    /// (chatbroker(7), "Private rooms").
    var access: RoomAccess?
    /// Since 1.5: its modes and operators; journaled (chatbroker(7),
    /// "Moderation").
    var modes = RoomModes()
  }

  var sessions: [ConnectionID: Session] = [:]
  var connectionsByUser: [String: Set<ConnectionID>] = [:]
  var rooms: [RoomName: Room] = [:]
  var histories: [ConversationKey: History] = [:]
  var scheduler = Scheduler()
  /// The next message id to hand out; ids are never reused.
  var nextID: UInt64 = 1
  /// What the timer is armed for, so it is re-armed only on a change.
  var armedDue: Timestamp?
  /// How to undo each record not synced yet (see ``rollBack(_:)``).
  var unsynced = UnsyncedRecords()
  /// Room bookkeeping (see Engine+Rooms): room names in order, for ROOMS;
  /// each user's allowance of new rooms.
  var sortedRoomNames: [RoomName]?
  var roomAllowances: [String: RoomAllowance] = [:]
  var limitLog = LimitLog()
  /// Each user's rooms, with when each became theirs: they stay the user's
  /// across disconnects and restarts until a PART leaves none of the
  /// user's sessions in them (chatbroker(7), "Your rooms and read markers"). Journaled.
  var roomsByUser: [String: [RoomName: Timestamp]] = [:]
  /// The same, by room: whose room each one is.
  var holdersByRoom: [RoomName: Set<String>] = [:]
  /// Each user's read position per conversation. Journaled.
  var readMarkers: [String: [ConversationKey: ReadMarker]] = [:]
  /// Each user's conversations: their rooms, and the direct conversations
  /// with a message (see Engine+Conversations).
  var conversationsByUser: [String: Set<ConversationKey>] = [:]
  /// Shared rooms: the outbox and how far into the stream (Engine+Federation).
  var federation = FederationState()
  /// Each connected user's away text, set over IRC (`AWAY`): one per user,
  /// not per session, and forgotten with the user's last session
  /// (Engine+Presence).
  var awayTexts: [String: String] = [:]
  /// When each writer was last told that a user is away (writer, away
  /// user): once an hour per conversation, not per line.
  var awayToldAt: [String: [String: Timestamp]] = [:]
  /// When each user's last session left each room, the room's newest
  /// message then: what a client that comes back has not seen is after it
  /// (Engine+Presence). Journaled as `seen` records, also for every
  /// session when the broker stops, so a restart keeps it.
  var seenUntilByUser: [String: [RoomName: (id: MessageID, time: Timestamp)]] = [:]
  /// Each connected user's Unix groups, as the ``GroupDirectory`` said
  /// and when it said it (Engine+Visibility): asked again at each new
  /// session, and before a read once ``groupFactsMaximumAge`` old;
  /// forgotten with their last session.
  var groupsByUser: [String: GroupFacts] = [:]
  /// Users whose groups, asked again, lost one: the private rooms they may
  /// no longer read are taken from them once the request or timer step
  /// that found it out is done (``settleLostAccess()``).
  var usersLosingGroups: Set<String> = []
  /// The rooms whose access is restricted (``Room/access`` set), kept by
  /// ``setAccess(_:of:)``: a JOIN asks whether the user holds any, which
  /// a look at each of their rooms made cost as many as they have
  /// (measured: 20,000 JOINs of one user took minutes).
  var privateRooms: Set<RoomName> = []
  /// The rooms some user may not read (private, with a key, secret or with
  /// a ban), kept by ``noteGuard(of:)``: what IRC's `LUSERS` leaves out of
  /// its count for a user is looked for among these alone.
  var guardedRooms: Set<RoomName> = []
  /// What expanding recurrence rules the step being handled (a request,
  /// a timer step) may still do; a new one for each (chatbroker(7),
  /// "Series": what a rule may cost).
  var expansion = RecurrenceBudget()
  /// The steps of expansion the last request took, which the shell
  /// charges to its sender's turn.
  public var expansionSteps: Int { expansion.spent }
  /// Candidates `SEARCH` examined since the shell last took the count
  /// (``takeSearchWork()``), which it charges to the sender's turn.
  var searchWork = 0
  /// Whether histories made by replay leave their words to be indexed
  /// after start-up (``indexWords(messages:)``): from the first replayed
  /// record to ``finishReplay()``.
  var replayDefersWords = false
  /// The histories whose words are not all indexed, in the order they
  /// are to be (Engine+WordIndex).
  var historiesToIndex = FIFOQueue<ConversationKey>()
  /// The browser door's tokens, hashed (Engine+WebDoor). Journaled.
  var webTokens = WebTokens()
  /// The port of the browser door, for the links `WEB` answers; nil when
  /// the broker has none (chatbroker(8), `--web-listen`).
  public var webDoorPort: UInt16?

  public init(
    limits: Limits = Limits(), clock: WallClock, users: UserDirectory, journal: JournalSink,
    groups: GroupDirectory = NoGroups(), log: Logger = Logger(sink: nil)
  ) {
    self.limits = limits
    self.clock = clock
    self.users = users
    self.groups = groups
    self.journal = journal
    self.log = log
  }

  /// Where the engine's lines, closes and timer go from now on.
  public func attach(_ output: EngineOutput) {
    self.output = output
  }

  /// Whether `sink` is this engine's journal.
  public func appends(to sink: JournalSink) -> Bool {
    journal === sink
  }

  // MARK: - Counts for status lines

  public var connectionCount: Int { sessions.count }
  public var roomCount: Int { rooms.count }
  public var pendingCount: Int { scheduler.count }

  // MARK: - Events

  /// A connection from `user` was accepted. Greets it, or refuses it when the
  /// user has too many sessions (then the connection is closed).
  @discardableResult
  public func connect(_ connection: ConnectionID, user: String) -> Bool {
    inStep(.stateless) { greet(connection, user: user) }
  }

  func greet(_ connection: ConnectionID, user: String, webToken: String? = nil) -> Bool {
    let existing = connectionsByUser[user]?.count ?? 0
    guard existing < limits.sessionsPerUser else {
      logLimit("sessions", user: user, [("conn", "\(connection)")])
      send(
        .error(
          verb: "-", code: .limit,
          text: "\(user) already has \(existing) sessions, the most allowed; close one first"),
        to: connection)
      close(connection)
      return false
    }
    sessions[connection] = Session(user: user, webToken: webToken)
    connectionsByUser[user, default: []].insert(connection)
    // A new session asks NSS again at its first need (chatbroker(8),
    // "SECURITY CONSIDERATIONS"): however long another session stays.
    groupsByUser[user]?.askedAt = nil
    send(
      .hello(
        version: chatbrokerVersion, user: user,
        text: "welcome \(user), type HELP for commands"),
      to: connection)
    return true
  }

  /// One request from a connection, already decoded by its wire format's
  /// codec: the engine never sees bytes.
  public func receive(_ request: Request, from connection: ConnectionID) {
    inStep(.request(request, from: connection)) { serve(request, from: connection) }
  }

  private func serve(_ request: Request, from connection: ConnectionID) {
    guard let session = sessions[connection] else { return }
    expansion = RecurrenceBudget()
    // Whatever codec built it: a text the journal would refuse on replay
    // is refused here, never acknowledged (chatbroker(7), "Requests").
    if let text = request.text,
      let problem = MessageText.problem(
        text, verb: request.verb.rawValue, allowingLineFeeds: request.verb == .block)
    {
      send(problem.event, to: connection)
      return
    }
    undoable {
      handle(request, from: connection, user: session.user)
      settleLostAccess()
    }
  }

  /// A request the connection's codec could not read: its error is
  /// answered in order with the connection's other replies.
  public func refuse(_ error: RequestError, from connection: ConnectionID) {
    guard sessions[connection] != nil else { return }
    inStep(.stateless) { send(error.event, to: connection) }
  }

  /// The connection is gone (or its client finished): it leaves its rooms.
  /// When it was the user's last session, everyone who shared a room with
  /// it gets one ``BrokerEvent/quit(user:reason:rooms:)`` (IRC's `QUIT`)
  /// instead of a PART per room; while another session stays, the rooms
  /// it leaves are PARTs, as the user is still connected.
  public func disconnect(_ connection: ConnectionID) {
    inStep(.other) { forget(connection) }
  }

  private func forget(_ connection: ConnectionID) {
    guard let session = sessions.removeValue(forKey: connection) else { return }
    let user = session.user
    let quitting = connectionsByUser[user]?.count == 1
    var quitSeenBy: [ConnectionID: [RoomName]] = [:]
    var seen: [JournalRecord] = []
    for room in session.rooms.sorted() {
      if quitting, let members = rooms[room]?.connections {
        for member in members where member != connection {
          quitSeenBy[member, default: []].append(room)
        }
      }
      if rooms[room]?.sessionsByUser[user] == 1, let record = seenRecord(room, by: user) {
        seen.append(record)
      }
      leave(room, connection: connection, user: user, announced: !quitting)
    }
    for (member, shared) in quitSeenBy.sorted(by: { $0.key < $1.key }) {
      send(.quit(user: user, reason: session.quitReason, rooms: shared), to: member)
    }
    // Written after the QUITs and PARTs, which therefore wait for no sync.
    keepSeen(seen)
    connectionsByUser[session.user]?.remove(connection)
    if connectionsByUser[session.user]?.isEmpty == true {
      connectionsByUser[session.user] = nil
      awayTexts[session.user] = nil
      groupsByUser[session.user] = nil
    }
  }

  /// The broker is stopping: `BYE` to everyone, then close.
  public func shutdown(reason: String = "the broker is shutting down") {
    // Every session saw its rooms up to now: the shutdown's last sync
    // keeps that for the clients that come back.
    var seen: [JournalRecord] = []
    for (user, connections) in connectionsByUser.sorted(by: { $0.key < $1.key }) {
      let joined = connections.reduce(into: Set<RoomName>()) {
        $0.formUnion(sessions[$1]?.rooms ?? [])
      }
      seen += joined.sorted().compactMap { seenRecord($0, by: user) }
    }
    keepSeen(seen)
    let bye = Outgoing(.bye(reason))
    for connection in sessions.keys.sorted() {
      send(bye, to: connection)
      close(connection)
    }
    sessions.removeAll()
    connectionsByUser.removeAll()
    for name in rooms.keys {
      rooms[name]?.connections.removeAll()
      rooms[name]?.sessionsByUser.removeAll()
    }
  }

  // MARK: - Dispatch

  private func handle(_ request: Request, from connection: ConnectionID, user: String) {
    switch request {
    case .join(let room): join(room, connection: connection, user: user)
    case .joinPrivate(let room, let restriction):
      join(room, restriction: restriction, connection: connection, user: user)
    case .joinKeyed(let room, let key):
      join(room, key: key, connection: connection, user: user)
    case .mode(let room): showModes(room, connection: connection, user: user)
    case .bans(let room): listBans(room, connection: connection, user: user)
    case .setMode(let room, let changes):
      setModes(room, changes, connection: connection, user: user)
    case .kick(let room, let kicked, let reason):
      kick(kicked, from: room, reason: reason, connection: connection, user: user)
    case .invite(let room, let invited):
      invite(invited, to: room, connection: connection, user: user)
    case .access(let room): showAccess(room, connection: connection, user: user)
    case .setAccess(let room, let restriction):
      setAccess(room, restriction, connection: connection, user: user)
    case .part(let room, let reason):
      part(room, reason: reason, connection: connection, user: user)
    case .say(let target, let text): say(target, text: text, connection: connection, user: user)
    case .block(let target, let text):
      say(target, text: text, block: true, connection: connection, user: user)
    case .action(let target, let text):
      say(target, text: text, action: true, connection: connection, user: user)
    case .redact(let target, let id): redact(target, id: id, connection: connection, user: user)
    case .amend(let target, let id, let text):
      amend(target, id: id, text: text, connection: connection, user: user)
    case .react(let target, let id, let reaction, let removed):
      react(
        target, id: id, reaction: reaction, removed: removed, connection: connection, user: user)
    case .notice(let target, let text):
      say(target, text: text, notice: true, connection: connection, user: user)
    case .reply(let target, let id, let text):
      say(target, text: text, replyTo: id, connection: connection, user: user)
    case .tagged(let message, let tags):
      say(message, tags: tags, connection: connection, user: user)
    case .signal(let target, let tags):
      signal(target, tags: tags, connection: connection, user: user)
    case .sayAt(let target, let when, let text):
      sayAt(target, when: when, text: text, connection: connection, user: user)
    case .history(let target, let count, let anchor):
      history(target, count: count, anchor: anchor, connection: connection, user: user)
    case .thread(let target, let id, let count):
      thread(target, id: id, count: count, connection: connection, user: user)
    case .search(let target, let count, let before, let words):
      search(target, count: count, before: before, words: words, connection: connection, user: user)
    case .conversations: listConversations(connection: connection, user: user)
    case .markRead(let target, let id):
      markRead(target, id: id, connection: connection, user: user)
    case .markReadAt(let target, let time):
      markRead(target, at: time, connection: connection, user: user)
    case .readMarker(let target): showReadMarker(target, connection: connection, user: user)
    case .scheduled(let target): listScheduled(target, connection: connection, user: user)
    case .upcoming(let id, let count):
      listUpcoming(id, count: count, connection: connection, user: user)
    case .cancel(let id): cancel(id, connection: connection, user: user)
    case .sayEvery(let target, let rule, let text):
      sayEvery(target, rule: rule, text: text, connection: connection, user: user)
    case .reschedule(let id, let when):
      reschedule(id, when: when, connection: connection, user: user)
    case .edit(let id, let text): edit(id, text: text, connection: connection, user: user)
    case .skip(let id, let occurrence):
      skip(id, occurrence: occurrence, connection: connection, user: user)
    case .replace(let id, let occurrence, let when, let text):
      replace(
        id, occurrence: occurrence, when: when, text: text, connection: connection, user: user)
    case .rooms(let after): listRooms(after: after, connection: connection, user: user)
    case .who(let room): who(room, connection: connection, user: user)
    case .topic(let room): showTopic(room, connection: connection, user: user)
    case .web(let revoke):
      if revoke {
        revokeWebTokens(connection: connection, user: user)
      } else {
        mintWebToken(connection: connection, user: user)
      }
    case .away(let text):
      setAway(user, text: text)
      send(.ok(.away, fields: awayTexts[user] == nil ? ["BACK"] : []), to: connection)
    case .setTopic(let room, let text):
      setTopic(room, text: text, connection: connection, user: user)
    case .ping(let token):
      send(.ok(.ping, fields: token.map { [$0] } ?? []), to: connection)
    case .help: help(connection: connection)
    case .quit(let reason):
      sessions[connection]?.quitReason = reason
      send(.ok(.quit, fields: []), to: connection)
      send(.bye("bye \(user)"), to: connection)
      disconnect(connection)
      close(connection)
    }
  }

  private static let helpLines: [BrokerEvent] =
    VerbTable.rows.map { row in
      .info("\(row.syntax)  \(row.summary)")
    } + [
      .info("<target> is #room or @user; text may start with : as in IRC"),
      .info("see chatbroker(7) for the whole protocol"),
    ]

  private func help(connection: ConnectionID) {
    for line in Self.helpLines { send(line, to: connection) }
    send(.ok(.help, fields: []), to: connection)
  }

  // MARK: - Helpers shared by the handlers

  /// Sends an event to one connection, labelled by ``label(_:to:)``.
  func send(_ event: BrokerEvent, to connection: ConnectionID) {
    send(Outgoing(event), to: connection)
  }

  /// Sends an event that may go to several connections, encoded once per
  /// wire format: the only way a line leaves the engine, so each is
  /// labelled by the one rule of ``label(_:to:)``.
  @inline(__always)
  func send(_ outgoing: Outgoing, to connection: ConnectionID) {
    guard let output else { return }
    output.send(outgoing, to: connection, kind: label(outgoing.event, to: connection))
  }

  /// The engine has forgotten the connection: the shell flushes it, then
  /// closes it.
  func close(_ connection: ConnectionID) {
    output?.close(connection)
  }

  /// The one timer for all schedules: fire at `due`, or never.
  func armTimer(at due: Timestamp?) {
    output?.armTimer(at: due)
  }

  /// Appends records to the journal as one write, and counts them for the
  /// labels of the lines sent after them (``label(_:to:)``): every record
  /// the engine writes goes through here.
  func append(_ records: [JournalRecord]) throws(StorageError) {
    try journal.append(records)
    recordsWritten += records.count
  }

  func fail(_ verb: Verb, _ code: ErrorCode, _ text: String, to connection: ConnectionID) {
    send(.error(verb: verb.rawValue, code: code, text: text), to: connection)
  }

  /// Appends records to the journal; on failure answers `STORAGE` and
  /// returns false, and the caller changes nothing.
  func journal(_ records: [JournalRecord], verb: Verb, connection: ConnectionID) -> Bool {
    do {
      try append(records)
      return true
    } catch {
      log.error("journal write failed", ["reason": error.reason, "verb": verb.rawValue])
      fail(
        verb, .storage,
        "the journal could not be written (\(error.reason)); nothing was accepted, try again later",
        to: connection)
      return false
    }
  }

  /// A fresh id, or `nil` (answered `LIMIT`) once every id up to
  /// ``MessageID/maximumValue`` has been handed out: ids are never reused,
  /// and counting past the last one must not trap.
  func takeID(_ verb: Verb, connection: ConnectionID) -> MessageID? {
    guard let id = takeFreshID() else {
      log.warning("limit reached", ["limit": "message ids", "verb": verb.rawValue])
      fail(
        verb, .limit,
        "every message id has been handed out; nothing was accepted, "
          + "and the administrator must start the broker on a new state directory",
        to: connection)
      return nil
    }
    return id
  }

  /// A fresh id, or `nil` once every id has been handed out.
  func takeFreshID() -> MessageID? {
    guard nextID < FederatedID.base else { return nil }
    defer { nextID += 1 }
    return MessageID(value: nextID)
  }

  /// `NOSUCHUSER` for `@nobody`; true when the target may be written to.
  /// A user exists when the system knows the name, or when a session of
  /// that name is connected right now (a `uid1234` with no passwd entry).
  func checkRecipient(_ target: Target, verb: Verb, connection: ConnectionID) -> Bool {
    guard case .user(let name) = target, connectionsByUser[name] == nil, !users.userExists(name)
    else { return true }
    fail(verb, .noSuchUser, "there is no user named \"\(name)\" on this host", to: connection)
    return false
  }
}

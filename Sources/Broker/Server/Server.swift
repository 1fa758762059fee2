import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// The I/O shell around the engine: it accepts connections, moves bytes and
/// time in and effects out, and keeps the promise "durable before visible":
/// a line queued after a journal record leaves only once the committer
/// (``JournalCommitter``) counts that record durable. Everything runs in
/// the passes of one poll thread (``ReadinessPoll``) on the engine's
/// queue, each ended by ``endOfPass()``; `fdatasync` runs on a thread of
/// its own, so the engine keeps working while the disk syncs (group
/// commit: whatever was appended meanwhile is covered by the next sync),
/// except when at most one connection waits for it
/// (``GroupCommit/syncNow(_:)``).
public final class Server: @unchecked Sendable {
  public struct Options: Sendable {
    public var limits = Limits()
    /// `--irc-backlog`: lines of a room an IRC client without chathistory
    /// gets when it joins.
    public var ircBacklog = 50
    /// The name IRC clients see for the server and network: the host name.
    public var serverName = ProcessInfo.processInfo.hostName
    public init() {}
  }

  let queue: DispatchQueue
  let engine: Engine
  let users: SystemUsers
  let options: Options
  let log: Logger

  var connections = ConnectionTable()
  /// Every connection's readiness, one pass at a time (``ReadinessPoll``).
  let poll: ReadinessPoll
  var nextConnection = 1
  /// The listening sockets, registered in the poll under
  /// ``ReadinessPoll/listenerToken(_:)`` of their index.
  var listeners: [(fd: Int32, wire: WireFormat)] = []
  /// Accepting stopped (the listeners unwatched) because accept(2) ran out
  /// of descriptors or memory; it resumes when a connection closes or after
  /// a short pause.
  var acceptPaused = false
  /// Set from the first refusal at the descriptor limit until a connection
  /// is accepted again, so the log says it once rather than per attempt.
  var atDescriptorLimit = false
  var refusedAtLimit = 0
  /// A descriptor kept open to be given back at the limit, just long enough
  /// to accept a waiting client and tell it `ERR - LIMIT`.
  var reserveDescriptor: Int32 = -1
  /// Connections opened, closed and lost are logged at most this many
  /// times a minute per user and kind: a user connecting in a loop must
  /// not flood the log (chatbroker(8), "LOGGING").
  var connectionLog = LimitLog(perMinute: 30)
  /// The journal's one owner and the engine's journal sink: group commit,
  /// recovery, compaction, and the durable count (see Server+Journal).
  let committer: JournalCommitter
  /// The durable count held lines and the outbox were last released up to.
  var releasedUpTo: UInt64 = 0
  /// fdatasync calls so far: with group commit, far fewer than records.
  public var syncCount: Int { committer.syncCount }
  /// Called (on the queue) when the journal cannot be recovered after a
  /// failed write or sync: nothing more is acknowledged, and the caller
  /// must stop (chatbroker exits 74).
  public var onJournalFailure: ((JournalUnrecoverable) -> Void)?
  /// Connections with lines waiting for a sync.
  var holding: Set<ConnectionID> = []
  /// Connections with released output not yet written.
  var dirty: [Connection] = []
  /// Every connection's reads land here (the queue is serial, and the
  /// framer copies what it keeps); freed with the server.
  let readBuffer = UnsafeMutableRawBufferPointer.allocate(
    byteCount: 64 * 1024, alignment: 16)
  var stopping = false
  /// A shutdown waiting for its clients to read their BYE (``endOfPass()``).
  var draining: (giveUp: DispatchTime, completion: @Sendable () -> Void)?
  /// Called (on the queue) whenever counts worth reporting may have changed.
  public var onStatusChange: (() -> Void)?
  /// Shared rooms' link to the stream (Server+Federation), nil without.
  var federation: FederationBridge?

  /// Bytes queued for all connections since the last flush, and the amount
  /// that triggers one in the middle of an event.
  var queuedSinceFlush = 0
  let flushAbove = 256 * 1024

  /// Output above which a connection's requests wait (back-pressure), and
  /// below which they are served again.
  let pauseReadingAbove = 256 * 1024
  let resumeReadingBelow = 64 * 1024

  /// Requests served from one connection per turn before the others get
  /// theirs, and the reply bytes after which its turn ends early: one
  /// flooding client costs everybody else at most one short turn.
  let requestsPerTurn = 64
  let replyBytesPerTurn = 64 * 1024
  /// And time: requests cost unequal work (a page of an IRC CHATHISTORY,
  /// a LIST page, a JOIN with its backlog, a HISTORY of 4 MB), so a count
  /// alone lets a few heavy turns hold a pass. Each turn adds this much to
  /// a connection's time credit (never above one turn's worth), its
  /// requests' time is taken from it, and the turn ends when it is spent;
  /// a request that took many turns' worth leaves the connection owing,
  /// and it skips its turns until the others have had as much time.
  let nanosecondsPerTurn: Int64 = 2_000_000
  /// Requests a turn serves before its time credit can end it.
  let minimumRequestsPerTurn = 16
  /// Connections with requests left after their turn, served round-robin,
  /// one per turn, each turn a separate block on the queue so that timers,
  /// accepts and other clients' input interleave.
  var ready = FIFOQueue<Connection>()
  var turnScheduled = false
  /// Requests' worth of work done beyond the one request being served, to
  /// take from its connection's turn: a request that looks at every
  /// conversation is charged one request per ``conversationsPerRequest``
  /// of them, so that with a few hundred conversations it has a turn to
  /// itself.
  var extraTurnCost = 0
  let conversationsPerRequest = 4
  /// The connection whose requests are being handled: its own replies are
  /// bounded by back-pressure, so the output limit is not applied to them.
  var serving: ConnectionID?

  /// Serves `engine`, whose journal sink must be `committer` (the
  /// journal loaded already), on `queue`; nothing runs before the first
  /// pass of the poll but what the caller does on the queue.
  public init(
    queue: DispatchQueue, engine: Engine, committer: JournalCommitter, users: SystemUsers,
    options: Options, log: Logger
  ) throws(SystemError) {
    precondition(engine.journal === committer, "the engine appends through the committer")
    self.queue = queue
    self.engine = engine
    self.users = users
    self.options = options
    self.log = log
    self.committer = committer
    poll = try ReadinessPoll(queue: queue)
    reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    committer.start(engine: engine, loop: poll)
    releasedUpTo = committer.durableCount
    engine.output = self
    committer.delegate = self
    poll.start(
      ReadinessPoll.Handlers(
        timerFired: { [unowned self] in self.engine.timerFired() },
        ready: { [unowned self] event in ready(event) },
        endOfPass: { [unowned self] in endOfPass() }))
  }

  deinit {
    readBuffer.deallocate()
  }

  public var connectionCount: Int { connections.count }

  // MARK: - Listening

  /// Serves a listening socket (bound here or passed by systemd) whose
  /// clients speak `wire`: registered in the poll, so that its clients are
  /// accepted in a pass like any other event. On the queue.
  public func listen(on fd: Int32, wire: WireFormat = .line) throws(SystemError) {
    let token = ReadinessPoll.listenerToken(listeners.count)
    try poll.register(fd, token: token)
    listeners.append((fd, wire))
    if !acceptPaused { poll.watch(fd, token: token, for: .readable) }
  }

  /// At most this many connections are accepted per pass from a listener;
  /// then other work runs, and the poll reports the listener again while
  /// clients wait. A connect flood costs the others at most one such batch
  /// at a time (chatbroker(8), SECURITY CONSIDERATIONS).
  static let acceptsPerEvent = 16

  func accept(from listener: Int32, wire: WireFormat) {
    var attempts = 0
    while !stopping && !acceptPaused && attempts < Self.acceptsPerEvent {
      attempts += 1
      let accepted: IOResult<Int32>
      do {
        accepted = try ioCall("accept") { chat_accept_nonblocking(listener) }
      } catch {
        switch error.errno {
        case ECONNABORTED: continue
        case EMFILE, ENFILE:
          refuseAtLimit(listener, error.errno)
          pauseAccepting()
        default:
          // ENOBUFS, ENOMEM and the like: retrying at once would only spin.
          log.error("accept failed", ["reason": error.reason])
          pauseAccepting()
        }
        break
      }
      // Would block: no client is waiting any more.
      guard case .processed(let fd) = accepted else { break }
      if atDescriptorLimit {
        atDescriptorLimit = false
        log.info("accepting connections again", ["refused": "\(refusedAtLimit)"])
        refusedAtLimit = 0
      }
      open(fd, wire: wire)
    }
  }

  /// Out of descriptors: the waiting clients would hang, and the listener
  /// would fire again at once for them. The reserve descriptor is given
  /// back, to accept each in turn and tell it `ERR - LIMIT` before closing
  /// it (chatbroker(7), "Limits"); then the reserve is taken again.
  func refuseAtLimit(_ listener: Int32, _ failure: Int32) {
    if !atDescriptorLimit {
      atDescriptorLimit = true
      log.warning(
        "limit reached",
        [
          "limit": "descriptors", "reason": String(cString: strerror(failure)),
          "conn": "\(connections.count)",
        ])
    }
    let refusal = LineCodec.encode(
      .error(
        verb: "-", code: .limit,
        text: "the broker has no file descriptor left for another connection; try again later"))
    // Bounded, so that clients arriving without end cannot hold the queue.
    for _ in 0..<64 where reserveDescriptor >= 0 {
      Glibc.close(reserveDescriptor)
      let fd = chat_accept_nonblocking(listener)
      if fd >= 0 {
        _ = refusal.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        Glibc.close(fd)
        refusedAtLimit += 1
      }
      reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
      if fd < 0 { break }
    }
  }

  /// Stops accepting until a connection closes or a short pause is over.
  func pauseAccepting() {
    guard !acceptPaused else { return }
    acceptPaused = true
    watchListeners(for: [])
    poll.after(milliseconds: 250) { [unowned self] in resumeAccepting() }
  }

  func resumeAccepting() {
    guard acceptPaused else { return }
    acceptPaused = false
    if reserveDescriptor < 0 { reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
    watchListeners(for: .readable)
  }

  private func watchListeners(for interest: ReadinessPoll.Interest) {
    for (index, listener) in listeners.enumerated() {
      poll.watch(listener.fd, token: ReadinessPoll.listenerToken(index), for: interest)
    }
  }

  func open(_ fd: Int32, wire: WireFormat) {
    let uid: uid_t
    do {
      uid = try wire.credentials.uid(of: fd)
    } catch {
      logConnection(.error, "connection refused", user: "-", [("reason", error.reason)])
      Glibc.close(fd)
      return
    }
    let user = users.name(of: uid)
    let id = connections.makeID(nextConnection)
    nextConnection += 1
    // `--verbose`: the peer's uid, which "connection opened" names only as
    // a user, and the listener it came by; never rate-limited.
    if log.isLogging(.debug) {
      log.debug("connection accepted", ["conn": "\(id)", "uid": "\(uid)", "wire": wire.logName])
    }
    let connection: Connection
    do {
      connection = try Connection(
        id: id, fd: fd, user: user, codec: codec(for: wire, user: user), poll: poll)
    } catch {
      connections.abandon(id)
      logConnection(.error, "connection refused", user: user, [("reason", error.description)])
      Glibc.close(fd)
      return
    }
    connections[id] = connection
    logConnection(.info, "connection opened", user: user, [("conn", "\(id)"), ("user", user)])
    if engine.connect(id, user: user) {
      connection.resumeReading()
    }
    onStatusChange?()
  }

  /// Logs a connection's opening, refusal, closing or loss, rate-limited
  /// per user and kind by ``connectionLog``; the next line logged after
  /// some were left out says how many with `suppressed=`.
  func logConnection(
    _ level: Logger.Level, _ message: String, user: String,
    _ fields: [(key: String, value: String)]
  ) {
    guard let suppressed = connectionLog.admit(message, user: user, now: engine.clock.now)
    else { return }
    var fields = fields
    if suppressed > 0 { fields.append((key: "suppressed", value: "\(suppressed)")) }
    log.log(level, message, fields: fields)
  }

  // MARK: - Input

  /// One ready registration of a ``ReadinessPoll`` pass. A listener
  /// accepts. A connection: output first, which may let its requests go
  /// on, then input. Replies that may leave are written right after its
  /// turn, so that a `PING` waits for the turns before its own and not for
  /// the whole pass (the fuzzer's probe measures this); the pass ends with
  /// ``endOfPass()``, which writes the journal once for all of them.
  func ready(_ event: ReadinessPoll.Event) {
    if let index = ReadinessPoll.listenerIndex(event.token) {
      if index < listeners.count { accept(from: listeners[index].fd, wire: listeners[index].wire) }
      return
    }
    guard let connection = connections[pollToken: event.token] else { return }
    if event.isWritable && connection.isWaitingForWritable { flush(connection) }
    if event.isReadable && connection.isReading {
      readable(connection)
      if connection.isDirty && !connection.output.isEmpty { flush(connection) }
    }
  }

  /// Bytes arrived: one read, then one turn of this connection's requests.
  /// Reading is paused whenever requests wait in the framer, so the input
  /// buffered per connection stays at one read.
  func readable(_ connection: Connection) {
    guard !connection.closing, !connection.inputEnded, !connection.mayHaveRequests,
      !connection.outputBlocked
    else {
      connection.pauseReading()
      return
    }
    let received: IOResult<Int>
    do {
      received = try ioCall("read") {
        read(connection.fd, readBuffer.baseAddress, readBuffer.count)
      }
    } catch {
      drop(connection, reason: error.reason)
      return
    }
    guard case .processed(let count) = received else { return }
    if count > 0 {
      connection.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
      connection.mayHaveRequests = true
    } else {
      connection.inputEnded = true
    }
    serve(connection)
  }

  /// One turn: up to ``requestsPerTurn`` requests or ``replyBytesPerTurn``
  /// of replies, none once the connection's own replies pass
  /// ``pauseReadingAbove`` (no reply is built only to be thrown away).
  /// What is left waits in the framer.
  func serve(_ connection: Connection) {
    serving = connection.id
    extraTurnCost = 0
    var budget = requestsPerTurn
    let replyLimit = connection.pendingBytes + replyBytesPerTurn
    connection.timeCredit = min(connection.timeCredit + nanosecondsPerTurn, nanosecondsPerTurn)
    let started = DispatchTime.now().uptimeNanoseconds
    func spent() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds - started) }
    defer { connection.timeCredit -= spent() }
    while budget > 0, !connection.closing, connection.mayHaveRequests,
      connection.pendingBytes < replyLimit, connection.timeCredit > 0
    {
      // A few requests whatever their time, so that cheap ones (SAYs)
      // still share a journal sync; past those, the credit decides.
      if budget <= requestsPerTurn - minimumRequestsPerTurn && spent() >= connection.timeCredit {
        break
      }
      if connection.pendingBytes >= pauseReadingAbove {
        connection.outputBlocked = true
        break
      }
      // The next target of a line that named several comes before the
      // next line: each is one request of the turn.
      if !nextStep(of: connection) {
        guard let frame = connection.framer.next() else {
          connection.mayHaveRequests = false
          break
        }
        receive(frame, from: connection)
      }
      budget -= 1 + extraTurnCost
      extraTurnCost = 0
      // Write out a large fan-out before it outgrows the CPU caches:
      // copying into cold buffers cost more than the extra send(2)s.
      // At least a few KiB per connection, so each send(2) stays worth it.
      if queuedSinceFlush > max(flushAbove, dirty.count * 4096) { flushDirty() }
    }
    if connection.pendingBytes >= pauseReadingAbove { connection.outputBlocked = true }
    serving = nil
    continueInput(connection)
  }

  /// Decides what a connection waits for next: its output to drain, its
  /// next turn, more bytes, or (input ended and all answered) its close.
  func continueInput(_ connection: Connection) {
    guard !connection.closing, connections[connection.id] === connection else { return }
    if connection.outputBlocked {
      connection.pauseReading()
    } else if connection.mayHaveRequests {
      connection.pauseReading()
      enqueueTurn(connection)
    } else if connection.inputEnded {
      connection.pauseReading()
      endOfInput(connection)
    } else {
      connection.resumeReading()
    }
  }

  func enqueueTurn(_ connection: Connection) {
    guard !connection.isQueued else { return }
    connection.isQueued = true
    ready.append(connection)
    scheduleTurn()
  }

  /// At most one turn waits at any time, so whatever else arrives
  /// meanwhile (a PING, a timer) runs after at most one turn. It runs in
  /// the poll's next pass, through its mailbox (``ReadinessPoll/post(_:)``).
  func scheduleTurn() {
    guard !turnScheduled, !ready.isEmpty else { return }
    turnScheduled = true
    poll.post { [unowned self] in takeTurn() }
  }

  func takeTurn() {
    turnScheduled = false
    guard let connection = ready.popFirst() else { return }
    connection.isQueued = false
    if connections[connection.id] === connection && !connection.closing {
      if connection.outputBlocked {
        connection.pauseReading()  // flush hands it its turn once drained
      } else {
        serve(connection)
        // As after a turn in ``ready(_:)``; the pass's end does the rest.
        if connection.isDirty && !connection.output.isEmpty { flush(connection) }
      }
    }
    scheduleTurn()
  }

  /// The IRC gateway's `CHATHISTORY TARGETS` (chatbroker(7), "IRC"): it
  /// looks at every conversation, so it costs its sender a share of its
  /// turn in proportion, and a flood of it cannot hold the queue.
  func activeConversationsCharged(
    of user: String, after: Timestamp, before: Timestamp, limit: Int
  ) -> [ConversationActivity] {
    extraTurnCost += engine.histories.count / conversationsPerRequest
    return engine.activeConversations(of: user, after: after, before: before, limit: limit)
  }

  /// A connection's replies drained below ``resumeReadingBelow``: its
  /// waiting requests get turns again.
  func outputDrained(_ connection: Connection) {
    guard connection.outputBlocked, connection.pendingBytes < resumeReadingBelow,
      serving != connection.id
    else { return }
    connection.outputBlocked = false
    continueInput(connection)
  }

  /// The client closed its writing side and every complete line was
  /// served: answer a last line without LF, then close.
  func endOfInput(_ connection: Connection) {
    if !connection.closing, let frame = connection.framer.finish() {
      receive(frame, from: connection)
      // The last line's other targets (at most IRCSession.maximumTargets).
      while !connection.closing, nextStep(of: connection) {}
    }
    if !connection.closing {
      engine.disconnect(connection.id)
      close(connection.id)
    }
  }

  // MARK: - Shutdown

  /// `BYE` to every client, in the next pass; then `completion` (in a
  /// pass, on the queue) at the end of the first pass that finds all
  /// output written, or once `deadline` has passed. From any thread.
  public func shutdown(
    within deadline: DispatchTimeInterval = .milliseconds(900),
    completion: @escaping @Sendable () -> Void
  ) {
    poll.post { [unowned self] in
      stopping = true
      for listener in listeners {
        poll.unregister(listener.fd)
        Glibc.close(listener.fd)
      }
      listeners.removeAll()
      engine.shutdown()
      let now = DispatchTime.now()
      let giveUp = now + deadline
      draining = (giveUp, completion)
      // A pass at the deadline, in case no client's output ends one sooner.
      poll.after(
        milliseconds: Int((giveUp.uptimeNanoseconds - now.uptimeNanoseconds) / 1_000_000) + 1
      ) {}
    }
  }

  /// The last step of a pass while shutting down: done once every client
  /// has read its `BYE` and closed, or the deadline has passed.
  func completeShutdownIfDrained() {
    guard let (giveUp, completion) = draining,
      connections.isEmpty || DispatchTime.now() >= giveUp
    else { return }
    draining = nil
    completion()
  }
}

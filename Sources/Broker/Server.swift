import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// The I/O shell around the engine: it accepts connections, moves bytes and
/// time in and effects out, and keeps the promise "durable before visible":
/// a line queued after a journal record leaves only once that record is
/// synced. Everything runs on one serial queue; only `fdatasync` runs on a
/// second one, so the engine keeps working while the disk syncs (group
/// commit: whatever was appended meanwhile is covered by the next sync).
public final class Server: @unchecked Sendable {
  public struct Options: Sendable {
    public var limits = Limits()
    /// `--no-sync`: never call fdatasync (throwaway state, benchmarks).
    public var syncJournal = true
    /// The sync call, `fdatasync`; tests put a failing disk in its place.
    public var synchronize: @Sendable (Int32) -> Int32 = { fdatasync($0) }
    public init() {}
  }

  let queue: DispatchQueue
  let engine: Engine
  let journal: FileJournal
  let users: SystemUsers
  let options: Options
  let log: Logger

  var connections: [ConnectionID: Connection] = [:]
  var nextConnection = 1
  var listeners: [DispatchSourceRead] = []
  /// Accepting stopped (the listeners suspended) because accept(2) ran out
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
  let timer: DispatchSourceTimer
  let syncQueue = DispatchQueue(label: "chatbroker.journal-sync")
  let compactionQueue = DispatchQueue(label: "chatbroker.compaction")
  var compacting = false
  /// Set when a failed sync cuts the journal back during a compaction,
  /// whose copy may then hold records that are no longer in the journal.
  var compactionSpoiled = false
  var syncInFlight = false
  /// Records known to be on stable storage, and where they end in the file.
  var syncedCount: UInt64 = 0
  var syncedSize: Int64 = 0
  /// Milliseconds before a sync is tried again after one failed; grows
  /// while they keep failing, back to none after one succeeds.
  var syncRetryDelay = 0
  /// fdatasync calls so far: with group commit, far fewer than records.
  public internal(set) var syncCount = 0
  /// Connections with lines waiting for a sync.
  var holding: Set<ConnectionID> = []
  /// Connections with released output not yet written.
  var dirty: [Connection] = []
  let readBuffer = UnsafeMutableRawBufferPointer.allocate(
    byteCount: 64 * 1024, alignment: 16)
  var stopping = false
  /// Called (on the queue) whenever counts worth reporting may have changed.
  public var onStatusChange: (() -> Void)?

  /// Bytes queued for all connections since the last flush, and the amount
  /// that triggers one in the middle of an event.
  var queuedSinceFlush = 0
  let flushAbove = 256 * 1024

  /// Output above which a connection's reading is paused (back-pressure).
  let pauseReadingAbove = 256 * 1024
  let resumeReadingBelow = 64 * 1024

  public init(
    queue: DispatchQueue, engine: Engine, journal: FileJournal, users: SystemUsers,
    options: Options, log: Logger
  ) {
    self.queue = queue
    self.engine = engine
    self.journal = journal
    self.users = users
    self.options = options
    self.log = log
    timer = DispatchSource.makeTimerSource(flags: [], queue: queue)
    syncedCount = journal.writtenCount
    syncedSize = journal.size
    reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    timer.setEventHandler { [unowned self] in
      engine.timerFired()
      afterEvent()
    }
    timer.schedule(wallDeadline: .distantFuture)
    timer.resume()
    engine.output = self
    if options.syncJournal { engine.trackUnsyncedRecords() }
  }

  public var connectionCount: Int { connections.count }

  // MARK: - Listening

  /// Serves a listening socket (bound here or passed by systemd).
  public func listen(on fd: Int32) {
    let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    source.setEventHandler { [unowned self] in accept(from: fd) }
    source.setCancelHandler { Glibc.close(fd) }
    listeners.append(source)
    source.resume()
  }

  func accept(from listener: Int32) {
    while !stopping && !acceptPaused {
      let fd = chat_accept_nonblocking(listener)
      if fd < 0 {
        let failure = errno
        switch failure {
        case EINTR, ECONNABORTED: continue
        case EAGAIN: break
        case EMFILE, ENFILE:
          refuseAtLimit(listener, failure)
          pauseAccepting()
        default:
          // ENOBUFS, ENOMEM and the like: retrying at once would only spin.
          log.error("accept failed", ["reason": String(cString: strerror(failure))])
          pauseAccepting()
        }
        break
      }
      if atDescriptorLimit {
        atDescriptorLimit = false
        log.info("accepting connections again", ["refused": "\(refusedAtLimit)"])
        refusedAtLimit = 0
      }
      open(fd)
    }
    afterEvent()
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
    let refusal = BrokerLine.error(
      verb: "-", code: .limit,
      text: "the broker has no file descriptor left for another connection; try again later")
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
    for listener in listeners { listener.suspend() }
    queue.asyncAfter(deadline: .now() + .milliseconds(250)) { [unowned self] in
      resumeAccepting()
    }
  }

  func resumeAccepting() {
    guard acceptPaused else { return }
    acceptPaused = false
    if reserveDescriptor < 0 { reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }
    for listener in listeners { listener.resume() }
  }

  func open(_ fd: Int32) {
    let user: String
    do {
      user = users.name(of: try PeerCredentials.uid(of: fd))
    } catch {
      log.error("connection refused", ["reason": error.description])
      Glibc.close(fd)
      return
    }
    let id = ConnectionID(nextConnection)
    nextConnection += 1
    let connection = Connection(
      id: id, fd: fd, user: user, maximumLineBytes: options.limits.lineBytes, queue: queue)
    // Handlers look the connection up by id rather than hold a weak
    // reference: a weak reference gives every retain of it the slow path.
    connection.readSource.setEventHandler { [unowned self] in
      if let connection = connections[id] { readable(connection) }
    }
    connection.writeSource.setEventHandler { [unowned self] in
      guard let connection = connections[id] else { return }
      flush(connection)
      afterEvent()
    }
    // Strong on purpose: the connection lives until both sources are
    // cancelled, then libdispatch releases these handlers and with them it.
    let closeOnce = { [unowned self] in
      connection.cancelledSources += 1
      guard connection.cancelledSources == 2 else { return }
      Glibc.close(connection.fd)
      // A descriptor is free: a listener paused at the limit may go on.
      resumeAccepting()
    }
    connection.readSource.setCancelHandler(handler: closeOnce)
    connection.writeSource.setCancelHandler(handler: closeOnce)
    connections[id] = connection
    log.info("connection opened", ["conn": "\(id)", "user": user])
    if engine.connect(id, user: user) {
      connection.resumeReading()
    }
    onStatusChange?()
  }

  // MARK: - Input

  func readable(_ connection: Connection) {
    // A bounded number of reads per event keeps one flooding client from
    // starving the others; the source fires again while data remains.
    for _ in 0..<8 {
      guard !connection.closing, connection.pendingBytes < pauseReadingAbove else { break }
      let count = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
      if count > 0 {
        connection.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
        while !connection.closing, let frame = connection.framer.next() {
          engine.receive(frame, from: connection.id)
          // Write out a large fan-out before it outgrows the CPU caches:
          // copying into cold buffers cost more than the extra send(2)s.
          // At least a few KiB per connection, so each send(2) stays worth it.
          if queuedSinceFlush > max(flushAbove, dirty.count * 4096) { flushDirty() }
        }
        if count < readBuffer.count { break }
      } else if count == 0 {
        endOfInput(connection)
        break
      } else if errno == EINTR {
        continue
      } else {
        if errno != EAGAIN { drop(connection, reason: String(cString: strerror(errno))) }
        break
      }
    }
    if connection.pendingBytes >= pauseReadingAbove { connection.pauseReading() }
    afterEvent()
  }

  /// The client closed its writing side: answer what it sent, then close.
  func endOfInput(_ connection: Connection) {
    if !connection.closing, let frame = connection.framer.finish() {
      engine.receive(frame, from: connection.id)
    }
    if !connection.closing {
      engine.disconnect(connection.id)
      close(connection.id)
    }
  }

  // MARK: - Shutdown

  /// `BYE` to every client, the last group commit, then `completion` (on
  /// the queue) once all output is written or `deadline` has passed.
  public func shutdown(
    within deadline: DispatchTimeInterval = .milliseconds(900),
    completion: @escaping @Sendable () -> Void
  ) {
    stopping = true
    for listener in listeners { listener.cancel() }
    resumeAccepting()  // a suspended source must not be released
    listeners.removeAll()
    engine.shutdown()
    afterEvent()
    waitForDrain(until: .now() + deadline, completion: completion)
  }

  func waitForDrain(until giveUp: DispatchTime, completion: @escaping @Sendable () -> Void) {
    if connections.isEmpty || DispatchTime.now() >= giveUp {
      completion()
    } else {
      queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [unowned self] in
        waitForDrain(until: giveUp, completion: completion)
      }
    }
  }
}

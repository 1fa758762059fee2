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
public final class Server: EngineOutput, @unchecked Sendable {
  public struct Options: Sendable {
    public var limits = Limits()
    /// `--no-sync`: never call fdatasync (throwaway state, benchmarks).
    public var syncJournal = true
    public init() {}
  }

  let queue: DispatchQueue
  let engine: Engine
  let journal: FileJournal
  let users: SystemUsers
  let options: Options
  let log: Logger

  private var connections: [ConnectionID: Connection] = [:]
  private var nextConnection = 1
  private var listeners: [DispatchSourceRead] = []
  private let timer: DispatchSourceTimer
  private let syncQueue = DispatchQueue(label: "chatbroker.journal-sync")
  private let compactionQueue = DispatchQueue(label: "chatbroker.compaction")
  private var compacting = false
  private var syncInFlight = false
  /// Records known to be on stable storage.
  private var syncedCount: UInt64 = 0
  /// fdatasync calls so far: with group commit, far fewer than records.
  public private(set) var syncCount = 0
  /// Connections with lines waiting for a sync.
  private var holding: Set<ConnectionID> = []
  /// Connections with released output not yet written.
  private var dirty: [Connection] = []
  private let readBuffer = UnsafeMutableRawBufferPointer.allocate(
    byteCount: 64 * 1024, alignment: 16)
  private var stopping = false
  /// Called (on the queue) whenever counts worth reporting may have changed.
  public var onStatusChange: (() -> Void)?

  /// Bytes queued for all connections since the last flush, and the amount
  /// that triggers one in the middle of an event.
  private var queuedSinceFlush = 0
  private let flushAbove = 256 * 1024

  /// Output above which a connection's reading is paused (back-pressure).
  private let pauseReadingAbove = 256 * 1024
  private let resumeReadingBelow = 64 * 1024

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
    timer.setEventHandler { [unowned self] in
      engine.timerFired()
      afterEvent()
    }
    timer.schedule(wallDeadline: .distantFuture)
    timer.resume()
    engine.output = self
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

  private func accept(from listener: Int32) {
    while !stopping {
      let fd = chat_accept_nonblocking(listener)
      if fd < 0 {
        switch errno {
        case EINTR, ECONNABORTED: continue
        case EAGAIN: break
        default: log.error("accept failed", ["reason": String(cString: strerror(errno))])
        }
        break
      }
      open(fd)
    }
    afterEvent()
  }

  private func open(_ fd: Int32) {
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
    let closeOnce = {
      connection.cancelledSources += 1
      if connection.cancelledSources == 2 { Glibc.close(connection.fd) }
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

  private func readable(_ connection: Connection) {
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
  private func endOfInput(_ connection: Connection) {
    if !connection.closing, let frame = connection.framer.finish() {
      engine.receive(frame, from: connection.id)
    }
    if !connection.closing {
      engine.disconnect(connection.id)
      close(connection.id)
    }
  }

  // MARK: - EngineOutput

  public func send(_ line: [UInt8], to id: ConnectionID) {
    guard let connection = connections[id], !connection.overflowed else { return }
    if connection.pendingBytes + line.count > options.limits.outputBytesPerConnection {
      overflow(connection)
      return
    }
    let required = journal.writtenCount
    if connection.held.isEmpty && required <= durableCount {
      connection.output.append(line)
      queuedSinceFlush += line.count
      markDirty(connection)
    } else {
      connection.held.append((required, line))
      connection.heldBytes += line.count
      holding.insert(id)
    }
  }

  public func close(_ id: ConnectionID) {
    guard let connection = connections[id], !connection.closing else { return }
    connection.closing = true
    connection.pauseReading()
    markDirty(connection)
  }

  public func armTimer(at due: Timestamp?) {
    guard let due else {
      timer.schedule(wallDeadline: .distantFuture)
      return
    }
    let milliseconds = due.milliseconds
    let deadline = DispatchWallTime(
      timespec: timespec(
        tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000))
    timer.schedule(wallDeadline: deadline, leeway: .microseconds(100))
  }

  // MARK: - Output and group commit

  private var durableCount: UInt64 {
    options.syncJournal ? syncedCount : journal.writtenCount
  }

  private func markDirty(_ connection: Connection) {
    if !connection.isDirty {
      connection.isDirty = true
      dirty.append(connection)
    }
  }

  /// After every event: start a sync if records wait for one, and write
  /// what may leave.
  private func afterEvent() {
    if !options.syncJournal { releaseHeld() }
    compactIfDue()
    startSyncIfNeeded()
    flushDirty()
    onStatusChange?()
  }

  /// Writes every connection with released output.
  private func flushDirty() {
    queuedSinceFlush = 0
    let toFlush = dirty
    dirty.removeAll(keepingCapacity: true)
    for connection in toFlush {
      connection.isDirty = false
      flush(connection)
    }
  }

  private func startSyncIfNeeded() {
    guard options.syncJournal, !syncInFlight, journal.writtenCount > syncedCount else { return }
    syncInFlight = true
    let target = journal.writtenCount
    let fd = journal.fd
    syncQueue.async { [unowned self] in
      let result = fdatasync(fd)
      let failure = result == 0 ? 0 : errno
      queue.async { [unowned self] in syncFinished(upTo: target, errno: failure) }
    }
  }

  private func syncFinished(upTo target: UInt64, errno failure: Int32) {
    syncInFlight = false
    guard failure == 0 else {
      // After a failed fdatasync nobody can say what reached the disk. Like
      // PostgreSQL, stop rather than acknowledge: nothing held was sent, and
      // a restart replays what the journal really holds.
      log.error(
        "journal sync failed, stopping so that nothing unsaved is acknowledged",
        ["path": journal.path, "reason": String(cString: strerror(failure))])
      exit(74)  // EX_IOERR
    }
    syncedCount = max(syncedCount, target)
    syncCount += 1
    releaseHeld()
    afterEvent()
  }

  /// Moves held lines whose records are now durable into the output.
  private func releaseHeld() {
    guard !holding.isEmpty else { return }
    let durable = durableCount
    for id in holding {
      guard let connection = connections[id] else {
        holding.remove(id)
        continue
      }
      var released = 0
      for (required, line) in connection.held {
        guard required <= durable else { break }
        connection.output.append(line)
        connection.heldBytes -= line.count
        released += 1
      }
      if released > 0 {
        connection.held.removeFirst(released)
        markDirty(connection)
      }
      if connection.held.isEmpty { holding.remove(id) }
    }
  }

  private func flush(_ connection: Connection) {
    while !connection.output.isEmpty {
      let count = connection.output.withUnsafeBytes { bytes in
        Glibc.send(connection.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
      }
      if count > 0 {
        connection.output.consume(count)
      } else if count < 0 && errno == EINTR {
        continue
      } else if count < 0 && errno == EAGAIN {
        connection.waitForWritable()
        return
      } else {
        drop(connection, reason: count == 0 ? "closed" : String(cString: strerror(errno)))
        return
      }
    }
    connection.stopWaitingForWritable()
    if connection.pendingBytes < resumeReadingBelow { connection.resumeReading() }
    if connection.closing && connection.held.isEmpty { finish(connection) }
  }

  /// A reader too far behind: what it has not taken is dropped, it is told
  /// why (if it ever reads again) and closed, so it never slows anyone else
  /// nor holds memory. One that never reads again is closed after a while
  /// without its BYE.
  private func overflow(_ connection: Connection) {
    connection.overflowed = true
    log.warning(
      "limit reached",
      [
        "limit": "output", "conn": "\(connection.id)", "user": connection.user,
        "bytes": "\(connection.pendingBytes)",
      ])
    // Leave the engine's call first: it may be iterating a room right now.
    let id = connection.id
    queue.async { [unowned self] in
      guard let connection = connections[id] else { return }
      engine.disconnect(id)
      connection.output.discardAll()
      connection.held.removeAll()
      connection.heldBytes = 0
      connection.overflowed = false
      send(BrokerLine.bye("you fell too far behind; reconnect and read HISTORY"), to: id)
      close(id)
      afterEvent()
      queue.asyncAfter(deadline: .now() + .seconds(10)) { [unowned self] in
        if let connection = connections[id] { finish(connection) }
      }
    }
  }

  /// The peer is gone: forget it at once.
  private func drop(_ connection: Connection, reason: String) {
    guard connections[connection.id] != nil else { return }
    engine.disconnect(connection.id)
    connection.closing = true
    connection.held.removeAll()
    log.info("connection lost", ["conn": "\(connection.id)", "reason": reason])
    finish(connection)
  }

  private func finish(_ connection: Connection) {
    guard connections.removeValue(forKey: connection.id) != nil else { return }
    holding.remove(connection.id)
    connection.cancelSources()
    log.info("connection closed", ["conn": "\(connection.id)", "user": connection.user])
  }

  // MARK: - Compaction

  /// Starts a background compaction when the journal has doubled; see
  /// ``Compactor``. The engine keeps serving meanwhile.
  private func compactIfDue() {
    guard journal.shouldCompact, !compacting else { return }
    compacting = true
    let started = DispatchTime.now()
    let length = journal.size
    let path = journal.path
    let temporary = path + ".compacting"
    let limits = options.limits
    runCompactionStep(started: started, temporary: temporary, copied: length) {
      () throws(SystemError) in
      try Compactor.writeCompacted(journal: path, length: length, limits: limits, to: temporary)
    }
  }

  /// Runs one background step of a compaction, then either catches up with
  /// what was appended meanwhile (another background step, while more than
  /// a megabyte is left) or finishes on this queue with a short pause.
  private func runCompactionStep(
    started: DispatchTime, temporary: String, copied: Int64,
    _ step: @escaping @Sendable () throws(SystemError) -> Void
  ) {
    compactionQueue.async { [unowned self] in
      let failure: SystemError?
      do throws(SystemError) {
        try step()
        failure = nil
      } catch {
        failure = error
      }
      queue.async { [unowned self] in
        let end = journal.size
        if failure == nil && end - copied > 1 << 20 {
          let path = journal.path
          runCompactionStep(started: started, temporary: temporary, copied: end) {
            () throws(SystemError) in
            try FileJournal.copy(path, from: copied, to: end, appendingTo: temporary)
          }
        } else {
          finishCompaction(temporary: temporary, length: copied, started: started, failure: failure)
        }
      }
    }
  }

  private func finishCompaction(
    temporary: String, length: Int64, started: DispatchTime, failure: SystemError?
  ) {
    compacting = false
    let before = journal.size
    let pauseStarted = DispatchTime.now()
    do throws(SystemError) {
      if let failure { throw failure }
      let old = try journal.finishCompaction(temporary: temporary, copiedUpTo: length)
      // A sync may still be running on the old descriptor: close it after.
      syncQueue.async { _ = Glibc.close(old) }
    } catch {
      unlink(temporary)
      journal.postponeCompaction()
      log.error("journal compaction failed", ["reason": error.description])
      return
    }
    // The compacted file was synced, and it holds everything appended.
    syncedCount = journal.writtenCount
    releaseHeld()
    let now = DispatchTime.now().uptimeNanoseconds
    log.info(
      "journal compacted",
      [
        "bytes_before": "\(before)", "bytes_after": "\(journal.size)",
        "ms": String(format: "%.1f", Double(now - started.uptimeNanoseconds) / 1e6),
        "pause_ms": String(format: "%.1f", Double(now - pauseStarted.uptimeNanoseconds) / 1e6),
      ])
    afterEvent()
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
    listeners.removeAll()
    engine.shutdown()
    afterEvent()
    waitForDrain(until: .now() + deadline, completion: completion)
  }

  private func waitForDrain(until giveUp: DispatchTime, completion: @escaping @Sendable () -> Void)
  {
    if connections.isEmpty || DispatchTime.now() >= giveUp {
      completion()
    } else {
      queue.asyncAfter(deadline: .now() + .milliseconds(5)) { [unowned self] in
        waitForDrain(until: giveUp, completion: completion)
      }
    }
  }
}

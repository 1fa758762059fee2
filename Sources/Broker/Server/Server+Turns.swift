import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// Turns: each ready connection's requests are served a turn at a time,
/// bounded by requests, reply bytes and time, round-robin with the other
/// connections that have requests left, and paused while its own replies
/// wait to drain (back-pressure).
extension Server {
  /// Bytes queued for all connections that trigger a flush in the middle
  /// of a turn.
  static let flushAbove = 256 * 1024

  /// Output above which a connection's requests wait (back-pressure), and
  /// below which they are served again.
  static let pauseReadingAbove = 256 * 1024
  static let resumeReadingBelow = 64 * 1024

  /// Requests served from one connection per turn before the others get
  /// theirs, and the reply bytes after which its turn ends early: one
  /// flooding client costs everybody else at most one short turn.
  static let requestsPerTurn = 64
  static let replyBytesPerTurn = 64 * 1024
  /// And time: requests cost unequal work (a page of an IRC CHATHISTORY,
  /// a LIST page, a JOIN with its backlog, a HISTORY of 4 MB), so a count
  /// alone lets a few heavy turns hold a pass. Each turn adds this much to
  /// a connection's time credit (never above one turn's worth), its
  /// requests' time is taken from it, and the turn ends when it is spent;
  /// a request that took many turns' worth leaves the connection owing,
  /// and it skips its turns until the others have had as much time.
  static let nanosecondsPerTurn: Int64 = 2_000_000
  /// Requests a turn serves before its time credit can end it, unless
  /// they take a whole turn's time (``nanosecondsPerTurn``) first.
  static let minimumRequestsPerTurn = 16
  /// A request that looks at every conversation is charged one request per
  /// this many of them, so that with a few hundred conversations it has a
  /// turn to itself.
  static let conversationsPerRequest = 4
  /// A `SEARCH` is charged one request per this many candidates it
  /// examined (at most 2,000, chatbroker(7) SEARCH), so that a flood of
  /// costly searches is served a few a turn.
  static let searchCandidatesPerRequest = 100
  /// And a request that expands a recurrence rule, one request per this
  /// many of libical's steps it took (at most 1,500, chatbroker(7) "Series":
  /// what a rule may cost), about what a cheap request costs.
  static let expansionStepsPerRequest = 100

  /// One ready registration of a ``ReadinessPoll`` pass. A listener
  /// accepts. A connection: output first, which may let its requests go
  /// on, then input. Replies that may leave are written right after its
  /// turn, so that a `PING` waits for the turns before its own and not for
  /// the whole pass (the fuzzer's probe measures this); the pass ends with
  /// ``endOfPass()``, which writes the journal once for all of them.
  func ready(_ event: ReadinessPoll.Event) {
    if let index = ReadinessPoll.listenerIndex(event.token) {
      if index < accepting.listeners.count {
        accept(from: accepting.listeners[index].fd, wire: accepting.listeners[index].wire)
      }
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
    if connection.lingering { return drain(connection) }
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
      let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])
      if let codec = connection.selfFraming {
        codec.take(bytes)
      } else {
        connection.framer.append(bytes)
      }
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
    var budget = Self.requestsPerTurn
    let replyLimit = connection.pendingBytes + Self.replyBytesPerTurn
    connection.timeCredit = min(
      connection.timeCredit + Self.nanosecondsPerTurn, Self.nanosecondsPerTurn)
    let started = DispatchTime.now().uptimeNanoseconds
    func spent() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds - started) }
    defer { connection.timeCredit -= spent() }
    while budget > 0, !connection.closing, connection.mayHaveRequests,
      connection.pendingBytes < replyLimit, connection.timeCredit > 0
    {
      // A few requests past the credit, so that cheap ones (SAYs) still
      // share a journal sync; past those, the credit decides. Never past a
      // whole turn's time, though: heavy requests (a HISTORY page, a
      // SEARCH) served sixteen at a time made turns of 30 ms in a debug
      // broker, and another user's PING waits for every turn before its
      // own (chatfuzz's probe on the web door, p99 52 ms against 50).
      let elapsed = spent()
      if elapsed >= Self.nanosecondsPerTurn
        || (budget <= Self.requestsPerTurn - Self.minimumRequestsPerTurn
          && elapsed >= connection.timeCredit)
      {
        break
      }
      if connection.pendingBytes >= Self.pauseReadingAbove {
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
      if queuedSinceFlush > max(Self.flushAbove, dirty.count * 4096) { flushDirty() }
    }
    if connection.pendingBytes >= Self.pauseReadingAbove { connection.outputBlocked = true }
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

  /// A connection's replies drained below ``resumeReadingBelow``: its
  /// waiting requests get turns again.
  func outputDrained(_ connection: Connection) {
    guard connection.outputBlocked, connection.pendingBytes < Self.resumeReadingBelow,
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
}

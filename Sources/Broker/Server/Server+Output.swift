import CShims
import Dispatch
import Glibc
import LineProtocol

/// A line for one connection, not yet in its output.
enum QueuedLine {
  /// Bytes already in the connection's wire format (an IRC reply that
  /// needed nothing from the engine).
  case bytes([UInt8])
  /// An event, encoded by the connection's codec when it is written, as a
  /// reply to the request `answering` stands for, if any.
  case event(Outgoing, answering: ReplyContext?)

  /// What it counts for against the connection's output limits while it
  /// is held: an event's line-protocol length (shared, encoded once per
  /// event), close to its length in any wire format and known without
  /// encoding it for this connection.
  var heldBytes: Int {
    switch self {
    case .bytes(let bytes): bytes.count
    case .event(let outgoing, _): outgoing.line.count
    }
  }
}

/// A line waiting for a sync, or behind one of its connection that does.
/// An event keeps its ``Outgoing`` and reply context and is encoded only
/// when it is released, or settled after a failed sync: so a reply becomes
/// bytes once, in its connection's order, with what it answers. (The line
/// protocol's lines are the event's one shared encoding, the same bytes
/// at any time: they are held as those bytes, ``WireCodec/queued(_:answering:)``.)
///
/// Four words: a `SAY` to 1,000 receivers holds 1,000 of them until its
/// sync, and the bytes they take are written and read back per delivery
/// (`HeldLineLayoutTests`; at 112 bytes the durable fan-out to 1,000 cost
/// half as much again of the serving thread per `SAY`). So the byte
/// count is computed, not stored.
struct HeldLine {
  /// It may leave once this many journal records are durable.
  let journalCount: UInt64
  /// What it shows, so a failed sync knows what to make of it.
  let kind: LineKind
  let line: QueuedLine
  /// What it counts for against its connection's output limit.
  var bytes: Int { line.heldBytes }
}

/// What the engine's effects become: lines queued per connection, those
/// that show unsynced records held until the records are durable (and
/// every later line of the connection behind them), flushed with one
/// send(2) per connection; closes; the one schedule timer (the poll's
/// wall-clock timerfd). And what ends every pass, ``endOfPass()``.
extension Server: EngineOutput {
  public func send(_ outgoing: Outgoing, to id: ConnectionID, kind: LineKind) {
    guard let connection = connections[id], !connection.overflowed else { return }
    enqueue(
      connection.codec.queued(outgoing, answering: connection.answering), to: connection,
      kind: kind)
  }

  /// Queues a line: written now when nothing of the connection waits for
  /// a sync and it shows nothing unsynced, else held.
  @inline(__always)
  func enqueue(_ line: QueuedLine, to connection: Connection, kind: LineKind) {
    // A stateless line shows no record: it waits only behind earlier lines.
    let required = kind.waitsForSync ? committer.writtenCount : 0
    if connection.held.isEmpty && required <= committer.durableCount {
      // Only the request being served may leave lines for its later
      // steps: those are served before anything else it sent. Lines
      // released or settled after a sync are followed by others at once.
      write(line, to: connection, mayDefer: serving == connection.id, limited: true)
    } else {
      let bytes = line.heldBytes
      guard fits(bytes, connection) else { return }
      // A connection with held lines is in `holding` already: one hash
      // per connection and sync, not per line.
      if connection.held.isEmpty { holding.insert(connection.id) }
      connection.held.append(HeldLine(journalCount: required, kind: kind, line: line))
      connection.heldBytes += bytes
    }
  }

  /// Encodes a line in the connection's wire format into its output; the
  /// codec then hears that a reply of its request was written. `limited`:
  /// the output limit applies (``fits(_:_:)``); a held line that is
  /// released was admitted when it was held, and its bytes counted then.
  @inline(__always)
  func write(_ line: QueuedLine, to connection: Connection, mayDefer: Bool, limited: Bool) {
    // Overflowed in this very release or settlement: the rest is dropped
    // with everything else it had queued (``overflow(_:)``).
    guard !connection.overflowed else { return }
    let bytes: [UInt8]
    var context: ReplyContext?
    switch line {
    case .bytes(let encoded): bytes = encoded
    case .event(let outgoing, let answering):
      bytes = connection.codec.encode(outgoing, answering: answering, mayDefer: mayDefer)
      context = answering
    }
    if limited { guard fits(bytes.count, connection) else { return } }
    connection.output.append(bytes)
    queuedSinceFlush += bytes.count
    markDirty(connection)
    if let context { connection.codec.answered(context) }
  }

  /// Whether `bytes` more stay within the connection's output limit;
  /// when not, it is overflowed. A connection's own replies are bounded
  /// by back-pressure instead, so the limit is not applied to them.
  @inline(__always)
  func fits(_ bytes: Int, _ connection: Connection) -> Bool {
    guard connection.pendingBytes + bytes > options.limits.outputBytesPerConnection,
      connection.id != serving
    else { return true }
    overflow(connection)
    return false
  }

  /// The engine is done with a connection (its `QUIT`, its end, a `BYE`):
  /// what it was sent is flushed, then it is closed, or lingers first
  /// (``linger(_:)``).
  ///
  /// A closing connection is no session of its user's any more (the
  /// engine forgot it), so the sessions limit no longer bounds it, and a
  /// client that asked for much and quit could keep it open by never
  /// reading its replies. So it is closed once its client has taken
  /// nothing for ``lingerMilliseconds`` (``closeWhenTaken(_:remaining:stalledMilliseconds:)``),
  /// and a user may have as many closing as sessions: one more is closed
  /// in the next pass, with what the kernel took of its output by then
  /// (logged `limit=closing`), so that nobody holds the broker's
  /// descriptors by quitting and reading a byte now and then. While the
  /// broker stops every connection closes, each within the shutdown's
  /// deadline, and none is refused.
  public func close(_ id: ConnectionID) {
    guard let connection = connections[id], !connection.closing else { return }
    // The wire's last words (a WebSocket close frame), after all else.
    let farewell = connection.codec.farewell()
    if !farewell.isEmpty { enqueue(.bytes(farewell), to: connection, kind: .stateless) }
    connection.startClosing()
    connection.pauseReading()
    markDirty(connection)
    let closing = closingByUser[connection.user, default: 0]
    guard stopping || closing < options.limits.sessionsPerUser else {
      // After this pass's flush, and outside the engine's call.
      poll.post { [unowned self] in
        guard let connection = connections[id] else { return }
        engine.logLimit(
          "closing", user: connection.user,
          [(key: "closing", value: "\(closing)"), (key: "conn", value: "\(id)")])
        finish(connection)
      }
      return
    }
    closingByUser[connection.user] = closing + 1
    connection.holdsClosingSlot = true
    closeWhenTaken(id, remaining: .max, stalledMilliseconds: 0)
  }

  public func armTimer(at due: Timestamp?) {
    poll.armWallClockTimer(at: due?.milliseconds)
  }

  // MARK: - Output and group commit

  func markDirty(_ connection: Connection) {
    if !connection.isDirty {
      connection.isDirty = true
      dirty.append(connection)
    }
  }

  /// What ends every pass of the poll, in this order, and the only place
  /// that says it: the counterpart of redis' `beforeSleep`, which writes
  /// the AOF once per turn of its event loop, syncs it by policy and only
  /// then writes the replies waiting for it. Whatever ran in the pass
  /// (readiness, turns, the schedule timer, sync results, NATS
  /// deliveries, compaction steps, deadlines) only gathered records and
  /// queued lines; none of it writes the journal or a socket of a
  /// connection it did not serve.
  func endOfPass() {
    // 1. The records of the whole pass: one pwrite(2), then the sync is
    //    asked of the group commit thread, or made here when at most one
    //    connection waits (a compaction that is due starts here too).
    committer.endOfPass(mayWaitForSync: holding.count <= 1)
    // 2. What the committer counts durable now may be shown: held lines
    //    (those of a sync that returned at the start of the pass left
    //    then, journalSynced), and
    //    3. outbox lines, which go to the link to be published.
    releaseDurable()
    offerDurableOutbox()
    announcePresence()
    // 4. One send(2) per connection with output released.
    flushDirty()
    // 5. A shutdown whose clients have read their BYE ends.
    completeShutdownIfDrained()
    // 6. systemd's STATUS= line, at most once a second.
    onStatusChange?()
    // 7. The next slice of the word index start-up left to build.
    continueWordIndex()
  }

  /// The words of the messages replayed at start-up are indexed a slice
  /// per pass (Engine+WordIndex), posted so that the loop wakes for the
  /// next slice even when nothing else happens, and so that requests and
  /// timers get their turn between slices.
  func continueWordIndex() {
    if let started = wordIndexStarted, !engine.hasWordsToIndex {
      // Done, by the last slice or by a search that indexed the rest.
      log.info(
        "search index built",
        [
          "sliced": "\(wordIndexedMessages)",
          "ms": "\((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)",
        ])
      (wordIndexStarted, wordIndexedMessages) = (nil, 0)
    }
    guard !wordIndexPosted, engine.hasWordsToIndex else { return }
    wordIndexPosted = true
    if wordIndexStarted == nil { wordIndexStarted = DispatchTime.now().uptimeNanoseconds }
    poll.post { [unowned self] in
      wordIndexPosted = false
      wordIndexedMessages += engine.indexWords(messages: Self.wordIndexSlice)
    }
  }

  /// Releases the held lines up to the committer's durable count, once
  /// per change of it.
  func releaseDurable() {
    let durable = committer.durableCount
    guard durable > releasedUpTo else { return }
    releasedUpTo = durable
    releaseHeld(upTo: durable)
  }

  /// Writes every connection with released output.
  func flushDirty() {
    queuedSinceFlush = 0
    let toFlush = dirty
    dirty.removeAll(keepingCapacity: true)
    for connection in toFlush {
      connection.isDirty = false
      flush(connection)
    }
  }

  /// Moves held lines whose records are now durable (the first `durable`
  /// of the journal) into the output, encoding them now.
  func releaseHeld(upTo durable: UInt64) {
    guard !holding.isEmpty else { return }
    for id in holding {
      guard let connection = connections[id] else {
        holding.remove(id)
        continue
      }
      var released = false
      while let held = connection.held.popFirst(durable: durable) {
        connection.heldBytes -= held.bytes
        released = true
        write(held.line, to: connection, mayDefer: false, limited: false)
      }
      if released { markDirty(connection) }
      if connection.held.isEmpty { holding.remove(id) }
      continueSteps(of: connection)
    }
  }

  /// After a failed sync, once the engine rolled the unsynced records back:
  /// every held line of those records is settled by its kind, in order, so
  /// each request still gets exactly one final reply and it matches the
  /// state. Stateless and lasting lines leave as they were; revealing lines
  /// are dropped; the final reply of a request that wrote records becomes
  /// `ERR <VERB> STORAGE`; a request that wrote nothing is answered again.
  /// Each keeps the request it answers, so an IRC client reads the error
  /// or the new answer as a reply to its own command.
  func settleHeld(because text: String) {
    let settling = holding.sorted()
    holding.removeAll()
    for id in settling {
      guard let connection = connections[id] else { continue }
      let held = connection.held.takeAll()
      connection.heldBytes = 0
      for line in held {
        switch line.kind {
        case .stateless, .lasting:
          enqueue(line.line, to: connection, kind: .stateless)
        case .revealing:
          continue
        case .outcome(let verb):
          refuse(verb, because: text, answering: line.line.context, on: connection)
        case .answer(let request):
          var answered = false
          answer(for: connection, line.line.context) {
            answered = engine.answerAgain(request, for: id)
          }
          // A connection whose client has gone (it half-closed, or sent
          // QUIT) is no session of the engine's any more: it cannot be
          // answered again, and gets the refusal, so that each of its
          // requests still has one reply, in order.
          if !answered {
            refuse(request.verb, because: text, answering: line.line.context, on: connection)
          }
        }
      }
      markDirty(connection)
      continueSteps(of: connection)
    }
  }

  /// `ERR <verb> STORAGE` for a held reply whose records, or what it saw,
  /// a failed sync rolled back.
  private func refuse(
    _ verb: Verb, because text: String, answering context: ReplyContext?, on connection: Connection
  ) {
    let refusal = Outgoing(.error(verb: verb.rawValue, code: .storage, text: text))
    enqueue(connection.codec.queued(refusal, answering: context), to: connection, kind: .stateless)
  }

  /// Replies just written may call for steps of their own (an IRC LIST's
  /// next page, a CHATHISTORY's): the connection needs a turn for them.
  func continueSteps(of connection: Connection) {
    guard connection.codec.hasPendingSteps, serving != connection.id else { return }
    connection.mayHaveRequests = true
    continueInput(connection)
  }

  func flush(_ connection: Connection) {
    // Finished earlier in this pass (dropped while it was dirty): its
    // descriptor is closed, and a connection accepted since, or any file
    // opened since, may have its number. Nothing more may be sent on it.
    guard !connection.isFinished else { return }
    while !connection.output.isEmpty {
      let sent: IOResult<Int>
      do {
        sent = try ioCall("send") {
          connection.output.withUnsafeBytes { bytes in
            Glibc.send(connection.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
          }
        }
      } catch {
        drop(connection, reason: error.reason)
        return
      }
      switch sent {
      case .processed(let count) where count > 0:
        connection.output.consume(count)
      case .processed:
        drop(connection, reason: "closed")
        return
      case .wouldBlock, .interrupted:
        connection.waitForWritable()
        return
      }
    }
    connection.stopWaitingForWritable()
    if connection.closing && connection.held.isEmpty {
      if connection.closesGracefully && !connection.inputEnded {
        linger(connection)
      } else {
        finish(connection)
      }
    } else {
      outputDrained(connection)
    }
  }

  /// A reader too far behind: what it has not taken is dropped (except the
  /// rest of a line it has begun to read, so its `BYE` starts a line), it
  /// is told why (if it ever reads again) and closed, so it never slows
  /// anyone else nor holds memory. One that never reads again is closed
  /// after a while without its BYE. Only others' lines (fan-out) get here:
  /// a connection's own replies are bounded by back-pressure instead.
  func overflow(_ connection: Connection) {
    connection.startOverflow()
    log.warning(
      "limit reached",
      [
        "limit": "output", "conn": "\(connection.id)", "user": connection.user,
        "bytes": "\(connection.pendingBytes)",
      ])
    // Leave the engine's call first: it may be iterating a room right now.
    let id = connection.id
    poll.post { [unowned self] in
      guard let connection = connections[id] else { return }
      engine.disconnect(id)
      connection.output.discardUnsent()
      connection.held.removeAll()
      connection.heldBytes = 0
      connection.endOverflow()
      send(.bye("you fell too far behind; reconnect and read HISTORY"), to: id)
      // One that never reads again is closed as every closing one is.
      close(id)
    }
  }

  /// How long a closing connection waits for its client to take any more
  /// of what it was sent (or to end) before it is closed anyway: nginx's
  /// `lingering_timeout`. A client busy elsewhere for a moment (chatfuzz's,
  /// checking another connection's flood) is not "gone".
  public static let lingerMilliseconds = 5000
  /// How often a closing connection looks whether its client took more.
  static let lingerCheckMilliseconds = 50

  /// A TCP connection is done and its output all handed to the kernel:
  /// its sending side is shut (the client reads the rest, then the end),
  /// and its input read and thrown away until the client's end, or until
  /// the client acknowledged every byte, so that closing it never resets
  /// it before the client has all of it (see
  /// ``Connection/closesGracefully``). It is still one of its user's
  /// closing connections, closed anyway once its client takes nothing for
  /// ``lingerMilliseconds`` (``close(_:)``).
  func linger(_ connection: Connection) {
    guard !connection.lingering else { return }
    connection.lingering = true
    Glibc.shutdown(connection.fd, Int32(SHUT_WR))
    connection.drainInput()
  }

  /// Looks again in ``lingerCheckMilliseconds`` how much of what a closing
  /// connection was sent its client has yet to take: what waits in the
  /// broker and what the kernel holds (on TCP, what the client has not
  /// acknowledged; on a Unix socket, what it has not read). A lingering
  /// one with none left is closed (a reset can take back nothing now);
  /// any with no less left for ``lingerMilliseconds`` is closed too: its
  /// client is not reading. What it had not taken is lost only to a client
  /// that stopped reading (and, on TCP, went on sending: closing a socket
  /// whose peer still sends makes the kernel reset the connection and drop
  /// what it had not delivered).
  private func closeWhenTaken(
    _ id: ConnectionID, remaining before: Int, stalledMilliseconds stalled: Int
  ) {
    poll.after(milliseconds: Self.lingerCheckMilliseconds) { [unowned self] in
      guard let connection = connections[id] else { return }
      let inKernel = Int(chat_unacknowledged_bytes(connection.fd))
      let remaining = connection.pendingBytes + max(0, inKernel)
      // Lines held for the journal's sync wait for the broker, not the client.
      let taking = remaining < before || !connection.held.isEmpty
      let stalled = taking ? 0 : stalled + Self.lingerCheckMilliseconds
      if (connection.lingering && inKernel <= 0) || stalled >= Self.lingerMilliseconds {
        finish(connection)
      } else {
        closeWhenTaken(id, remaining: remaining, stalledMilliseconds: stalled)
      }
    }
  }

  /// A lingering connection's input: read and thrown away, a few reads a
  /// turn; at its end (or an error) it is closed.
  func drain(_ connection: Connection) {
    for _ in 0..<4 {
      let count = Glibc.read(connection.fd, readBuffer.baseAddress, readBuffer.count)
      if count > 0 { continue }
      if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
      finish(connection)
      return
    }
  }

  /// The peer is gone: forget it at once.
  func drop(_ connection: Connection, reason: String) {
    guard connections[connection.id] != nil else { return }
    engine.disconnect(connection.id)
    connection.startClosing()
    connection.held.removeAll()
    logConnection(
      .info, "connection lost", user: connection.user,
      [("conn", "\(connection.id)"), ("user", connection.user), ("reason", reason)])
    finish(connection)
  }

  func finish(_ connection: Connection) {
    guard connections.removeValue(forKey: connection.id) != nil else { return }
    if connection.holdsClosingSlot {
      let closing = closingByUser[connection.user, default: 1] - 1
      closingByUser[connection.user] = closing > 0 ? closing : nil
    }
    holding.remove(connection.id)
    endAdmission(connection)
    connection.closeDescriptor()
    // A descriptor is free: a listener paused at the limit may go on.
    resumeAccepting()
    logConnection(
      .info, "connection closed", user: connection.user,
      [("conn", "\(connection.id)"), ("user", connection.user)])
  }
}

extension QueuedLine {
  /// The request an event answers, if any.
  var context: ReplyContext? {
    if case .event(_, let answering) = self { answering } else { nil }
  }
}

import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// What stops or limits accepting, kept together: the listeners, a pause
/// after accept(2) ran out of descriptors or memory, and the descriptor in
/// reserve for refusing a client at the limit.
struct Accepting {
  /// The listening sockets, registered in the poll under
  /// ``ReadinessPoll/listenerToken(_:)`` of their index.
  var listeners: [(fd: Int32, wire: WireFormat)] = []
  /// Accepting stopped (the listeners unwatched) because accept(2) ran out
  /// of descriptors or memory; it resumes when a connection closes or after
  /// a short pause.
  var paused = false
  /// Set from the first refusal at the descriptor limit until a connection
  /// is accepted again, so the log says it once rather than per attempt.
  var atDescriptorLimit = false
  var refusedAtLimit = 0
  /// A descriptor kept open to be given back at the limit, just long enough
  /// to accept a waiting client and tell it `ERR - LIMIT`.
  var reserveDescriptor: Int32 = -1
}

/// The doors: listening sockets, accepting (bounded per wake-up, paused
/// at the descriptor limit), each new connection's identity from the
/// kernel and its codec, and the connection log.
extension Server {

  /// Serves a listening socket (bound here or passed by systemd) whose
  /// clients speak `wire`: registered in the poll, so that its clients are
  /// accepted in a pass like any other event. On the queue.
  public func listen(on fd: Int32, wire: WireFormat = .line) throws(SystemError) {
    let token = ReadinessPoll.listenerToken(accepting.listeners.count)
    try poll.register(fd, token: token)
    accepting.listeners.append((fd, wire))
    if !accepting.paused { poll.watch(fd, token: token, for: .readable) }
  }

  /// At most this many connections are accepted per pass from a listener;
  /// then other work runs, and the poll reports the listener again while
  /// clients wait. A connect flood costs the others at most one such batch
  /// at a time (chatbroker(8), SECURITY CONSIDERATIONS).
  static let acceptsPerEvent = 16

  func accept(from listener: Int32, wire: WireFormat) {
    var attempts = 0
    while !stopping && !accepting.paused && attempts < Self.acceptsPerEvent {
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
      if accepting.atDescriptorLimit {
        accepting.atDescriptorLimit = false
        log.info("accepting connections again", ["refused": "\(accepting.refusedAtLimit)"])
        accepting.refusedAtLimit = 0
      }
      open(fd, wire: wire)
    }
  }

  /// Out of descriptors: the waiting clients would hang, and the listener
  /// would fire again at once for them. The reserve descriptor is given
  /// back, to accept each in turn and tell it `ERR - LIMIT` before closing
  /// it (chatbroker(7), "Limits"); then the reserve is taken again.
  func refuseAtLimit(_ listener: Int32, _ failure: Int32) {
    if !accepting.atDescriptorLimit {
      accepting.atDescriptorLimit = true
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
    for _ in 0..<64 where accepting.reserveDescriptor >= 0 {
      Glibc.close(accepting.reserveDescriptor)
      let fd = chat_accept_nonblocking(listener)
      if fd >= 0 {
        _ = refusal.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        Glibc.close(fd)
        accepting.refusedAtLimit += 1
      }
      accepting.reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
      if fd < 0 { break }
    }
  }

  /// Stops accepting until a connection closes or a short pause is over.
  func pauseAccepting() {
    guard !accepting.paused else { return }
    accepting.paused = true
    watchListeners(for: [])
    poll.after(milliseconds: 250) { [unowned self] in resumeAccepting() }
  }

  func resumeAccepting() {
    guard accepting.paused else { return }
    accepting.paused = false
    if accepting.reserveDescriptor < 0 {
      accepting.reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
    watchListeners(for: .readable)
  }

  private func watchListeners(for interest: ReadinessPoll.Interest) {
    for (index, listener) in accepting.listeners.enumerated() {
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
    if wire == .web, let reason = webDoorRefusal(uid: uid, user: user) {
      refuseAtWebDoor(fd, user: user, reason: reason)
      return
    }
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
        id: id, fd: fd, user: user, codec: codec(for: wire, user: user, id: id), poll: poll,
        closesGracefully: wire.credentials == .tcpSocketOwner)
    } catch {
      connections.abandon(id)
      logConnection(.error, "connection refused", user: user, [("reason", error.description)])
      Glibc.close(fd)
      return
    }
    // TCP: each pass's output is one send(2) already, and should leave at
    // once; with Nagle's algorithm a write waited while the last was
    // unacknowledged, which a client delaying its acknowledgements made
    // cost up to a delayed-ACK timeout (chatbroker(8), THE WEB DOOR).
    if connection.closesGracefully { _ = chat_send_without_delay(fd) }
    connections[id] = connection
    logConnection(.info, "connection opened", user: user, [("conn", "\(id)"), ("user", user)])
    if !connection.codec.greetsAtConnect {
      awaitAdmission(connection)
      connection.resumeReading()
    } else if engine.connect(id, user: user) {
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
}

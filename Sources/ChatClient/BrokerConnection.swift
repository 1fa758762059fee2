import CShims
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// Why talking to the broker failed; every case maps to exit status 69.
public enum ConnectionError: Error, Equatable, CustomStringConvertible {
  /// `connect(2)` failed: nobody listens on `path`, or we may not.
  case cannotConnect(path: String, errno: Int32)
  /// The broker did not answer within the time allowed.
  case timeout(path: String, seconds: Int)
  /// The broker closed the connection before the expected reply.
  case closed(path: String, detail: String)
  /// The process that answers runs as a user chatsh does not trust (see
  /// ``BrokerTrust``); nothing was sent to it.
  case untrusted(path: String, uid: UInt32, name: String?)
  /// A system call failed.
  case system(call: String, errno: Int32)
  /// `path` exists but is no socket (a regular file, a directory).
  case notASocket(path: String, kind: String)
  /// Something answers at `path`, but its first line is not `HELLO`: not
  /// a chatbroker line socket (the broker's IRC socket, say).
  case notLineProtocol(path: String, firstLine: String)

  public var description: String {
    switch self {
    case .cannotConnect(let path, let code):
      var text = "no broker answers at \(path): \(errorText(code))"
      if code == EACCES {
        text += "\n(the socket's owner, group and mode decide who may connect;"
        text += " ask the administrator to let you in)"
      } else if path == DefaultPaths.systemSocket && getuid() != 0 {
        // Only root binds there: a user's own broker binds elsewhere.
        text += "\nthe system broker is not running: ask the administrator to start it"
        text += "\n(or start your own with: chatbroker &, or use --socket PATH"
        text += " or CHATBROKER_SOCKET to name another socket)"
      } else {
        text += "\nstart one with: chatbroker --socket \(shellQuoted(path)) &"
        text += "\n(or use --socket PATH or CHATBROKER_SOCKET to name another socket)"
      }
      return text
    case .timeout(let path, let seconds):
      return
        "the broker at \(path) did not answer within \(seconds) second\(seconds == 1 ? "" : "s")"
    case .closed(let path, let detail):
      return "the broker at \(path) closed the connection\(detail.isEmpty ? "" : ": " + detail)"
    case .untrusted(let path, let uid, let name):
      let who = name.map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
      let option = name ?? String(uid)
      var text = "the broker at \(path) runs as \(who), not as you, root or"
      text += " \(BrokerTrust.systemUser): it may be someone else's listener, so nothing was sent"
      text += "\nif you trust the broker that \(who) runs, use --trust-user \(option)"
      text += " (or CHATBROKER_TRUST_USER=\(option))"
      return text
    case .system(let call, let code):
      return "\(call): \(errorText(code))"
    case .notASocket(let path, let kind):
      return "\(path) is \(kind), not a socket: name the broker's socket"
        + " (--socket PATH or CHATBROKER_SOCKET), such as \(DefaultPaths.systemSocket)"
    case .notLineProtocol(let path, let firstLine):
      var text = "\(path) is not a chatbroker line socket: it answered "
      text += "\"\(sanitized(String(firstLine.prefix(60))))\", not HELLO"
      if firstLine.hasPrefix(":") || firstLine.hasPrefix("PONG") || firstLine.hasPrefix("NOTICE") {
        text += "\n(it speaks IRC: that is the broker's IRC socket, for IRC clients;"
        text += " chatsh talks to chatbroker.sock beside it)"
      }
      return text
    }
  }
}

func errorText(_ code: Int32) -> String {
  String(cString: strerror(code))
}

func shellQuoted(_ text: String) -> String {
  let safe = text.unicodeScalars.allSatisfy {
    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
      || "/._-+:@%".unicodeScalars.contains($0)
  }
  return safe ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// One connection to the broker over its Unix socket: a non-blocking
/// descriptor, an output queue flushed when the socket can take it, and a
/// ``LineFramer`` for what comes back. It never blocks except in ``wait``.
public final class BrokerConnection {
  public let path: String
  public let fd: Int32
  private var framer = LineFramer(maximumLineBytes: 1 << 20)
  private var outbox: [UInt8] = []
  private var outboxStart = 0
  private var writeShutdownRequested = false
  private var writeShutDown = false
  /// The broker closed its side; lines still buffered can be read.
  public private(set) var readClosed = false
  /// Every byte read from the broker so far, closing included: what
  /// ``nextLine(timeoutSeconds:)`` counts as the broker speaking.
  private var bytesReceived = 0
  /// A line ``greeting(timeoutSeconds:)`` read that was not its PING's
  /// answer, given back first.
  private var held: [ServerLine] = []

  /// Connects to the socket at `path`, and checks who answers before
  /// anything is sent: a broker run by someone `trust` does not name is
  /// refused, so an impostor's socket never reads a line.
  public init(path: String, trust: BrokerTrust = BrokerTrust()) throws(ConnectionError) {
    self.path = path
    let fd: Int32
    do {
      fd = try UnixSocket.connect(to: path)
    } catch {
      if error.call == "socket" { throw .system(call: "socket", errno: error.errno) }
      if let kind = Self.notSocketKind(path) { throw .notASocket(path: path, kind: kind) }
      throw .cannotConnect(path: path, errno: error.errno)
    }
    do throws(ConnectionError) {
      try trust.check(fd, path: path)
    } catch {
      close(fd)
      throw error
    }
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    self.fd = fd
  }

  deinit {
    close(fd)
  }

  /// What `path` is when it exists and is no socket (`a regular file`),
  /// so that the error does not suggest starting a broker on it.
  static func notSocketKind(_ path: String) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    switch status.st_mode & S_IFMT {
    case S_IFSOCK: return nil
    case S_IFREG: return "a regular file"
    case S_IFDIR: return "a directory"
    case S_IFIFO: return "a named pipe"
    default: return "no socket"
    }
  }

  /// The broker's first line: `HELLO`, or the refusal it sends instead
  /// (chatbroker(7), `HELLO`). A `PING` goes out with the wait, and its
  /// `OK PING` is read here after `HELLO`: a broker greets first whatever
  /// it is sent, but something else listening there (the broker's IRC
  /// socket, which says nothing until spoken to) answers with a line that
  /// is not `HELLO`, and that is said at once instead of after a timeout.
  public func greeting(timeoutSeconds: Int) throws(ConnectionError) -> ServerLine {
    send(.ping(token: Self.probeToken))
    flushIfPossible()
    guard let first = try nextLine(timeoutSeconds: timeoutSeconds) else {
      throw .closed(path: path, detail: "before saying HELLO")
    }
    if case .event(.hello) = first {
      // Replies come in order, so the PING's is the first final one; an
      // event before it (a direct message) is given back afterwards.
      var before: [ServerLine] = []
      while let line = try nextLine(timeoutSeconds: timeoutSeconds) {
        if line.isFinalReply {
          if line != .event(.ok(.ping, fields: [Self.probeToken])) { before.append(line) }
          break
        }
        before.append(line)
      }
      held = before
      return first
    }
    if first.refusal != nil { return first }
    var text = "\(first)"
    if case .unreadable(let line) = first { text = line }
    throw .notLineProtocol(path: path, firstLine: text)
  }

  static let probeToken = "chatsh"

  /// Queues one request, written by ``LineCodec``'s request encoder.
  public func send(_ request: Request) {
    LineCodec.append(request, to: &outbox)
  }

  /// Bytes queued and not yet written.
  public var pendingOutput: Int { outbox.count - outboxStart }

  /// Half-closes the connection once everything queued is written: the
  /// broker then answers what it has and closes (chatbroker(7), "Transport and framing").
  public func shutdownWriteWhenFlushed() {
    writeShutdownRequested = true
    flushIfPossible()
  }

  /// The next complete line already received, without waiting.
  public func bufferedLine() -> ServerLine? {
    if !held.isEmpty { return held.removeFirst() }
    while let frame = framer.next() {
      if case .line(let line) = frame { return ServerLine(parsing: line) }
    }
    if readClosed, let frame = framer.finish(), case .line(let line) = frame {
      return ServerLine(parsing: line)
    }
    return nil
  }

  /// The next line from the broker, waiting at most `timeoutSeconds` of
  /// silence (`nil`: forever); `nil` when the broker has closed. Only
  /// bytes from the broker end the silence: a signal that interrupts the
  /// wait, or a write that drains, leaves the deadline where it was.
  public func nextLine(timeoutSeconds: Int?) throws(ConnectionError) -> ServerLine? {
    var deadline = timeoutSeconds.map { MonotonicClock.seconds() + Double($0) }
    while true {
      if let line = bufferedLine() { return line }
      if readClosed { return nil }
      var timeout: Int32 = -1
      if let deadline, let timeoutSeconds {
        let left = deadline - MonotonicClock.seconds()
        guard left > 0 else { throw .timeout(path: path, seconds: timeoutSeconds) }
        timeout = Int32((left * 1000).rounded(.up))
      }
      let received = bytesReceived
      _ = try wait(extra: [], timeoutMilliseconds: timeout)
      if bytesReceived != received, let timeoutSeconds {
        deadline = MonotonicClock.seconds() + Double(timeoutSeconds)
      }
    }
  }

  /// One poll(2) round over the socket, `extra` descriptors (for reading)
  /// and `watched` ones (for their hang-up or error only: a terminal that
  /// chatsh does not read, where typed input must not wake it): reads what
  /// the socket has, writes what it can take. Returns the `revents` of
  /// `extra` then `watched`, and whether anything happened at all.
  public func wait(extra: [Int32], watched: [Int32] = [], timeoutMilliseconds: Int32)
    throws(ConnectionError) -> ([Int16], Bool)
  {
    var events = Int16(POLLIN)
    if pendingOutput > 0 && !writeShutDown { events |= Int16(POLLOUT) }
    // Once the broker has closed, poll would report POLLHUP at once forever:
    // leave the socket out (a negative descriptor is skipped).
    var fds = [pollfd(fd: readClosed ? -1 : fd, events: events, revents: 0)]
    for descriptor in extra {
      fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
    }
    for descriptor in watched {
      fds.append(pollfd(fd: descriptor, events: 0, revents: 0))
    }
    let polled: IOResult<Int32>
    do {
      polled = try ioCall("poll", onInterrupt: .report) {
        poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
      }
    } catch {
      throw .system(call: "poll", errno: error.errno)
    }
    let count: Int32
    switch polled {
    case .processed(let ready): count = ready
    // A signal: the caller's handler may have set a flag to act on.
    case .interrupted: return (fds.dropFirst().map { _ in 0 }, true)
    case .wouldBlock: throw .system(call: "poll", errno: EAGAIN)
    }
    let socketEvents = fds[0].revents
    if socketEvents & Int16(POLLOUT) != 0 { flushIfPossible() }
    if socketEvents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { try readAvailable() }
    return (fds.dropFirst().map(\.revents), count > 0)
  }

  /// Writes as much of the queue as the socket takes now.
  public func flushIfPossible() {
    sending: while pendingOutput > 0 && !writeShutDown {
      let sent = try? ioCall("send") {
        outbox.withUnsafeBytes { raw in
          Glibc.send(fd, raw.baseAddress! + outboxStart, pendingOutput, Int32(MSG_NOSIGNAL))
        }
      }
      switch sent {
      case .processed(let written) where written > 0:
        outboxStart += written
      case .wouldBlock, .interrupted:
        break sending  // wait for POLLOUT
      default:
        // Failed (EPIPE): the broker is gone, and reading will say why.
        outbox.removeAll()
        outboxStart = 0
        break sending
      }
    }
    if pendingOutput == 0 {
      outbox.removeAll(keepingCapacity: true)
      outboxStart = 0
      if writeShutdownRequested && !writeShutDown {
        shutdown(fd, Int32(SHUT_WR))
        writeShutDown = true
      }
    }
  }

  private func readAvailable() throws(ConnectionError) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let result: IOResult<Int>
      do {
        result = try ioCall("read") {
          buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        }
      } catch {
        guard error.errno == ECONNRESET else { throw .system(call: "read", errno: error.errno) }
        readClosed = true
        return
      }
      guard case .processed(let count) = result else { return }
      bytesReceived += count
      guard count > 0 else {
        readClosed = true
        return
      }
      buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
      if count < buffer.count { return }
    }
  }
}

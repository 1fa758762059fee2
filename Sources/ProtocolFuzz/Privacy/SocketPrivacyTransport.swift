import Broker
import Glibc
import Posix

/// The privacy scenario on the real broker: each session a Unix-socket
/// connection made as its user (``connectUnixSocket(_:as:)``), on the main
/// socket or irc.sock; every session is read whenever any waits, so that
/// each line reaches the oracle as it arrives. IRC requests are followed by
/// a `PING` fence, whose `PONG` says the request was answered.
final class SocketPrivacyTransport: PrivacyTransport {
  private let socketPath: String
  private let ircSocketPath: String
  private let oracle: PrivacyOracle
  private let shared: SharedState
  private let owned: OwnedBroker?
  private let ownUser = ownUserName()
  let groups = UnixGroups()
  private var sockets: [Int: Socket] = [:]
  /// Lines each session got since its latest request was sent.
  private var received: [Int: [String]] = [:]
  private var nextSession = 1
  private var nextFence = 0
  private var generation: Int
  /// How long a request may go unanswered before its session is given
  /// up (a freeze is the freeze oracle's finding, not this one's).
  private let answerTimeout = 10.0

  private final class Socket {
    let fd: Int32
    let session: PrivacySession
    var inbox: [UInt8] = []
    var ended = false

    init(fd: Int32, session: PrivacySession) {
      self.fd = fd
      self.session = session
    }

    deinit { Glibc.close(fd) }
  }

  init(
    socketPath: String, ircSocketPath: String, oracle: PrivacyOracle, shared: SharedState,
    owned: OwnedBroker?
  ) {
    self.socketPath = socketPath
    self.ircSocketPath = ircSocketPath
    self.oracle = oracle
    self.shared = shared
    self.owned = owned
    generation = shared.generation.load(ordering: .relaxed)
  }

  var now: Double { monotonicSeconds() }
  var stopping: Bool { shared.stopping.load(ordering: .relaxed) }
  private(set) var epoch = 0

  // MARK: - Sessions

  func open(_ user: String, _ wire: PrivacyWire, capabilities: [String]) -> PrivacySession? {
    followRestarts()
    guard !stopping else { return nil }
    let opened = now
    let path = wire == .line ? socketPath : ircSocketPath
    let fd: Int32
    do {
      fd =
        user == ownUser ? try UnixSocket.connect(to: path) : try connectUnixSocket(path, as: user)
    } catch {
      return nil
    }
    let session = PrivacySession(id: nextSession, user: user, wire: wire)
    nextSession += 1
    sockets[session.id] = Socket(fd: fd, session: session)
    oracle.opened(session, at: opened)
    let greeted: Bool
    switch wire {
    case .line:
      let lines = awaitLine(of: session) { $0.hasPrefix("HELLO ") || $0.hasPrefix("ERR ") }
      greeted = lines?.last?.hasPrefix("HELLO ") == true
    case .irc:
      let registration = IRCGenerator.registration(nick: user, capabilities: capabilities).map {
        String(decoding: $0, as: UTF8.self)
      }
      let lines =
        write(registration + ["PING :privacyready"], to: session)
        ? awaitLine(of: session) { Self.isPong($0, "privacyready") } : nil
      greeted = lines?.contains { $0.contains(" 001 ") } == true
    }
    guard greeted else {
      close(session)
      return nil
    }
    return session
  }

  func request(_ line: String, on session: PrivacySession) -> [String]? {
    followRestarts()
    guard let socket = sockets[session.id], !socket.ended, !stopping else { return nil }
    received[session.id] = []
    oracle.sent(line, on: session, at: now)
    defer { oracle.answered(session) }
    switch session.wire {
    case .line:
      guard write([line], to: session) else { return nil }
      return awaitLine(of: session) { $0.hasPrefix("OK ") || $0.hasPrefix("ERR ") }
    case .irc:
      nextFence += 1
      let fence = "privacyfence\(nextFence)"
      guard write([line, "PING :\(fence)"], to: session),
        let lines = awaitLine(of: session, until: { Self.isPong($0, fence) })
      else { return nil }
      return Array(lines.dropLast())
    }
  }

  func isOpen(_ session: PrivacySession) -> Bool {
    followRestarts()
    return sockets[session.id].map { !$0.ended } ?? false
  }

  func close(_ session: PrivacySession) {
    guard sockets.removeValue(forKey: session.id) != nil else { return }
    received[session.id] = nil
    oracle.closed(session)
  }

  func pass(_ seconds: Double) {
    let deadline = now + seconds
    while !stopping && now < deadline { readAll(timeout: min(0.05, deadline - now)) }
  }

  /// Closes every session and removes the run's groups.
  func finish() {
    for id in Array(sockets.keys) {
      if let session = sockets[id]?.session { close(session) }
    }
    groups.removeAll()
  }

  // MARK: - Groups

  func makeGroup(_ name: String) -> Bool { groups.add(name) }

  func setMember(_ user: String, of group: String, _ member: Bool) -> Bool {
    groups.set(user, member: member, of: group)
  }

  // MARK: - Quiet and restarts

  func quiet(restart: Bool) -> Bool {
    // A crash being handled first: its restart is the fuzzer's.
    while shared.paused.load(ordering: .relaxed) && !stopping { sleepSeconds(0.02) }
    guard !stopping else { return false }
    shared.plannedPause.store(true, ordering: .sequentiallyConsistent)
    shared.paused.store(true, ordering: .sequentiallyConsistent)
    for id in Array(sockets.keys) {
      if let session = sockets[id]?.session { close(session) }
    }
    // The other clients drop their connections; the broker forgets them.
    sleepSeconds(0.3)
    if restart, let owned {
      _ = owned.stop()
      owned.startAgain(after: "the privacy oracle's restart", recordingIn: shared.findings)
    }
    shared.generation.add(1, ordering: .sequentiallyConsistent)
    generation = shared.generation.load(ordering: .relaxed)
    return true
  }

  func loud() {
    shared.paused.store(false, ordering: .sequentiallyConsistent)
    shared.plannedPause.store(false, ordering: .sequentiallyConsistent)
  }

  /// After the fuzzer restarted a crashed broker, every session is gone.
  private func followRestarts() {
    while shared.paused.load(ordering: .relaxed) && !stopping
      && !shared.plannedPause.load(ordering: .relaxed)
    {
      sleepSeconds(0.02)
    }
    let current = shared.generation.load(ordering: .relaxed)
    guard current != generation else { return }
    generation = current
    epoch += 1
    for id in Array(sockets.keys) {
      if let session = sockets[id]?.session { close(session) }
    }
  }

  // MARK: - Bytes

  private static func isPong(_ line: String, _ token: String) -> Bool {
    guard let message = IRCShape.parse(Array(line.utf8)) else { return false }
    return message.command == "PONG" && message.parameters.last == token
  }

  private func write(_ lines: [String], to session: PrivacySession) -> Bool {
    guard let socket = sockets[session.id], !socket.ended else { return false }
    let end = session.wire == .irc ? "\r\n" : "\n"
    let bytes = Array(lines.map { $0 + end }.joined().utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        Glibc.send(socket.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        socket.ended = true
        return false
      }
      offset += written
    }
    return true
  }

  /// Reads every session until `session` gets a line `until` accepts;
  /// the lines it got, that one last. nil when it ended or took too long
  /// (then it is closed).
  private func awaitLine(of session: PrivacySession, until done: (String) -> Bool)
    -> [String]?
  {
    let deadline = now + answerTimeout
    var checked = 0
    while true {
      let lines = received[session.id] ?? []
      if let index = lines[checked...].firstIndex(where: done) {
        return Array(lines[...index])
      }
      checked = lines.count
      guard let socket = sockets[session.id], !socket.ended, !stopping, now < deadline else {
        close(session)
        return nil
      }
      readAll(timeout: min(0.05, deadline - now))
    }
  }

  /// One poll of every session: what came is split into lines, each told
  /// to the oracle and kept for its session's request.
  private func readAll(timeout: Double) {
    let open = sockets.values.filter { !$0.ended }
    var pollers = open.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    guard !pollers.isEmpty else {
      sleepSeconds(max(0, timeout))
      return
    }
    let ready = poll(&pollers, nfds_t(pollers.count), Int32(max(0, timeout) * 1000))
    guard ready > 0 else { return }
    var chunk = [UInt8](repeating: 0, count: 65536)
    for (index, socket) in open.enumerated() where pollers[index].revents != 0 {
      while true {
        let count = chunk.withUnsafeMutableBytes {
          recv(socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if count > 0 {
          socket.inbox += chunk[0..<count]
          continue
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { break }
        socket.ended = true
        break
      }
      deliver(socket)
    }
  }

  private func deliver(_ socket: Socket) {
    let time = now
    var start = 0
    while let newline = socket.inbox[start...].firstIndex(of: 0x0A) {
      var line = Array(socket.inbox[start..<newline])
      start = newline + 1
      if socket.session.wire == .irc && line.last == 0x0D { line.removeLast() }
      oracle.received(line, on: socket.session, at: time)
      received[socket.session.id, default: []].append(String(decoding: line, as: UTF8.self))
    }
    if start > 0 { socket.inbox.removeFirst(start) }
  }
}

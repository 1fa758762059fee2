import Broker
import Glibc

/// Where the broker listens for IRC: irc.sock, and maybe loopback TCP.
struct IRCEndpoints: Sendable {
  var socketPath: String
  var tcpPort: UInt16?

  /// The `nc` command a reproducer pipes into.
  func connectCommand(tcp: Bool) -> String {
    if tcp, let tcpPort { return "nc -N 127.0.0.1 \(tcpPort)" }
    return "nc -N -U \"$IRCSOCK\""
  }
}

/// One IRC connection that registers, sends a line and waits (bounded)
/// for the `PONG` that follows it: for replaying the suspects of a finding
/// one by one, and the lines before a crash.
final class IRCProbe {
  let fd: Int32
  private var buffer: [UInt8] = []
  private(set) var checker: IRCReplyChecker
  private var sequence = 0

  /// Connects and registers with `capabilities`; throws unless `001` comes
  /// within `timeout`.
  init(
    _ endpoints: IRCEndpoints, tcp: Bool, capabilities: [String], users: [String],
    timeout: Double = 5
  ) throws {
    if tcp, let port = endpoints.tcpPort {
      fd = try LoopbackSocket.connect(port: port)
    } else {
      fd = try UnixSocket.connect(to: endpoints.socketPath)
    }
    checker = IRCReplyChecker(users: users)
    let nick = users.first ?? "chatfuzz"
    for line in IRCGenerator.registration(nick: nick, capabilities: capabilities) {
      try send(line)
    }
    let deadline = monotonicSeconds() + timeout
    while !checker.welcomed {
      guard try readLine(until: deadline) != nil else {
        close(fd)
        throw FuzzError("the broker closed the IRC connection before 001")
      }
    }
  }

  deinit { close(fd) }

  /// Sends `line` and a PING; returns the violations of what came back
  /// before the PONG, and whether the PONG came within `timeout`.
  func exchange(_ line: [UInt8], timeout: Double = 2) -> (violations: [Violation], answered: Bool) {
    sequence += 1
    let token = "culprit\(sequence)"
    var violations: [Violation] = []
    do {
      try send(line)
      try send(Array("PING :\(token)".utf8))
      let deadline = monotonicSeconds() + timeout
      while let received = try readLine(until: deadline) {
        violations += checker.received(received)
        let parsed = IRCShape.parse(received.last == 0x0D ? received.dropLast() : received[...])
        if parsed?.command == "PONG" && parsed?.parameters.last == token {
          return (violations, true)
        }
      }
    } catch {}
    return (violations, false)
  }

  private func send(_ line: [UInt8]) throws {
    let bytes = line + [0x0D, 0x0A]
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { throw FuzzError("send: the connection is closed") }
      offset += written
    }
  }

  /// The next line without its LF; nil at end of stream; throws at the
  /// deadline.
  private func readLine(until deadline: Double) throws -> [UInt8]? {
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = Array(buffer[..<newline])
        buffer.removeSubrange(...newline)
        if !checker.welcomed { _ = checker.received(line) }
        return line
      }
      let remaining = deadline - monotonicSeconds()
      guard remaining > 0 else { throw FuzzError("no line in time") }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&poller, 1, Int32(max(1, remaining * 1000))) <= 0 { continue }
      var chunk = [UInt8](repeating: 0, count: 65536)
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { return nil }
      buffer += chunk[0..<count]
    }
  }
}

/// Finds, for each kind of IRC violation, the one line that shows it
/// again on a fresh connection, as the line mode finds the request that
/// crashed the broker, and makes it the finding's reproducer.
enum IRCCulprits {
  static func find(
    _ shared: SharedState, endpoints: IRCEndpoints, users: [String], budget: Double
  ) {
    let deadline = monotonicSeconds() + budget
    let all = shared.ircSuspects.withLock { $0 }
    for (kind, suspects) in all.sorted(by: { $0.key < $1.key }) {
      guard monotonicSeconds() < deadline else { break }
      guard suspects.violation.evidence != nil else {
        // How a connection ended is no single line's doing.
        shared.findings.setReproducer(
          "no line of its own: the broker closed it (its log says why; keep it with --keep)",
          category: suspects.violation.category, summary: kind)
        continue
      }
      var probe: IRCProbe?
      var found: [UInt8]?
      let ranked = rank(suspects.violation.suspects, by: suspects.violation.evidence)
      for line in ranked.prefix(300) where monotonicSeconds() < deadline {
        if probe == nil {
          probe = try? IRCProbe(
            endpoints, tcp: suspects.tcp, capabilities: suspects.capabilities, users: users)
        }
        guard let current = probe else { break }
        let (violations, answered) = current.exchange(line)
        if violations.contains(where: { $0.kind == kind }) {
          found = line
          break
        }
        // Closed (QUIT, ERROR) or stuck: the next suspect gets a new one.
        if !answered { probe = nil }
      }
      let registration = IRCGenerator.registration(
        nick: users.first ?? "chatfuzz", capabilities: suspects.capabilities)
      let reproducer =
        found.map {
          Reproducer.shell(
            registration + [$0], lineEnd: "\\r\\n",
            connect: endpoints.connectCommand(tcp: suspects.tcp))
        }
        ?? "no single line of the last \(suspects.violation.suspects.count) shows it alone on a fresh connection; rerun with this seed"
      shared.findings.setReproducer(
        reproducer, category: suspects.violation.category, summary: kind)
    }
  }

  /// The suspects, newest first, those that hold more of the broken line's
  /// parameters (what the gateway echoed) before the others.
  static func rank(_ suspects: [[UInt8]], by evidence: [UInt8]?) -> [[UInt8]] {
    let newestFirst = Array(suspects.reversed())
    guard let evidence else { return newestFirst }
    let body = evidence.last == 0x0D ? evidence.dropLast() : evidence[...]
    // What a line echoes: its parameters but the first (the nick or server
    // it is for), and the pieces a bare CR cuts them into.
    let echoed =
      (IRCShape.parse(body)?.parameters.dropFirst() ?? []).flatMap {
        Array($0.utf8).split(separator: 0x0D).map(Array.init)
      }.filter { $0.count >= 1 }
    let scored = newestFirst.enumerated().map { index, line in
      let score = echoed.reduce(0) { total, piece in
        line.firstRange(of: piece) != nil ? total + piece.count : total
      }
      return (score: score, index: index, line: line)
    }
    return scored.sorted { ($0.score, -$0.index) > ($1.score, -$1.index) }.map(\.line)
  }
}

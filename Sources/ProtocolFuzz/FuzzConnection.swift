import Broker
import Foundation
import Glibc
import Posix

/// What a fuzzing connection speaks, and where.
enum Wire: Equatable {
  /// chatbroker(7)'s line protocol, on the main socket.
  case line
  /// IRC on irc.sock.
  case irc
  /// IRC on the loopback TCP listener (`--irc-listen`).
  case ircTCP
  /// The line protocol over the web door's WebSocket (`--web-listen`),
  /// one line per text frame (chatbroker(7), "The web door").
  case web

  var isIRC: Bool { self == .irc || self == .ircTCP }
}

/// One connection of a fuzzing worker: its socket (made as another Unix
/// user when it speaks as one, see ``connectUnixSocket(_:as:)``), what it
/// still has to send, what it received, and the contract checker for it.
final class FuzzConnection {
  let fd: Int32
  let behaviour: Behaviour
  let user: String?
  let generation: Int
  let wire: Wire
  /// The IRC capabilities it asked for when it registered.
  let capabilities: [String]
  var checker: any ConnectionChecker
  var outbox: [UInt8] = []
  var outboxOffset = 0
  var inbox: [UInt8] = []
  /// When it stops sending new requests and winds down.
  let windDownAt: Double
  /// When it connected: nothing it gets was decided before.
  let openedAt = monotonicSeconds()
  /// Once winding down: whether the broker has gone silent on it.
  var silence = SilenceWatch()
  var windingDown = false
  var halfClosed: Bool { silence.halfClosed }
  var sendFailed = false
  var finished = false
  /// When a trickling client last sent its few bytes.
  var lastTrickle = 0.0
  /// The last flood it sent, to name in a finding.
  var lastFlood = ""
  /// On the web door: the response to the upgrade is still to come
  /// (``Wire/web``); then what broke the WebSocket's rules, if anything.
  var awaitingUpgrade = false
  /// How many bytes of the outbox are the upgrade and token, which a page
  /// sends at once, whatever its behaviour (the door waits 10 s for them).
  private var preambleBytes = 0
  var webViolation: String?

  init(
    path: String, behaviour: Behaviour, user: String?, generation: Int, lifetime: Double,
    wire: Wire = .line, tcpPort: UInt16 = 0, capabilities: [String] = [], users: [String] = [],
    webToken: String? = nil
  ) throws {
    self.behaviour = behaviour
    self.user = user
    self.generation = generation
    self.wire = wire
    self.capabilities = capabilities
    checker = wire.isIRC ? IRCReplyChecker(users: users) : ReplyChecker()
    windDownAt = monotonicSeconds() + lifetime
    if wire == .ircTCP {
      fd = try LoopbackSocket.connect(port: tcpPort)
    } else if wire == .web, let user, let webToken {
      // A page of `user`'s: its socket made by that user, so that the
      // kernel names them; the upgrade and its token first.
      do {
        fd = try connectLoopback(port: tcpPort, as: user)
      } catch {
        throw FuzzError(error.description)
      }
      outbox =
        Array(
          WebSocketFrames.upgradeRequest(
            host: "localhost:\(tcpPort)", origin: "http://localhost:\(tcpPort)"
          ).utf8) + WebSocketFrames.text("TOKEN \(webToken)")
      awaitingUpgrade = true
      preambleBytes = outbox.count
    } else if let user {
      do {
        fd = try connectUnixSocket(path, as: user)
      } catch {
        throw FuzzError(error.description)
      }
    } else {
      fd = try UnixSocket.connect(to: path)
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
  }

  deinit {
    close(fd)
  }

  var hasOutput: Bool { outboxOffset < outbox.count }

  /// Its behaviour, and the user it speaks as, for findings.
  var kind: String {
    let wireName =
      switch wire {
      case .line: ""
      case .irc: "IRC "
      case .ircTCP: "IRC-over-TCP "
      case .web: "web door "
      }
    return wireName + behaviour.rawValue + (user.map { " as \($0)" } ?? "")
  }

  /// Queues request lines, each with its LF (CR LF on IRC, followed by a
  /// fence, see ``IRCReplyChecker``), and tells the checker. Floods are
  /// remembered (as suspects of a crash) by their first and last line only,
  /// so that they do not push everything else out.
  func queue(
    _ lines: [[UInt8]], shared: SharedState, lastWithoutNewline: Bool = false,
    rememberAll: Bool = true
  ) {
    if outboxOffset > 0 && outboxOffset == outbox.count {
      outbox.removeAll(keepingCapacity: true)
      outboxOffset = 0
      preambleBytes = 0
    }
    var lines = lines
    if wire.isIRC && !lastWithoutNewline, let fence = checker.fence() { lines.append(fence) }
    if wire == .web {
      queueFrames(lines, shared: shared, rememberAll: rememberAll)
      return
    }
    for (index, line) in lines.enumerated() {
      outbox += line
      let unended = lastWithoutNewline && index == lines.count - 1
      if !unended {
        if wire.isIRC { outbox.append(0x0D) }
        outbox.append(0x0A)
      }
      checker.sent(wire.isIRC ? IRCReplyChecker.asRead(line, crlf: !unended) : line)
      if !wire.isIRC { shared.linesByVerb.remember(line) }
      if rememberAll || index == 0 || index == lines.count - 1 {
        shared.remember(line, irc: wire.isIRC)
      }
    }
    shared.requestsSent.add(lines.count, ordering: .relaxed)
  }

  /// The web door's way of ``queue(_:shared:lastWithoutNewline:rememberAll:)``:
  /// each line one text frame, as the line protocol's framer would have
  /// read it (a CR before its end dropped); a line that is not UTF-8 is
  /// not sent, as no browser can send it (a WebSocket's text is UTF-8).
  private func queueFrames(_ lines: [[UInt8]], shared: SharedState, rememberAll: Bool) {
    var sent = 0
    for (index, line) in lines.enumerated() {
      let payload = line.last == 0x0D ? line.dropLast() : line[...]
      guard String(validating: payload, as: UTF8.self) != nil else { continue }
      outbox += WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: payload)
      sent += 1
      // The checker reads the line as the socket's framer would, CR and all.
      checker.sent(line)
      if rememberAll || index == 0 || index == lines.count - 1 {
        shared.remember(line, irc: false)
      }
    }
    shared.requestsSent.add(sent, ordering: .relaxed)
  }

  /// Writes what it can without blocking; `limit` bytes at most.
  func writeSome(limit: Int = .max) {
    guard hasOutput, !sendFailed else { return }
    let limit = outboxOffset < preambleBytes ? preambleBytes - outboxOffset : limit
    let count = min(limit, outbox.count - outboxOffset)
    let sent = try? ioCall("send") {
      outbox[outboxOffset..<outboxOffset + count].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
    }
    switch sent {
    case .processed(let written) where written > 0:
      outboxOffset += written
      silence.wrote(at: monotonicSeconds())
    case .processed, .wouldBlock, .interrupted: break
    case nil: sendFailed = true
    }
  }

  /// Reads what is there (at most 256 KiB, so that one flood's lines do not
  /// hold up the other connections of the worker); returns the complete lines, and whether the
  /// stream ended.
  func readSome(into lines: inout [[UInt8]]) -> Bool {
    var chunk = [UInt8](repeating: 0, count: 65536)
    for _ in 0..<4 {
      let received = try? ioCall("read") {
        chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      }
      if case .processed(let count) = received, count > 0 {
        inbox += chunk[0..<count]
        continue
      }
      if case .wouldBlock = received { break }
      splitLines(into: &lines)
      return true  // end of stream, or an error such as ECONNRESET
    }
    splitLines(into: &lines)
    return false
  }

  private func splitLines(into lines: inout [[UInt8]]) {
    if wire == .web { return splitFrames(into: &lines) }
    var start = 0
    while let newline = inbox[start...].firstIndex(of: 0x0A) {
      lines.append(Array(inbox[start..<newline]))
      start = newline + 1
    }
    if start > 0 { inbox.removeFirst(start) }
  }

  /// On the web door: the upgrade's answer, then text frames as lines; a
  /// close frame ends what is read (the stream ends next). What breaks
  /// the WebSocket's rules is kept in ``webViolation``.
  private func splitFrames(into lines: inout [[UInt8]]) {
    if awaitingUpgrade {
      guard let end = inbox.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
      let head = String(decoding: inbox[..<end.lowerBound], as: UTF8.self)
      inbox.removeSubrange(..<end.upperBound)
      awaitingUpgrade = false
      guard head.hasPrefix("HTTP/1.1 101 ") else {
        webViolation = "the upgrade was answered \(head.prefix { $0 != "\r" })"
        inbox.removeAll()
        return
      }
    }
    do {
      for frame in try WebSocketFrames.decode(&inbox) {
        switch frame.opcode {
        case WebSocketFrames.text:
          if frame.payload.contains(0x0A) {
            webViolation = "a text frame holds a line feed"
          }
          lines.append(frame.payload)
        case WebSocketFrames.close: inbox.removeAll()
        default: continue
        }
      }
    } catch {
      webViolation = "bytes that are no WebSocket frame: \(error)"
      inbox.removeAll()
    }
  }
}

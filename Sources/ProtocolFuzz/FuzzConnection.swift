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

  var isIRC: Bool { self != .line }
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

  init(
    path: String, behaviour: Behaviour, user: String?, generation: Int, lifetime: Double,
    wire: Wire = .line, tcpPort: UInt16 = 0, capabilities: [String] = [], users: [String] = []
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
    }
    var lines = lines
    if wire.isIRC && !lastWithoutNewline, let fence = checker.fence() { lines.append(fence) }
    for (index, line) in lines.enumerated() {
      outbox += line
      if !(lastWithoutNewline && index == lines.count - 1) {
        if wire.isIRC { outbox.append(0x0D) }
        outbox.append(0x0A)
      }
      checker.sent(line)
      if rememberAll || index == 0 || index == lines.count - 1 {
        shared.remember(line, irc: wire.isIRC)
      }
    }
    shared.requestsSent.add(lines.count, ordering: .relaxed)
  }

  /// Writes what it can without blocking; `limit` bytes at most.
  func writeSome(limit: Int = .max) {
    guard hasOutput, !sendFailed else { return }
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
    var start = 0
    while let newline = inbox[start...].firstIndex(of: 0x0A) {
      lines.append(Array(inbox[start..<newline]))
      start = newline + 1
    }
    if start > 0 { inbox.removeFirst(start) }
  }
}

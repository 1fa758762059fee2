import Foundation
import Glibc
import Posix
import TestSupport

/// A bare NATS protocol client over loopback TCP, for what the federation
/// tests do behind the brokers' backs (chatbroker(8), "FEDERATION"): a
/// payload published with a node's credentials, as a hostile or broken
/// client holding them would, and JetStream API requests as the cluster's
/// administrator.
final class RawNats {
  private let socket: Int32
  private var buffer: [UInt8] = []
  /// The subscription id of the next request's inbox.
  private var nextSID = 1
  /// The prefix of this client's inboxes: a node may subscribe only to
  /// its own (chatbroker(8), "FEDERATION").
  let inbox: String

  /// Connects to `port` as `user`; throws when the server refuses.
  init(port: UInt16, user: String, password: String, inbox: String = "_INBOX") throws {
    self.inbox = inbox
    socket = try LoopbackSocket.connect(port: port)
    _ = try line(timeout: 5)  // INFO
    // With headers: JetStream publishes may carry `Nats-Msg-Id`.
    let connect =
      #"{"user":"\#(user)","pass":"\#(password)","verbose":false,"pedantic":false,"headers":true}"#
    try send("CONNECT \(connect)\r\nPING\r\n")
    let answer = try line(timeout: 5)
    guard answer == "PONG" else { throw TestFailure("nats-server refused \(user): \(answer)") }
  }

  deinit { close(socket) }

  /// A core NATS publish; the server has taken it once it answers the
  /// PING after it (a JetStream stream on `subject` then stores it).
  func publish(_ subject: String, _ payload: String) throws {
    try send("PUB \(subject) \(payload.utf8.count)\r\n\(payload)\r\nPING\r\n")
    let answer = try line(timeout: 5)
    guard answer == "PONG" else { throw TestFailure("publish to \(subject): \(answer)") }
  }

  /// Subscribes to `subject`: nil when the server took the subscription,
  /// its `-ERR` line when it refused it.
  func subscribe(_ subject: String) throws -> String? {
    let sid = nextSID
    nextSID += 1
    let (errors, _) = try errorsAfter("SUB \(subject) \(sid)\r\n", sid: nil)
    return errors.first
  }

  /// Sends a request to `subject` and answers what came back for it: the
  /// server's `-ERR` lines (a permissions violation) and whether a reply
  /// came, once two PINGs after it are answered.
  func attempt(_ subject: String, _ payload: String = "") throws -> (
    errors: [String], answered: Bool
  ) {
    let sid = nextSID
    nextSID += 1
    let inbox = "\(inbox).raw\(UInt32.random(in: 0...UInt32.max))"
    defer { try? send("UNSUB \(sid)\r\n") }
    return try errorsAfter(
      "SUB \(inbox) \(sid)\r\nPUB \(subject) \(inbox) \(payload.utf8.count)\r\n\(payload)\r\n",
      sid: sid)
  }

  /// Sends `text`, then PING twice (the server may say `-ERR` after the
  /// first PONG): the `-ERR` lines until the second PONG, and whether a
  /// message for `sid` came meanwhile.
  private func errorsAfter(_ text: String, sid: Int?) throws -> ([String], Bool) {
    try send(text + "PING\r\n")
    var errors: [String] = []
    var answered = false
    for round in 1...2 {
      if round == 2 { try send("PING\r\n") }
      while true {
        let answer = try line(timeout: 5)
        if answer == "PONG" { break }
        if answer.hasPrefix("-ERR") { errors.append(answer) }
        if answer.hasPrefix("MSG ") || answer.hasPrefix("HMSG ") {
          let words = answer.split(separator: " ")
          _ = try bytes(Int(words.last!)! + 2, timeout: 5)
          if let sid, words[2] == "\(sid)" { answered = true }
        }
      }
    }
    return (errors, answered)
  }

  /// A request and its reply's payload (a JetStream API answer is JSON),
  /// sent with `headers` when there are any (a JetStream publish with
  /// `Nats-Msg-Id`, answered by the stream's PubAck).
  func request(
    _ subject: String, _ payload: String = "", headers: [(String, String)] = [],
    timeout: Double = 10
  ) throws -> String {
    let inbox = "\(inbox).raw\(UInt32.random(in: 0...UInt32.max))"
    let sid = nextSID
    nextSID += 1
    let publish: String
    if headers.isEmpty {
      publish = "PUB \(subject) \(inbox) \(payload.utf8.count)\r\n\(payload)\r\n"
    } else {
      let block = "NATS/1.0\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
      let sizes = "\(block.utf8.count) \(block.utf8.count + payload.utf8.count)"
      publish = "HPUB \(subject) \(inbox) \(sizes)\r\n\(block)\(payload)\r\n"
    }
    try send("SUB \(inbox) \(sid)\r\n" + publish)
    // A late answer to an abandoned request must not pass for this one.
    defer { try? send("UNSUB \(sid)\r\n") }
    while true {
      let header = try line(timeout: timeout)
      if header.hasPrefix("-ERR") { throw TestFailure("request \(subject): \(header)") }
      // `MSG subject sid [reply] size`, or with headers (a stream
      // message published with `Nats-Msg-Id`) `HMSG subject sid [reply]
      // header-size total-size`: the payload follows the headers.
      let words = header.split(separator: " ")
      let headerBytes: Int
      if header.hasPrefix("MSG ") {
        headerBytes = 0
      } else if header.hasPrefix("HMSG ") {
        headerBytes = Int(words[words.count - 2])!
      } else {
        continue
      }
      let size = Int(words.last!)!
      let body = try bytes(size + 2, timeout: timeout)
      guard words[2] == "\(sid)" else { continue }
      // A status without payload (`NATS/1.0 408 Request Timeout`) is
      // answered as its status line.
      let payload = body.dropLast(2).dropFirst(headerBytes)
      if payload.isEmpty && headerBytes > 0 {
        return String(decoding: body.prefix(headerBytes), as: UTF8.self)
          .trimmingCharacters(in: .whitespacesAndNewlines)
      }
      return String(decoding: payload, as: UTF8.self)
    }
  }

  /// A JetStream API request sent again (bounded) until it is answered
  /// without an error: a cluster that has just elected its meta leader may
  /// not answer the first.
  func jetStream(_ subject: String, _ payload: String = "", timeout: Double = 20) throws -> String {
    var answer = ""
    try waitUntil(timeout: timeout, "an answer to \(subject) without error (last: \(answer))") {
      answer = (try? request(subject, payload, timeout: 5)) ?? ""
      return !answer.isEmpty && !answer.contains("\"error\"")
    }
    return answer
  }

  private func send(_ text: String) throws {
    var bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
      let count = bytes.withUnsafeMutableBytes {
        Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
      }
      guard count > 0 else { throw TestFailure("send to nats-server failed") }
      sent += count
    }
  }

  /// The next protocol line, without CR LF; PINGs from the server are
  /// answered on the way.
  private func line(timeout: Double) throws -> String {
    while true {
      while let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<end], as: UTF8.self)
          .trimmingCharacters(in: .whitespacesAndNewlines)
        buffer.removeSubrange(...end)
        if line == "PING" {
          try send("PONG\r\n")
          continue
        }
        return line
      }
      try fill(timeout: timeout)
    }
  }

  private func bytes(_ count: Int, timeout: Double) throws -> [UInt8] {
    while buffer.count < count { try fill(timeout: timeout) }
    defer { buffer.removeFirst(count) }
    return Array(buffer[..<count])
  }

  private func fill(timeout: Double) throws {
    var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else {
      throw TestFailure("nats-server did not answer within \(timeout) s")
    }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { throw TestFailure("nats-server closed the connection") }
    buffer += chunk[..<count]
  }
}

import Broker
import Glibc
import LineProtocol

/// A connection that sends a line and waits (bounded) for lines back: for
/// the latency probe, the liveness check and replaying suspects.
final class ProbeConnection {
  let fd: Int32
  private var buffer: [UInt8] = []
  private(set) var checker = ReplyChecker()
  /// Contract violations seen on this connection.
  private(set) var violations: [Violation] = []
  private(set) var ended = false

  /// Connects and reads the greeting.
  init(path: String, greetingTimeout: Double = 5) throws {
    fd = try UnixSocket.connect(to: path)
    guard let hello = try readLine(timeout: greetingTimeout) else {
      close(fd)
      throw FuzzError("the broker closed the connection before HELLO")
    }
    guard hello.starts(with: Array("HELLO ".utf8)) else {
      close(fd)
      throw FuzzError("greeted with: \(String(decoding: hello, as: UTF8.self))")
    }
  }

  deinit { close(fd) }

  func send(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let written: Int
      do {
        written = try systemCall("send") {
          bytes[offset...].withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
          }
        }
      } catch {
        throw FuzzError("send: \(error.reason)")
      }
      guard written > 0 else { throw FuzzError("send: the connection is closed") }
      offset += written
    }
  }

  /// Sends `PING token` and returns the seconds until `OK PING token` came;
  /// throws when it does not come within `timeout` or the stream ends.
  func ping(_ token: String, _ timeout: Double) throws -> Double {
    let line = Request.ping(token: token).lineBytes
    let started = monotonicSeconds()
    checker.sent(line)
    try send(line + [0x0A])
    let wanted = Array("OK PING \(token)".utf8)
    while true {
      let remaining = started + timeout - monotonicSeconds()
      guard remaining > 0 else { throw FuzzError("no OK PING within \(timeout) s") }
      let reply: [UInt8]?
      do {
        reply = try readLine(timeout: remaining)
      } catch {
        throw FuzzError("no OK PING within \(timeout) s")
      }
      guard let reply else { throw FuzzError("the broker closed the connection") }
      if reply == wanted { return monotonicSeconds() - started }
    }
  }

  /// The next line, checked against the contract; nil at end of stream.
  func readLine(timeout: Double) throws -> [UInt8]? {
    let deadline = monotonicSeconds() + timeout
    while true {
      if let newline = buffer.firstIndex(of: 0x0A) {
        let line = Array(buffer[..<newline])
        buffer.removeSubrange(...newline)
        violations += checker.received(line)
        return line
      }
      if ended { return nil }
      let remaining = deadline - monotonicSeconds()
      guard remaining > 0 else { throw FuzzError("no line within \(timeout) s") }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, Int32(max(1, remaining * 1000)))
      if ready <= 0 { continue }
      var chunk = [UInt8](repeating: 0, count: 65536)
      let count =
        (try? systemCall("read") {
          chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        }) ?? -1
      if count <= 0 {
        ended = true
        continue
      }
      buffer += chunk[0..<count]
    }
  }
}

import Broker
import Foundation
import Glibc
import LineProtocol
import Posix

/// A protocol client for tests: writes lines and reads lines with a bounded
/// wait, over a real Unix socket. One thread may send while another reads.
public final class LineClient: @unchecked Sendable {
  public let fd: Int32
  public let timeout: Double
  private var buffer: [UInt8] = []
  /// The program that made the connection, when another one did.
  private var child: ChildProcess?
  /// The `HELLO` line, once ``BrokerProcess/connect(as:timeout:)`` read it.
  public var greeting = ""

  public init(fd: Int32, timeout: Double = 10) {
    self.fd = fd
    self.timeout = timeout
  }

  public convenience init(path: String, timeout: Double = 10) throws {
    self.init(fd: try UnixSocket.connect(to: path), timeout: timeout)
  }

  /// A connection made by another program, such as `nc -U` run as another
  /// user: its standard input and output are this client's end of a socket
  /// pair, so it reads and writes like a direct connection.
  public convenience init(running arguments: [String], timeout: Double = 10) throws {
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0
    else { throw TestFailure("socketpair: \(String(cString: strerror(errno)))") }
    self.init(fd: pair[0], timeout: timeout)
    defer { close(pair[1]) }
    child = try ChildProcess(
      arguments, standardInput: .descriptor(pair[1]), standardOutput: .descriptor(pair[1]))
  }

  deinit {
    close(fd)
    child?.signal(SIGKILL)
    child?.waitUntilExit()
  }

  public func send(_ text: String) throws {
    try sendBytes(Array(text.utf8))
  }

  /// Sends `line` and its LF.
  public func line(_ line: String) throws {
    try send(line + "\n")
  }

  public func sendBytes(_ bytes: [UInt8]) throws {
    try sendAll(fd, bytes)
  }

  /// Closes the writing side, as `nc -N` does after its input ends.
  public func finishWriting() {
    shutdown(fd, Int32(SHUT_WR))
  }

  /// The next line, without its LF; `nil` at end of stream. Throws when no
  /// line arrives within `timeout` (default: the client's), and when the
  /// stream ends inside a line: the broker always ends its lines, so a cut
  /// one is never taken for a whole reply.
  public func readLine(timeout: Double? = nil) throws -> String? {
    try readLine(before: Date().addingTimeInterval((timeout ?? self.timeout) * testTimeScale))
  }

  private func readLine(before deadline: Date) throws -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      guard let bytes = try readSome(fd, before: deadline, failure: "no line within the time limit")
      else {
        if buffer.isEmpty { return nil }
        let rest = String(decoding: buffer, as: UTF8.self)
        buffer.removeAll()
        throw TestFailure("stream ended inside a line: \(rest)")
      }
      buffer.append(contentsOf: bytes)
    }
  }

  /// Reads until a line starting with `prefix`, returning it; fails when the
  /// stream ends or the time runs out first.
  @discardableResult
  public func expect(_ prefix: String, timeout: Double? = nil) throws -> String {
    let deadline = Date().addingTimeInterval((timeout ?? self.timeout) * testTimeScale)
    var skipped: [String] = []
    while true {
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else {
        throw TestFailure("no \"\(prefix)\" line in time; got \(skipped)")
      }
      guard let line = try readLine(before: deadline) else {
        throw TestFailure("the stream ended before a \"\(prefix)\" line; got \(skipped)")
      }
      if line.hasPrefix(prefix) { return line }
      skipped.append(line)
    }
  }

  /// Sends `request` as LineCodec's request encoder writes it (as chatsh
  /// does) and returns every line up to and including its final reply.
  /// Tests about the wire itself send their lines as text instead.
  public func request(_ request: Request) throws -> [String] {
    try self.request(LineCodec.line(request))
  }

  /// Sends a request line as it is and returns every line up to and
  /// including its final `OK`/`ERR` reply.
  public func request(_ line: String) throws -> [String] {
    try self.line(line)
    var lines: [String] = []
    while let reply = try readLine() {
      lines.append(reply)
      if reply.hasPrefix("OK ") || reply.hasPrefix("ERR ") { return lines }
    }
    throw TestFailure("stream ended during the reply to \(line)")
  }

  /// Sends all `lines` in one write (pipelining), then reads the replies:
  /// for each request, the lines up to and including its final reply.
  public func pipeline(_ lines: [String]) throws -> [[String]] {
    try send(lines.map { $0 + "\n" }.joined())
    var replies: [[String]] = []
    var current: [String] = []
    while replies.count < lines.count {
      guard let reply = try readLine() else {
        throw TestFailure("stream ended after \(replies.count) of \(lines.count) replies")
      }
      current.append(reply)
      if reply.hasPrefix("OK ") || reply.hasPrefix("ERR ") {
        replies.append(current)
        current = []
      }
    }
    return replies
  }

  /// Reads everything until the broker closes the connection.
  public func readToEnd() throws -> [String] {
    var lines: [String] = []
    while let line = try readLine() { lines.append(line) }
    return lines
  }
}

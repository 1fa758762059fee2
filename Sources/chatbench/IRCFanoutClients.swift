import CShims
import Foundation
import Glibc
import Posix

/// The IRC clients of the fan-out load (``FanoutLoad`` with the `.irc`
/// wire): N receivers and a sender on 127.0.0.1, each registered and in
/// one channel before the first message, whatever server it is.
enum IRCFanoutClients {
  static let channel = "#bench"

  /// Registers the receivers (NICK and USER, then 001), has each JOIN the
  /// channel and waits for its 366, the end of the names that closes a
  /// JOIN: once the last receiver has its 366, all are members. Then the
  /// sender does the same, since the peers create channels +n (no
  /// messages from outside). Every client does each step before any waits,
  /// so the server registers them side by side.
  static func connect(port: UInt16, receivers count: Int) throws -> (
    receivers: [Int32], sender: Int32
  ) {
    var receivers: [Int32] = []
    do {
      for _ in 0..<count { receivers.append(try connectWithoutDelay(port: port)) }
      try enter(receivers, nicks: (0..<count).map { "r\($0)" })
      let sender = try connectWithoutDelay(port: port)
      do {
        try enter([sender], nicks: ["s"])
      } catch {
        close(sender)
        throw error
      }
      return (receivers, sender)
    } catch {
      for fd in receivers { close(fd) }
      throw error
    }
  }

  /// A connection whose every write leaves at once (TCP_NODELAY), as an
  /// interactive client's should and as hiredis' are for redis-benchmark:
  /// with Nagle's algorithm on, the sender's small writes would wait for
  /// the server's acknowledgement of the last, which a server that sends
  /// the sender nothing back delays, and every server would be measured
  /// through that wait.
  private static func connectWithoutDelay(port: UInt16) throws -> Int32 {
    let fd = try LoopbackSocket.connect(port: port)
    _ = chat_send_without_delay(fd)
    return fd
  }

  /// Each client's 366 may come before its JOIN: chatbroker joins a new
  /// session of a user to that user's rooms after the welcome burst and
  /// does not answer a JOIN of a room the session is in (chatbroker(7),
  /// IRC), which is the sender's case there, as all clients are one user.
  /// So the 366 is looked for in all the client got since NICK.
  private static func enter(_ clients: [Int32], nicks: [String]) throws {
    var received = [[UInt8]](repeating: [], count: clients.count)
    for (fd, nick) in zip(clients, nicks) {
      writeAll(fd, Array("NICK \(nick)\r\nUSER \(nick) 0 * :chatbench\r\n".utf8))
    }
    for (index, fd) in clients.enumerated() { try read(fd, into: &received[index], until: " 001 ") }
    for fd in clients { writeAll(fd, Array("JOIN \(channel)\r\n".utf8)) }
    for (index, fd) in clients.enumerated() { try read(fd, into: &received[index], until: " 366 ") }
  }

  /// Reads from `fd` into `received` until `token` is in it, or fails on
  /// the server's ERROR line (a limit it enforces) or after 60 seconds.
  /// What is read is not counted: before the first message there is no
  /// PRIVMSG to count, and no PING in a run of seconds (IRCServers.swift).
  private static func read(_ fd: Int32, into received: inout [UInt8], until token: String) throws {
    let deadline = Date().addingTimeInterval(60)
    var buffer = [UInt8](repeating: 0, count: 16384)
    while true {
      let text = String(decoding: received, as: UTF8.self)
      if text.contains(token) { return }
      if let error = text.range(of: "ERROR :") {
        throw BenchError(
          "the IRC server refused a client: \(text[error.lowerBound...].prefix { $0 != "\r" })")
      }
      guard Date() < deadline else {
        throw BenchError(
          "no \(token.trimmed) from the IRC server after \(text.suffix(300).debugDescription)")
      }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 100) > 0 else { continue }
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else {
        throw BenchError("the IRC server closed a client waiting for \(token.trimmed)")
      }
      received.append(contentsOf: buffer[0..<count])
    }
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespaces) }
}

/// What the fan-out load counts in the bytes an IRC server sends one
/// client: the channel's PRIVMSGs, one per delivery whatever each line's
/// prefix, and PINGs, which it answers. A line may be split across two
/// reads, so the scan of each read starts ``overlap`` bytes before it, in
/// the end of the one before (the caller reads at that offset), and counts
/// only what ends in the new bytes.
struct IRCDeliveryScanner {
  /// Room before the read for the end of the last one: more than either
  /// pattern is long.
  static let overlap = 32
  private static let delivery = Array("PRIVMSG \(IRCFanoutClients.channel) :".utf8)
  private static let ping = Array("PING ".utf8)

  private var tail = [UInt8](repeating: 0, count: overlap)
  private var tailCount = 0
  /// The token of a PING whose line has not ended yet.
  private var pingToken: [UInt8]?

  /// The PRIVMSGs in the `count` bytes read at `buffer + overlap`, after
  /// answering the PINGs among them on `fd`.
  mutating func scan(_ buffer: UnsafeMutableRawPointer, count: Int, answering fd: Int32) -> Int {
    let start = buffer + Self.overlap - tailCount
    tail.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: tailCount) }
    let end = buffer + Self.overlap + count
    let fresh = UnsafeRawPointer(buffer + Self.overlap)
    let found = occurrences(of: Self.delivery, from: start, to: end, endingAfter: fresh)
    finishPing(from: fresh, to: end, answering: fd)
    var cursor = UnsafeRawPointer(start)
    while let match = find(Self.ping, from: cursor, to: end) {
      cursor = match + Self.ping.count
      guard cursor > fresh else { continue }
      pingToken = []
      finishPing(from: cursor, to: end, answering: fd)
    }
    tailCount = min(Self.overlap, end - start)
    tail.withUnsafeMutableBytes {
      $0.baseAddress!.copyMemory(from: end - tailCount, byteCount: tailCount)
    }
    return found
  }

  /// Adds to the pending PING's token up to the end of its line, and once
  /// it has ended answers it.
  private mutating func finishPing(
    from cursor: UnsafeRawPointer, to end: UnsafeRawPointer, answering fd: Int32
  ) {
    guard pingToken != nil else { return }
    var lineEnd = cursor
    while lineEnd < end, lineEnd.load(as: UInt8.self) != 13, lineEnd.load(as: UInt8.self) != 10 {
      lineEnd += 1
    }
    pingToken! += UnsafeRawBufferPointer(start: cursor, count: lineEnd - cursor)
    guard lineEnd < end else { return }
    writeAll(fd, Array("PONG ".utf8) + pingToken! + [13, 10])
    pingToken = nil
  }
}

/// How often `pattern` occurs between `start` and `end`, counting only
/// the occurrences that end after `fresh`.
private func occurrences(
  of pattern: [UInt8], from start: UnsafeRawPointer, to end: UnsafeRawPointer,
  endingAfter fresh: UnsafeRawPointer
) -> Int {
  var found = 0
  var cursor = start
  while let match = find(pattern, from: cursor, to: end) {
    cursor = match + pattern.count
    if cursor > fresh { found += 1 }
  }
  return found
}

/// The first `pattern` between `start` and `end`: `memchr` for its first
/// byte, then `memcmp` (Glibc's module leaves out `memmem`). Both patterns
/// start with `P`, which a delivery has once, in its command.
private func find(_ pattern: [UInt8], from start: UnsafeRawPointer, to end: UnsafeRawPointer)
  -> UnsafeRawPointer?
{
  pattern.withUnsafeBytes { wanted in
    var cursor = start
    while end - cursor >= wanted.count,
      let match = memchr(cursor, Int32(wanted[0]), end - cursor - wanted.count + 1)
    {
      let candidate = UnsafeRawPointer(match)
      if memcmp(candidate, wanted.baseAddress!, wanted.count) == 0 { return candidate }
      cursor = candidate + 1
    }
    return nil
  }
}

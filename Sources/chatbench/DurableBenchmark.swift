import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench durable`: SAY acknowledged only after fdatasync, with 1, 10
/// and 100 concurrent senders, each keeping a window of requests in flight;
/// and the broker's start-up time on a journal of a million records.
enum DurableBenchmark {
  static let mode = BenchmarkMode(
    name: "durable",
    synopsis:
      "[--senders 1,10,100] [--seconds S] [--window W] [--records N] [--compare-redis]",
    run: run)

  static func run(_ arguments: [String]) -> ExitCode {
    guard
      let options = parseOptions(
        arguments, known: ["--senders", "--seconds", "--window", "--records"],
        flags: ["--compare-redis"]),
      let senderCounts = parseCounts(options["--senders"] ?? "1,10,100"),
      let seconds = parseCount(options["--seconds"] ?? "3"),
      let window = parseCount(options["--window"] ?? "8"),
      let records = parseCount(options["--records"] ?? "1000000")
    else { return .usage }
    let compare = options["--compare-redis"] != nil
    raiseFileLimit()
    do {
      print(
        "durable writes acknowledged per second, \(window) in flight per client, 100-byte texts"
      )
      print(
        compare
          ? "chatbroker SAY (fdatasync before OK) vs Redis SET and XADD (appendonly yes, appendfsync always)"
          : "chatbroker SAY (fdatasync before OK, group commit)")
      var header = "clients  chatbroker  syncs/s  ack p50   ack p99 "
      if compare { header += "  redis SET  ratio  redis XADD  ratio" }
      print(header + "  load")
      for senders in senderCounts {
        let ours = try throughput(.chatbroker, senders: senders, seconds: seconds, window: window)
        var line =
          "\(pad(senders, 7))  \(pad(Int(ours.acksPerSecond), 10))  \(pad(Int(ours.syncsPerSecond), 7))  \(format(ours.p50, 2)) ms  \(format(ours.p99, 2)) ms"
        if compare {
          for peer in [Peer.redisSet, .redisXadd] {
            let theirs = try throughput(peer, senders: senders, seconds: seconds, window: window)
            line +=
              "  \(pad(Int(theirs.acksPerSecond), 9))  \(format(ours.acksPerSecond / theirs.acksPerSecond, 2))"
          }
        }
        print(line + "  " + loadAverage())
      }
      let startup = try startupTime(records: records)
      print(
        "start-up on a journal of \(records) records (\(startup.bytes / 1_000_000) MB): ready after \(format(startup.seconds * 1000, 0)) ms  load \(loadAverage())"
      )
      return .success
    } catch {
      printError("chatbench durable: \(error)")
      return .software
    }
  }

  struct Result {
    var acksPerSecond: Double
    var syncsPerSecond: Double
    var p50: Double
    var p99: Double
  }

  /// Who answers the writes: chatbroker (SAY), or Redis with every write
  /// fsynced before its reply (SET of a key per client, or XADD to a
  /// stream per client), the same client and window for all.
  enum Peer {
    case chatbroker
    case redisSet
    case redisXadd

    func request(client: Int, text: String) -> [UInt8] {
      switch self {
      case .chatbroker: LineCodec.encode(.say(.room(RoomName("#durable")!), text: text))
      case .redisSet: Array("SET key\(client) \(text)\r\n".utf8)
      case .redisXadd: Array("XADD stream\(client) * text \(text)\r\n".utf8)
      }
    }

    /// LFs per reply: `OK SAY <id> <time>`, `+OK`, or `$<n>` and the entry's id.
    var linesPerReply: Int { self == .redisXadd ? 2 : 1 }

    /// Whether a reply (its first line) is a success.
    func accepts(_ line: ArraySlice<UInt8>) -> Bool {
      switch self {
      case .chatbroker: line.starts(with: Array("OK SAY".utf8))
      case .redisSet: line.starts(with: Array("+OK".utf8))
      case .redisXadd: line.first == UInt8(ascii: "$")
      }
    }
  }

  static func throughput(_ peer: Peer, senders count: Int, seconds: Int, window: Int) throws
    -> Result
  {
    let directory = peer == .chatbroker ? makeTemporaryDirectory() : ""
    let server: ServerUnderTest =
      peer == .chatbroker
      ? try ServerUnderTest.chatbroker([], directory: directory)
      : try ServerUnderTest.redis(durable: true)
    let fds = try (0..<count).map { _ in try connectUnix(server.socketPath) }
    if peer == .chatbroker {
      for fd in fds { _ = try readLines(fd, count: 1) }
    }
    let text = String(repeating: "d", count: 100)
    let requests = (0..<count).map { peer.request(client: $0, text: text) }
    var sentAt = [[UInt64]](repeating: [], count: count)
    var latencies: [Double] = []
    var acks = 0
    var buffers = [[UInt8]](repeating: [], count: count)
    var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let started = monotonicNanoseconds()
    let end = started + UInt64(seconds) * 1_000_000_000
    for index in fds.indices {
      // The window goes out pipelined, in one write, as a client library would.
      writeAll(fds[index], Array(Array(repeating: requests[index], count: window).joined()))
      let now = monotonicNanoseconds()
      sentAt[index].append(contentsOf: repeatElement(now, count: window))
    }
    while monotonicNanoseconds() < end {
      guard poll(&pollers, nfds_t(pollers.count), 100) > 0 else { continue }
      for index in pollers.indices where pollers[index].revents != 0 {
        let read = chunk.withUnsafeMutableBytes { Glibc.read(fds[index], $0.baseAddress, $0.count) }
        guard read > 0 else { throw BenchError("the server closed a client") }
        buffers[index].append(contentsOf: chunk[0..<read])
        let now = monotonicNanoseconds()
        var replies = 0
        var consumed = 0
        var lines = 0
        var replyStart = 0
        while let newline = buffers[index][consumed...].firstIndex(of: UInt8(ascii: "\n")) {
          if lines == 0 {
            guard peer.accepts(buffers[index][consumed..<newline]) else {
              throw BenchError(String(decoding: buffers[index][consumed..<newline], as: UTF8.self))
            }
            replyStart = consumed
          }
          lines += 1
          consumed = newline + 1
          if lines == peer.linesPerReply {
            lines = 0
            replies += 1
            replyStart = consumed
          }
        }
        buffers[index].removeSubrange(..<replyStart)
        for sent in sentAt[index].prefix(replies) { latencies.append(Double(now - sent) / 1e6) }
        sentAt[index].removeFirst(replies)
        acks += replies
        if now < end && replies > 0 {
          writeAll(fds[index], Array(Array(repeating: requests[index], count: replies).joined()))
          let sent = monotonicNanoseconds()
          sentAt[index].append(contentsOf: repeatElement(sent, count: replies))
        }
      }
    }
    let elapsed = Double(monotonicNanoseconds() - started) / 1e9
    for fd in fds { close(fd) }
    var syncs = 0
    if peer == .chatbroker {
      server.process.signal(SIGTERM)
      server.process.waitUntilExit()
      let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
      syncs =
        log.split(separator: " ").first { $0.hasPrefix("syncs=") }
        .flatMap { Int($0.dropFirst(6).prefix { $0.isNumber }) } ?? 0
    }
    server.stop()
    let sorted = latencies.sorted()
    return Result(
      acksPerSecond: Double(acks) / elapsed, syncsPerSecond: Double(syncs) / elapsed,
      p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99))
  }

  /// Writes a journal of `records` records (100 rooms of messages, a few
  /// thousand pending schedules) and times the broker from start to its
  /// first answer.
  static func startupTime(records: Int) throws -> (seconds: Double, bytes: Int) {
    let text = String(repeating: "j", count: 80)
    let now = wallMilliseconds()
    var bytes = 0
    let directory = try journalDirectory(records: records - 1) { offset in
      let index = offset + 1
      let id = String(index, radix: 36)
      let room = "#room\(index % 100)"
      let line: String
      if index % 200 == 0 {
        line =
          #"{"type":"schedule","id":"\#(id)","to":"\#(room)","from":"bench","created":"2026-11-30T17:00:00.000Z","due":"\#(timestamp(now + 86_400_000 + Int64(index)))","text":"\#(text)"}"#
      } else {
        line =
          #"{"type":"message","id":"\#(id)","to":"\#(room)","from":"bench","at":"2026-11-30T17:00:00.000Z","text":"\#(text)"}"#
      }
      bytes += line.utf8.count + 1
      return line
    }
    let started = monotonicNanoseconds()
    let broker = try ServerUnderTest.chatbroker(["--no-sync"], directory: directory)
    let fd = try connectUnix(broker.socketPath)
    _ = try readLines(fd, count: 1)
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    close(fd)
    broker.stop()
    return (seconds, bytes)
  }

  static func timestamp(_ milliseconds: Int64) -> String {
    let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
  }
}

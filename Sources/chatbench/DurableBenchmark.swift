import Foundation
import Glibc

/// `chatbench durable`: SAY acknowledged only after fdatasync, with 1, 10
/// and 100 concurrent senders, each keeping a window of requests in flight;
/// and the broker's start-up time on a journal of a million records.
enum DurableBenchmark {
  static let mode = BenchmarkMode(
    name: "durable", synopsis: "[--senders 1,10,100] [--seconds S] [--window W] [--records N]",
    run: run)

  static func run(_ arguments: [String]) -> Int32 {
    guard
      let options = parseOptions(
        arguments, known: ["--senders", "--seconds", "--window", "--records"]),
      let senderCounts = parseCounts(options["--senders"] ?? "1,10,100"),
      let seconds = parseCount(options["--seconds"] ?? "3"),
      let window = parseCount(options["--window"] ?? "8"),
      let records = parseCount(options["--records"] ?? "1000000")
    else { return exitUsage }
    raiseFileLimit()
    do {
      print(
        "durable SAY (fdatasync before every OK, group commit), \(window) in flight per sender:")
      print("senders  acks/s    syncs/s  ack p50    ack p99")
      for senders in senderCounts {
        let result = try throughput(senders: senders, seconds: seconds, window: window)
        print(
          "\(pad(senders, 7))  \(pad(Int(result.acksPerSecond), 8))  \(pad(Int(result.syncsPerSecond), 7))  \(format(result.p50, 2)) ms  \(format(result.p99, 2)) ms"
        )
      }
      let startup = try startupTime(records: records)
      print(
        "start-up on a journal of \(records) records (\(startup.bytes / 1_000_000) MB): ready after \(format(startup.seconds * 1000, 0)) ms"
      )
      return 0
    } catch {
      printError("chatbench durable: \(error)")
      return exitSoftware
    }
  }

  struct Result {
    var acksPerSecond: Double
    var syncsPerSecond: Double
    var p50: Double
    var p99: Double
  }

  static func throughput(senders count: Int, seconds: Int, window: Int) throws -> Result {
    let directory = makeTemporaryDirectory()
    let broker = try ServerUnderTest.chatbroker([], directory: directory)
    let fds = try (0..<count).map { _ in try connectUnix(broker.socketPath) }
    for fd in fds { _ = try readLines(fd, count: 1) }
    let text = String(repeating: "d", count: 100)
    let request = Array("SAY #durable \(text)\n".utf8)
    var sentAt = [[UInt64]](repeating: [], count: count)
    var latencies: [Double] = []
    var acks = 0
    var buffers = [[UInt8]](repeating: [], count: count)
    var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let started = monotonicNanoseconds()
    let end = started + UInt64(seconds) * 1_000_000_000
    for index in fds.indices {
      for _ in 0..<window {
        writeAll(fds[index], request)
        sentAt[index].append(monotonicNanoseconds())
      }
    }
    while monotonicNanoseconds() < end {
      guard poll(&pollers, nfds_t(pollers.count), 100) > 0 else { continue }
      for index in pollers.indices where pollers[index].revents != 0 {
        let read = chunk.withUnsafeMutableBytes { Glibc.read(fds[index], $0.baseAddress, $0.count) }
        guard read > 0 else { throw BenchError("the broker closed a sender") }
        buffers[index].append(contentsOf: chunk[0..<read])
        let now = monotonicNanoseconds()
        var replies = 0
        while let newline = buffers[index].firstIndex(of: UInt8(ascii: "\n")) {
          guard buffers[index].starts(with: Array("OK SAY".utf8)) else {
            throw BenchError(String(decoding: buffers[index][..<newline], as: UTF8.self))
          }
          buffers[index].removeSubrange(...newline)
          latencies.append(Double(now - sentAt[index].removeFirst()) / 1e6)
          replies += 1
        }
        acks += replies
        if now < end {
          for _ in 0..<replies {
            writeAll(fds[index], request)
            sentAt[index].append(monotonicNanoseconds())
          }
        }
      }
    }
    let elapsed = Double(monotonicNanoseconds() - started) / 1e9
    for fd in fds { close(fd) }
    kill(broker.process.processIdentifier, SIGTERM)
    broker.process.waitUntilExit()
    let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
    let syncs =
      log.split(separator: " ").first { $0.hasPrefix("syncs=") }
      .flatMap { Int($0.dropFirst(6).prefix { $0.isNumber }) } ?? 0
    broker.stop()
    let sorted = latencies.sorted()
    return Result(
      acksPerSecond: Double(acks) / elapsed, syncsPerSecond: Double(syncs) / elapsed,
      p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99))
  }

  /// Writes a journal of `records` records (100 rooms of messages, a few
  /// thousand pending schedules) and times the broker from start to its
  /// first answer.
  static func startupTime(records: Int) throws -> (seconds: Double, bytes: Int) {
    let directory = makeTemporaryDirectory()
    let state = directory + "/state"
    mkdir(state, 0o700)
    var journal: [UInt8] = []
    journal.reserveCapacity(records * 150)
    journal.append(contentsOf: #"{"type":"journal","version":1,"next_id":"1"}"#.utf8)
    journal.append(UInt8(ascii: "\n"))
    let text = String(repeating: "j", count: 80)
    let now = wallMilliseconds()
    for index in 1..<records {
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
      journal.append(contentsOf: line.utf8)
      journal.append(UInt8(ascii: "\n"))
    }
    let path = state + "/journal.jsonl"
    guard FileManager.default.createFile(atPath: path, contents: Data(journal)) else {
      throw BenchError("cannot write \(path)")
    }
    let started = monotonicNanoseconds()
    let broker = try ServerUnderTest.chatbroker(["--no-sync"], directory: directory)
    let fd = try connectUnix(broker.socketPath)
    _ = try readLines(fd, count: 1)
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    close(fd)
    broker.stop()
    return (seconds, journal.count)
  }

  static func timestamp(_ milliseconds: Int64) -> String {
    let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
  }
}

import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench schedule`: how fast SAYAT is accepted, how late scheduled
/// lines arrive with many pending, and what a pending line costs in memory.
///
/// The pending lines are scheduled first, due a day later; once every one
/// was accepted, each measured rate gets its own lines, due at that rate
/// over a window that opens only after they too were all accepted. Each
/// line's text carries its due instant; a reader in the room compares it
/// with the wall clock when the MSG arrives.
enum ScheduleBenchmark {
  static let mode = BenchmarkMode(
    name: "schedule",
    synopsis: "[--pending 1000,1000000] [--rates 10000,50000,100000,200000] [--window SECONDS]",
    run: run)

  /// The lateness a rate must keep at p99 to count as kept up with.
  static let p99Bound = 2.0

  static func run(_ arguments: [String]) -> ExitCode {
    guard let options = parseOptions(arguments, known: ["--pending", "--rates", "--window"]),
      let counts = parseCounts(options["--pending"] ?? "1000,1000000"),
      let rates = parseCounts(options["--rates"] ?? "10000,50000,100000,200000"),
      let window = parseCount(options["--window"] ?? "2")
    else { return .usage }
    print(
      "scheduling: lines falling due at a rate over \(window) s, with N pending for later (release build, --no-sync)"
    )
    print(
      "pending   SAYAT accepted/s  bytes/pending         due/s   lateness p50     p99         max      load"
    )
    do {
      for count in counts {
        try measure(pending: count, rates: rates, windowSeconds: window)
      }
      return .success
    } catch {
      printError("chatbench schedule: \(error)")
      return .software
    }
  }

  /// One SAYAT line per due instant, to `room`, its text carrying the instant.
  static func requests(room name: String, dues: [Int64]) -> [UInt8] {
    let room = Target.room(RoomName(name)!)
    var requests: [UInt8] = []
    requests.reserveCapacity(dues.count * 80)
    for due in dues {
      let text = "d=\(due) "
      let padded = text + String(repeating: "z", count: max(0, textLength - text.utf8.count))
      let seconds = due / 1000
      let millis = String(due % 1000)
      let fraction = String(repeating: "0", count: 3 - millis.count) + millis
      LineCodec.append(
        .sayAt(room, when: "@\(seconds).\(fraction)", text: padded), to: &requests)
    }
    return requests
  }

  static let textLength = 32

  /// Sends `requests` (of `count` lines) and waits for every answer;
  /// returns the seconds it took.
  static func accept(_ author: Int32, _ requests: [UInt8], count: Int) throws -> Double {
    let started = monotonicNanoseconds()
    let sender = Worker { writeAll(author, requests) }
    let replies = try countReplies(author, expected: count)
    sender.join()
    guard replies.failures == 0 else {
      throw BenchError("\(replies.failures) SAYATs were refused: \(replies.firstFailure)")
    }
    return Double(monotonicNanoseconds() - started) / 1e9
  }

  static func measure(pending count: Int, rates: [Int], windowSeconds: Int) throws {
    let measured = rates.map { $0 * windowSeconds }
    // The reader must take a burst of up to a million lines; a loaded
    // machine must not get it dropped as a slow reader mid-measurement.
    let broker = try ServerUnderTest.chatbroker([
      "--no-sync", "--pending-per-user", String(count + (measured.max() ?? 0) + 1),
      "--output-limit", "1073741824",
    ])
    defer { broker.stop() }
    let reader = try connectUnix(broker.socketPath)
    writeAll(reader, LineCodec.encode(.join(RoomName("#sched")!)))
    _ = try readLines(reader, count: 2)
    let author = try connectUnix(broker.socketPath)
    _ = try readLines(author, count: 1)
    usleep(100_000)
    let memoryBefore = broker.residentBytes

    // The pending lines: due a day from now, in a room nobody reads.
    let later = wallMilliseconds() + 86_400_000
    let pendingSeconds = try accept(
      author, requests(room: "#later", dues: (0..<Int64(count)).map { later + $0 }), count: count)
    usleep(100_000)
    let bytesPerPending =
      Double(broker.residentBytes - memoryBefore) / Double(count) - Double(textLength)
    print(
      "\(pad(count, 7))  \(pad(Int(Double(count) / pendingSeconds), 16))  \(pad(Int(bytesPerPending), 13))"
    )

    var kept: Int?
    for (rate, lines) in zip(rates, measured) {
      // Due instants start after the expected acceptance time (about
      // 100,000 SAYATs a second, doubled for a loaded machine).
      var lead = Int64(500 + lines / 50)
      var lateness: [Double] = []
      while true {
        let firstDue = wallMilliseconds() + lead
        let dues = (0..<lines).map { firstDue + Int64($0) * 1000 / Int64(rate) }
        _ = try accept(author, requests(room: "#sched", dues: dues), count: lines)
        let opened = wallMilliseconds() < firstDue
        lateness = try collectLateness(
          reader, count: lines, timeout: Double(lead) / 1000 + Double(windowSeconds) + 60)
        // The window opened before every line was accepted: the run
        // measured its own set-up. Again, with more time to accept.
        if opened { break }
        lead *= 2
      }
      let sorted = lateness.sorted()
      let p99 = percentile(sorted, 0.99)
      if p99 <= p99Bound { kept = rate }
      print(
        "\(String(repeating: " ", count: 42))\(pad(rate, 7))  \(pad(format(percentile(sorted, 0.5), 2), 9)) ms  \(pad(format(p99, 2), 7)) ms  \(pad(format(sorted.last ?? .nan, 2), 7)) ms  \(loadAverage())"
      )
    }
    print(
      "  highest due rate kept under \(format(p99Bound, 0)) ms p99 with \(count) pending: "
        + (kept.map { "\($0)/s" } ?? "none of those tried"))
    close(author)
    close(reader)
  }

  static func countReplies(_ fd: Int32, expected: Int) throws -> (
    failures: Int, firstFailure: String
  ) {
    var seen = 0
    var failures = 0
    var firstFailure = ""
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while seen < expected {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard count > 0 else { throw BenchError("the broker closed the connection") }
      pending.append(contentsOf: buffer[0..<count])
      var start = 0
      while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
        if pending[start] == UInt8(ascii: "E") {
          failures += 1
          if firstFailure.isEmpty {
            firstFailure = String(decoding: pending[start..<newline], as: UTF8.self)
          }
        }
        seen += 1
        start = newline + 1
      }
      pending.removeSubrange(0..<start)
    }
    return (failures, firstFailure)
  }

  /// Milliseconds between each line's due instant and its arrival.
  static func collectLateness(_ fd: Int32, count: Int, timeout: Double) throws -> [Double] {
    var lateness: [Double] = []
    lateness.reserveCapacity(count)
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    let deadline = Date().addingTimeInterval(timeout)
    while lateness.count < count {
      guard Date() < deadline else {
        throw BenchError("only \(lateness.count) of \(count) lines arrived")
      }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 200) > 0 else { continue }
      let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      guard read > 0 else { throw BenchError("the broker closed the reader") }
      let arrived = Double(wallMicroseconds()) / 1000
      pending.append(contentsOf: buffer[0..<read])
      var start = 0
      while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
        let line = pending[start..<newline]
        if let marker = line.firstIndex(of: UInt8(ascii: "=")) {
          let digits = line[(marker + 1)...].prefix { $0 >= 48 && $0 <= 57 }
          if let due = Double(String(decoding: digits, as: UTF8.self)) {
            lateness.append(arrived - due)
          }
        }
        start = newline + 1
      }
      pending.removeSubrange(0..<start)
    }
    return lateness
  }
}

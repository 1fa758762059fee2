import Foundation
import Glibc

/// `chatbench schedule`: how fast SAYAT is accepted, how late scheduled
/// lines arrive with many pending, and what a pending line costs in memory.
/// Each line's text carries its due instant; a reader in the room compares
/// it with the wall clock when the MSG arrives.
enum ScheduleBenchmark {
  static let mode = BenchmarkMode(
    name: "schedule", synopsis: "[--pending 1000,100000,1000000] [--window SECONDS]", run: run)

  static func run(_ arguments: [String]) -> Int32 {
    guard let options = parseOptions(arguments, known: ["--pending", "--window"]),
      let counts = parseCounts(options["--pending"] ?? "1000,100000,1000000"),
      let window = parseCount(options["--window"] ?? "5")
    else { return exitUsage }
    print("scheduling: N pending lines falling due over \(window) s (release build, --no-sync)")
    print(
      "pending    SAYAT accepted/s  lateness p50    p99      max      bytes/pending beyond text")
    do {
      for count in counts {
        let result = try measure(pending: count, windowSeconds: window)
        print(
          "\(pad(count, 7))  \(pad(Int(result.acceptRate), 16))  \(format(result.p50, 2)) ms  \(format(result.p99, 2)) ms  \(format(result.maximum, 2)) ms  \(pad(Int(result.bytesPerPending), 6))"
        )
      }
      return 0
    } catch {
      printError("chatbench schedule: \(error)")
      return exitSoftware
    }
  }

  struct Result {
    var acceptRate: Double
    var p50: Double
    var p99: Double
    var maximum: Double
    var bytesPerPending: Double
  }

  static func measure(pending count: Int, windowSeconds: Int) throws -> Result {
    // The reader must take a burst of up to a million lines; a loaded
    // machine must not get it dropped as a slow reader mid-measurement.
    let broker = try ServerUnderTest.chatbroker([
      "--no-sync", "--pending-per-user", String(count + 1), "--output-limit", "1073741824",
    ])
    defer { broker.stop() }
    let reader = try connectUnix(broker.socketPath)
    writeAll(reader, Array("JOIN #sched\n".utf8))
    _ = try readLines(reader, count: 2)
    let author = try connectUnix(broker.socketPath)
    _ = try readLines(author, count: 1)
    usleep(100_000)
    let memoryBefore = broker.residentBytes

    // Due instants start after the expected acceptance time, so lateness is
    // measured with the broker otherwise idle.
    let lead = Int64(1000 + count / 50)
    let firstDue = wallMilliseconds() + lead
    let spread = Int64(windowSeconds * 1000)
    let textLength = 32
    var requests: [UInt8] = []
    requests.reserveCapacity(count * 80)
    for index in 0..<count {
      let due = firstDue + spread * Int64(index) / Int64(max(1, count))
      let text = "d=\(due) "
      let padded = text + String(repeating: "z", count: max(0, textLength - text.utf8.count))
      let seconds = due / 1000
      let millis = String(due % 1000)
      let fraction = String(repeating: "0", count: 3 - millis.count) + millis
      requests.append(contentsOf: "SAYAT #sched @\(seconds).\(fraction) \(padded)\n".utf8)
    }
    let started = monotonicNanoseconds()
    let finished = requests
    let sender = Worker { writeAll(author, finished) }
    let replies = try countReplies(author, expected: count)
    sender.join()
    let acceptSeconds = Double(monotonicNanoseconds() - started) / 1e9
    guard replies.failures == 0 else {
      throw BenchError("\(replies.failures) SAYATs were refused: \(replies.firstFailure)")
    }
    usleep(100_000)
    let memoryAfter = broker.residentBytes

    let lateness = try collectLateness(
      reader, count: count, timeout: Double(lead + spread) / 1000 + 60)
    close(author)
    close(reader)
    let sorted = lateness.sorted()
    return Result(
      acceptRate: Double(count) / acceptSeconds, p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99), maximum: sorted.last ?? .nan,
      bytesPerPending: Double(memoryAfter - memoryBefore) / Double(count) - Double(textLength))
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

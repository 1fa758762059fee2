import Foundation
import Glibc

/// A real `chatbroker` on a temporary socket and state directory, for
/// integration tests. Stopped (SIGTERM, then SIGKILL) when released.
final class BrokerProcess: @unchecked Sendable {
  let directory: String
  let socketPath: String
  let stateDirectory: String
  let logPath: String
  private(set) var process: Process?

  /// Makes a fresh temporary directory (short path: sockets allow 107 bytes).
  init() throws {
    directory = try makeShortTemporaryDirectory("cb")
    socketPath = directory + "/sock"
    stateDirectory = directory + "/state"
    logPath = directory + "/broker.log"
  }

  deinit {
    if let process, process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Starts the broker and waits (bounded) until it accepts connections.
  @discardableResult
  func start(_ extraArguments: [String] = ["--no-sync"], timeout: Double = 10) throws -> Self {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: BuiltProducts.path("chatbroker"))
    process.arguments = ["--socket", socketPath, "--state-dir", stateDirectory] + extraArguments
    if !FileManager.default.fileExists(atPath: logPath) {
      _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    }
    let log = FileHandle(forWritingAtPath: logPath)!
    log.seekToEndOfFile()
    process.standardError = log
    process.standardOutput = log
    try process.run()
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
    kill(process.processIdentifier, number)
    try waitUntil(timeout: timeout, "chatbroker to exit") { !process.isRunning }
    self.process = nil
    return process.terminationStatus
  }

  func connect(timeout: Double = 10) throws -> LineClient {
    let client = try LineClient(path: socketPath, timeout: timeout)
    client.greeting = try client.expect("HELLO ")
    return client
  }

  /// Connects as another Unix user (root only): `nc -U` run through
  /// `setpriv` with that user's uid and gid, so the broker's peer
  /// credentials name them.
  func connect(as user: String, timeout: Double = 10) throws -> LineClient {
    let client = try LineClient(
      running: [
        "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups",
        "/usr/bin/nc", "-N", "-U", socketPath,
      ], timeout: timeout)
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

/// Polls `condition` until it holds; fails after `timeout` seconds. For
/// waiting on another process, where no event can be awaited directly.
func waitUntil(
  timeout: Double, _ what: String, _ condition: () throws -> Bool
) throws {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if try condition() { return }
    usleep(5000)
  }
  throw TestFailure("timed out after \(timeout) s waiting for \(what)")
}

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
    var template = Array("/tmp/cb-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
    directory = String(cString: made)
    chmod(directory, 0o755)
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
      return (try? LineClient(path: self.socketPath)) != nil
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
    _ = try client.expect("HELLO ")
    return client
  }

  var log: String {
    (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
  }

  var journal: String {
    (try? String(contentsOfFile: stateDirectory + "/journal.jsonl", encoding: .utf8)) ?? ""
  }
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

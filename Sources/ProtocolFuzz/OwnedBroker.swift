import Foundation
import Glibc

/// A chatbroker the fuzzer starts itself (`chatfuzz --broker`), so that it
/// can see it crash, restart it, replay single requests against it to find
/// the one that crashed it, and check its journal replays at the end.
final class OwnedBroker: @unchecked Sendable {
  let binary: String
  let directory: String
  let socketPath: String
  let arguments: [String]
  private var process: Process?
  /// Each start gets its own log, so that a log names one run of the broker.
  private(set) var logPaths: [String] = []
  private(set) var stateDirectory: String

  init(binary: String, arguments: [String]) throws {
    self.binary = binary
    self.arguments = arguments
    var template = Array("/tmp/chatfuzz-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw FuzzError("mkdtemp failed") }
    directory = String(cString: made)
    // Other Unix users must reach the socket in it.
    chmod(directory, 0o755)
    socketPath = directory + "/sock"
    stateDirectory = directory + "/state-1"
  }

  /// Starts the broker, on the same state directory unless `fresh`, and
  /// waits (bounded) until it answers.
  func start(fresh: Bool = false, timeout: Double = 15) throws {
    if fresh { stateDirectory = directory + "/state-\(logPaths.count + 1)" }
    let logPath = directory + "/broker-\(logPaths.count + 1).log"
    logPaths.append(logPath)
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let log = FileHandle(forWritingAtPath: logPath)!
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = ["--socket", socketPath, "--state-dir", stateDirectory] + arguments
    process.standardError = log
    process.standardOutput = log
    process.standardInput = FileHandle.nullDevice
    try process.run()
    try? log.close()
    self.process = process
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
      if !process.isRunning {
        throw FuzzError("chatbroker exited with \(process.terminationStatus): \(lastLogLines())")
      }
      if let probe = try? ProbeConnection(path: socketPath), (try? probe.ping("start", 2)) != nil {
        return
      }
      sleepSeconds(0.02)
    }
    throw FuzzError("chatbroker did not answer within \(Int(timeout)) s: \(lastLogLines())")
  }

  var isRunning: Bool { process?.isRunning ?? false }

  var exitDescription: String {
    guard let process, !process.isRunning else { return "running" }
    return process.terminationReason == .uncaughtSignal
      ? "killed by signal \(process.terminationStatus)" : "exit status \(process.terminationStatus)"
  }

  /// SIGTERM and the exit status (nil when it did not exit within
  /// `timeout`, after which it is killed).
  func stop(timeout: Double = 5) -> Int32? {
    guard let process, process.isRunning else { return process?.terminationStatus }
    kill(process.processIdentifier, SIGTERM)
    let deadline = monotonicSeconds() + timeout
    while process.isRunning && monotonicSeconds() < deadline { sleepSeconds(0.01) }
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      return nil
    }
    return process.terminationStatus
  }

  func kill9() {
    if let process, process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  var currentLog: String {
    guard let path = logPaths.last else { return "" }
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
  }

  func lastLogLines(_ count: Int = 5) -> String {
    currentLog.split(separator: "\n").suffix(count).joined(separator: " | ")
  }

  func removeFiles() {
    kill9()
    try? FileManager.default.removeItem(atPath: directory)
  }
}

/// Lines of a broker's log that tell of a crash: Swift runtime traps, fatal
/// errors, sanitizer reports.
public enum LogScan {
  static let markers = [
    "Fatal error", "fatal error", "Trace/breakpoint trap", "Illegal instruction",
    "Segmentation fault", "AddressSanitizer", "ThreadSanitizer", "LeakSanitizer",
    "UndefinedBehaviorSanitizer", "SUMMARY: ", "Current stack trace", "Precondition failed",
    "Assertion failed",
  ]

  /// The lines of `log` that tell of a crash.
  public static func alarms(in log: String) -> [String] {
    log.split(separator: "\n").filter { line in
      markers.contains { line.contains($0) }
    }.map(String.init)
  }
}

struct FuzzError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

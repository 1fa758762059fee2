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

/// What the Swift runtime's backtrace in a broker's log says about a
/// crash: the failure, and the broker's own frames of the thread that
/// crashed, innermost first.
struct CrashReport {
  var failure: String?
  var frames: [String] = []

  init(log: String) {
    var inCrashedThread = false
    for line in log.split(separator: "\n") {
      if let range = line.range(of: "Swift runtime failure: ") ?? line.range(of: "Fatal error: ") {
        failure = failure ?? line[range.upperBound...].replacingOccurrences(of: " ***", with: "")
      } else if let range = line.range(of: "Program crashed: ") {
        failure =
          failure ?? line[range.upperBound...].split(separator: " at ").first.map(String.init)
      }
      if line.hasSuffix(" crashed:") {
        inCrashedThread = true
      } else if inCrashedThread && line.hasPrefix("Thread ") {
        inCrashedThread = false
      }
      // "  1   0x... appendDigits(_:width:to:) + 1246 in chatbroker at /.../Timestamp.swift:62:36"
      if inCrashedThread, let at = line.range(of: " in chatbroker at /") {
        let head = line[..<at.lowerBound]
        guard let address = head.range(of: " 0x") else { continue }
        let afterAddress = head[address.upperBound...].drop { $0 != " " }.dropFirst()
        let function = afterAddress.components(separatedBy: " + ").first ?? String(afterAddress)
        let place = line[at.upperBound...].split(separator: "/").last ?? ""
        let fileAndLine = place.split(separator: ":").prefix(2).joined(separator: ":")
        if !function.hasPrefix("Swift runtime failure") {
          frames.append("\(function) (\(fileAndLine))")
        }
      }
    }
  }

  /// "arithmetic overflow in appendDigits(_:width:to:) (Timestamp.swift:62)"
  var summary: String? {
    guard let failure else { return nil }
    return frames.first.map { "\(failure) in \($0)" } ?? failure
  }
}

struct FuzzError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

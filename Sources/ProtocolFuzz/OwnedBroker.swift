import Foundation
import Glibc
import Posix

/// A chatbroker the fuzzer starts itself (`chatfuzz --broker`), so that it
/// can see it crash, restart it, replay single requests against it to find
/// the one that crashed it, and check its journal replays at the end.
final class OwnedBroker: @unchecked Sendable {
  let binary: String
  let directory: String
  let socketPath: String
  let arguments: [String]
  /// The broker's environment; this process's when nil.
  var environment: [String: String]?
  private var process: ChildProcess?
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
    let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard log >= 0 else { throw FuzzError("cannot create \(logPath)") }
    defer { close(log) }
    process = try ChildProcess(
      [binary, "--socket", socketPath, "--state-dir", stateDirectory] + arguments,
      environment: environment, standardOutput: .descriptor(log), standardError: .descriptor(log))
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
      if !isRunning {
        throw FuzzError("chatbroker ended (\(exitDescription)): \(lastLogLines())")
      }
      if let probe = try? ProbeConnection(path: socketPath), (try? probe.ping("start", 2)) != nil {
        return
      }
      sleepSeconds(0.02)
    }
    throw FuzzError("chatbroker did not answer within \(Int(timeout)) s: \(lastLogLines())")
  }

  /// Running, and not a zombie (reaped by its own pid, see ChildProcess).
  var isRunning: Bool { process?.isRunning ?? false }

  /// The exit status, or 128 plus the signal's number; nil while running.
  var exitStatus: Int32? {
    switch process?.termination {
    case .exited(let code): code
    case .signalled(let number): 128 + number
    case nil: nil
    }
  }

  var exitDescription: String {
    guard let status = exitStatus else { return isRunning ? "running" : "not started" }
    return status > 128 ? "killed by signal \(status - 128)" : "exit status \(status)"
  }

  /// SIGTERM and the exit status (nil when it did not exit within
  /// `timeout`, after which it is killed).
  func stop(timeout: Double = 5) -> Int32? {
    guard let process else { return nil }
    guard isRunning else { return exitStatus }
    process.signal(SIGTERM)
    let deadline = monotonicSeconds() + timeout
    while isRunning && monotonicSeconds() < deadline { sleepSeconds(0.01) }
    if isRunning {
      kill9()
      return nil
    }
    return exitStatus
  }

  func kill9() {
    guard let process, isRunning else { return }
    process.signal(SIGKILL)
    process.waitUntilExit()
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

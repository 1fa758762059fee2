import Foundation
import Glibc
import Posix

/// A program left running, such as `chatsh say` or `chatsh tail`: its
/// standard input written at the test's pace, its output read as it comes.
/// Stopped (SIGTERM, then SIGKILL) when released.
public final class Running: @unchecked Sendable {
  public let process: ChildProcess
  private let input = Pipe()
  public let out: Collector
  public let err: Collector

  /// Starts `path` with `arguments`, in this process's environment plus
  /// `NO_COLOR=1` and `environment`.
  public init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    env.merge(environment) { $1 }
    let stdout = Pipe()
    let stderr = Pipe()
    process = try ChildProcess(
      [path] + arguments, environment: env,
      standardInput: .descriptor(input.fileHandleForReading.fileDescriptor),
      standardOutput: .descriptor(stdout.fileHandleForWriting.fileDescriptor),
      standardError: .descriptor(stderr.fileHandleForWriting.fileDescriptor))
    // The child has its own copies: closed here, its end of output is theirs.
    try input.fileHandleForReading.close()
    try stdout.fileHandleForWriting.close()
    try stderr.fileHandleForWriting.close()
    out = Collector(stdout.fileHandleForReading)
    err = Collector(stderr.fileHandleForReading)
  }

  /// The built chatsh with `arguments`.
  public static func chatsh(_ arguments: [String], environment: [String: String] = [:]) throws
    -> Running
  {
    try Running(BuiltProducts.path("chatsh"), arguments, environment: environment)
  }

  /// SIGTERM, and SIGKILL if it is still there after 5 s.
  deinit {
    process.signal(SIGTERM)
    if !process.waitUntilExit(timeout: 5) { process.signal(SIGKILL) }
    process.waitUntilExit()
  }

  public func write(_ text: String) {
    try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
  }

  public func closeInput() {
    try? input.fileHandleForWriting.close()
  }

  /// The exit status, or nil if it did not end within `seconds` (times
  /// ``testTimeScale``).
  public func waitForExit(within seconds: Double) -> Int32? {
    process.waitUntilExit(timeout: seconds * testTimeScale) ? process.terminationStatus : nil
  }
}

/// Reads a pipe to its end on a thread of its own. Not on Dispatch's
/// shared pool: each running program blocks two readers for its whole
/// life, and with enough of them the pool had no thread left for the next
/// reader or for other tests' work (a `tail` whose output was not read for
/// seconds; under ThreadSanitizer, a fake broker that never answered).
public final class Collector: @unchecked Sendable {
  private let lock = NSLock()
  private var data = Data()
  private let finished = DispatchSemaphore(value: 0)

  public init(_ handle: FileHandle) {
    Thread.detachNewThread {
      while true {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        self.lock.lock()
        self.data.append(chunk)
        self.lock.unlock()
      }
      self.finished.signal()
    }
  }

  /// What arrived so far.
  public var current: String {
    lock.lock()
    defer { lock.unlock() }
    return String(decoding: data, as: UTF8.self)
  }

  /// Everything, once the writer closed (bounded).
  public func text() -> String {
    _ = finished.wait(timeout: .now() + 10 * testTimeScale)
    return current
  }
}

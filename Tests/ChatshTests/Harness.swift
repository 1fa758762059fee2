import Foundation
import Posix
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Where SwiftPM put the binaries: the directory holding this test bundle's
/// executable (`.build/debug/` or the scratch path's `debug/`).
enum Binaries {
  static let directory: URL = {
    let exe =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<6 {
      if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("chatsh").path) {
        return url
      }
      url = url.deletingLastPathComponent()
    }
    return url
  }()

  static var chatsh: String { directory.appendingPathComponent("chatsh").path }
  static var chatbroker: String { directory.appendingPathComponent("chatbroker").path }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass, times
/// `CHATBROKER_TEST_TIME_SCALE` (1 unless set; tools/ci-hardening sets it
/// for the sanitized builds, which run several times slower).
@discardableResult
func eventually(within seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
  let scale = ProcessInfo.processInfo.environment["CHATBROKER_TEST_TIME_SCALE"].flatMap(Double.init)
  let deadline = Date().addingTimeInterval(seconds * max(1, scale ?? 1))
  while Date() < deadline {
    if try condition() { return true }
    usleep(20_000)
  }
  return try condition()
}

/// The result of running a program to its end.
struct Run {
  var status: Int32
  var out: String
  var err: String
}

/// Runs `path` with `arguments`, feeding `input` on standard input; killed
/// after `timeout` seconds.
func run(
  _ path: String, _ arguments: [String], input: String = "", environment: [String: String] = [:],
  timeout: Double = 30
) throws -> Run {
  var env = ProcessInfo.processInfo.environment
  env["NO_COLOR"] = "1"
  for (key, value) in environment { env[key] = value }
  let stdin = Pipe()
  let stdout = Pipe()
  let stderr = Pipe()
  let process = try ChildProcess(
    [path] + arguments, environment: env,
    standardInput: .descriptor(stdin.fileHandleForReading.fileDescriptor),
    standardOutput: .descriptor(stdout.fileHandleForWriting.fileDescriptor),
    standardError: .descriptor(stderr.fileHandleForWriting.fileDescriptor))
  // The child has its own copies: closed here, its end of output is theirs.
  try stdin.fileHandleForReading.close()
  try stdout.fileHandleForWriting.close()
  try stderr.fileHandleForWriting.close()
  let outData = Collector(stdout.fileHandleForReading)
  let errData = Collector(stderr.fileHandleForReading)
  DispatchQueue.global().async {
    try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
    try? stdin.fileHandleForWriting.close()
  }
  if !process.waitUntilExit(timeout: timeout) {
    stop(process)
    Issue.record("\(path) \(arguments) did not finish within \(timeout) s")
  }
  return Run(status: process.terminationStatus, out: outData.text(), err: errData.text())
}

/// Reads a pipe to its end on a background queue.
final class Collector: @unchecked Sendable {
  private let lock = NSLock()
  private var data = Data()
  private let finished = DispatchSemaphore(value: 0)

  init(_ handle: FileHandle) {
    DispatchQueue.global().async {
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
  var current: String {
    lock.lock()
    defer { lock.unlock() }
    return String(decoding: data, as: UTF8.self)
  }

  /// Everything, once the writer closed (bounded).
  func text() -> String {
    _ = finished.wait(timeout: .now() + 10)
    return current
  }
}

/// A real chatbroker on a socket in a fresh temporary directory.
final class BrokerFixture {
  let directory: String
  let socket: String
  private(set) var process: ChildProcess

  init() throws {
    var template = Array("/tmp/chatsh-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
    directory = String(cString: made)
    socket = directory + "/sock"
    try FileManager.default.createDirectory(
      atPath: directory + "/state", withIntermediateDirectories: true)
    process = try Self.start(socket: socket, directory: directory)
  }

  private static func start(socket: String, directory: String) throws -> ChildProcess {
    let process = try ChildProcess(
      [Binaries.chatbroker, "--socket", socket, "--state-dir", directory + "/state", "--no-sync"],
      standardOutput: .null, standardError: .null)
    let up = eventually { canConnect(socket) }
    if !up { Issue.record("chatbroker did not come up on \(socket)") }
    return process
  }

  /// Stops the broker (SIGTERM: it says BYE and closes every connection),
  /// keeps it down for `down` seconds, and starts it again on the same
  /// socket and state directory, as a restart or an upgrade does.
  /// `crash`: SIGKILL instead, so requests read and journaled may never
  /// have been answered.
  func restart(down: Double = 0, crash: Bool = false) throws {
    if crash {
      process.signal(SIGKILL)
      process.waitUntilExit()
      unlink(socket)
    }
    stop(process)
    if down > 0 { usleep(UInt32(down * 1_000_000)) }
    process = try Self.start(socket: socket, directory: directory)
  }

  deinit {
    stop(process)
    try? FileManager.default.removeItem(atPath: directory)
  }

  /// Runs chatsh against this broker.
  func chatsh(_ arguments: String..., input: String = "", environment: [String: String] = [:])
    throws -> Run
  {
    try run(
      Binaries.chatsh, ["--socket", socket] + arguments, input: input, environment: environment)
  }
}

/// Ends a child: SIGTERM, and SIGKILL if it is still there after 5 s.
func stop(_ process: ChildProcess) {
  process.signal(SIGTERM)
  if !process.waitUntilExit(timeout: 5) { process.signal(SIGKILL) }
  process.waitUntilExit()
}

func canConnect(_ path: String) -> Bool {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    let bytes = Array(path.utf8)
    raw.copyBytes(from: bytes)
    raw[bytes.count] = 0
  }
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
    }
  }
}

/// A program left running: its standard input written at the test's pace,
/// its output read as it comes. Stopped (and killed if need be) on deinit.
final class Running {
  let process: ChildProcess
  private let input = Pipe()
  let out: Collector
  let err: Collector

  init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    for (key, value) in environment { env[key] = value }
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

  deinit {
    stop(process)
  }

  func write(_ text: String) {
    try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
  }

  func closeInput() {
    try? input.fileHandleForWriting.close()
  }

  /// The exit status, or nil if it did not end within `seconds`.
  func waitForExit(within seconds: Double) -> Int32? {
    eventually(within: seconds) { !process.isRunning } ? process.terminationStatus : nil
  }
}

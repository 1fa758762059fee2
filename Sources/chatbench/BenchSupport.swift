import Broker
import Foundation
import Glibc
import Posix

/// A process under measurement (the broker, or redis for comparison),
/// started on a socket in a fresh temporary directory.
final class ServerUnderTest {
  let directory: String
  /// Its Unix socket; empty for a server that listens only on TCP.
  let socketPath: String
  /// The 127.0.0.1 port it takes IRC clients on, if it speaks IRC
  /// (IRCServers.swift).
  let ircPort: UInt16?
  let process: ChildProcess

  /// The chatbroker binary measured: the release build beside this
  /// benchmark, or the one `--broker PATH` names (to measure two builds
  /// against each other in the same minutes).
  nonisolated(unsafe) static var brokerExecutable = siblingExecutable("chatbroker")

  /// Starts `chatbroker` (``brokerExecutable``); `startSeconds` bounds its
  /// replay of the journal it is given.
  static func chatbroker(
    _ arguments: [String], directory: String? = nil, startSeconds: Double = 30,
    ircPort: UInt16? = nil
  ) throws -> ServerUnderTest {
    let directory = directory ?? makeTemporaryDirectory()
    let socket = directory + "/sock"
    let listen = ircPort.map { ["--irc-listen", "127.0.0.1:\($0)"] } ?? []
    return try ServerUnderTest(
      executable: brokerExecutable, directory: directory, socketPath: socket, ircPort: ircPort,
      startSeconds: startSeconds,
      // Every connection of a benchmark is the same user: lift the session limit.
      arguments: [
        "--socket", socket, "--state-dir", directory + "/state", "--sessions-per-user", "1000000",
      ] + listen + arguments)
  }

  /// Starts `redis-server` on a Unix socket in a fresh directory on the
  /// same file system as chatbroker's journal; with `durable`, every write
  /// is in its append-only file and fsynced before the reply
  /// (`appendonly yes`, `appendfsync always`), otherwise persistence is off.
  static func redis(durable: Bool = false) throws -> ServerUnderTest {
    let directory = makeTemporaryDirectory()
    let socket = directory + "/redis.sock"
    let persistence =
      durable
      ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
    return try ServerUnderTest(
      executable: "/usr/bin/redis-server", directory: directory, socketPath: socket,
      arguments: [
        "--port", "0", "--unixsocket", socket, "--save", "",
        "--dir", directory, "--client-output-buffer-limit", "pubsub", "0", "0", "0",
        "--maxclients", "20000",
      ] + persistence)
  }

  /// Starts `limitserver` (Sources/limitserver, built beside this
  /// benchmark): the fan-out ceiling of this machine.
  static func limit() throws -> ServerUnderTest {
    let directory = makeTemporaryDirectory()
    let socket = directory + "/sock"
    let executable = siblingExecutable("limitserver")
    guard access(executable, X_OK) == 0 else {
      throw BenchError("no \(executable): build it with swift build -c release")
    }
    return try ServerUnderTest(
      executable: executable, directory: directory, socketPath: socket, arguments: [socket])
  }

  init(
    executable: String, directory: String, socketPath: String, ircPort: UInt16? = nil,
    startSeconds: Double = 30, arguments: [String]
  ) throws {
    self.directory = directory
    self.socketPath = socketPath
    self.ircPort = ircPort
    // The server's log stays in its directory when a run fails.
    let logPath = directory + "/server.log"
    let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard log >= 0 else { throw BenchError("cannot create \(logPath)") }
    defer { close(log) }
    process = try ChildProcess(
      [executable] + arguments, standardOutput: .null, standardError: .descriptor(log))
    let deadline = Date().addingTimeInterval(startSeconds)
    while !listening {
      guard Date() < deadline, process.isRunning else {
        throw BenchError(
          "\(executable) did not start listening on \(socketPath.isEmpty ? "127.0.0.1:\(ircPort ?? 0)" : socketPath)"
        )
      }
      usleep(2000)
    }
  }

  /// Whether each of its sockets takes a connection.
  private var listening: Bool {
    if !socketPath.isEmpty, (try? connectUnix(socketPath)).map({ close($0) }) == nil {
      return false
    }
    if let ircPort, (try? LoopbackSocket.connect(port: ircPort)).map({ close($0) }) == nil {
      return false
    }
    return true
  }

  /// A run that failed part-way leaves no server behind (its directory and
  /// log stay, to study).
  deinit {
    process.signal(SIGKILL)
    process.waitUntilExit()
  }

  /// Resident memory of the server process, in bytes.
  var residentBytes: Int {
    let status = procText("/proc/\(process.processIdentifier)/status")
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
      let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
      return kilobytes * 1024
    }
    return 0
  }

  func stop() {
    process.signal(SIGTERM)
    if !process.waitUntilExit(timeout: 30) { process.signal(SIGKILL) }
    process.waitUntilExit()
    // CHATBENCH_KEEP=1 keeps the directory (and the server's log) to study.
    if ProcessInfo.processInfo.environment["CHATBENCH_KEEP"] == nil {
      try? FileManager.default.removeItem(atPath: directory)
    }
  }
}

/// A fresh directory whose `state/journal.jsonl` holds a journal header
/// and the `records` lines (each without its LF): a broker started on it
/// replays them, far faster than they could be sent.
func journalDirectory(records count: Int, _ record: (Int) -> String) throws -> String {
  let directory = makeTemporaryDirectory()
  let state = directory + "/state"
  mkdir(state, 0o700)
  var journal: [UInt8] = []
  journal.reserveCapacity(count * 160)
  journal.append(contentsOf: #"{"type":"journal","version":1,"next_id":"1"}"#.utf8)
  journal.append(UInt8(ascii: "\n"))
  for index in 0..<count {
    journal.append(contentsOf: record(index).utf8)
    journal.append(UInt8(ascii: "\n"))
  }
  let path = state + "/journal.jsonl"
  guard FileManager.default.createFile(atPath: path, contents: Data(journal)) else {
    throw BenchError("cannot write \(path)")
  }
  return directory
}

struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

func makeTemporaryDirectory() -> String {
  var template = Array("/tmp/cbench-XXXXXX".utf8CString)
  return String(cString: mkdtemp(&template)!)
}

func siblingExecutable(_ name: String) -> String {
  let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
  return me.deletingLastPathComponent().appendingPathComponent(name).path
}

/// A blocking connection to a Unix socket.
func connectUnix(_ path: String) throws -> Int32 {
  try UnixSocket.connect(to: path)
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
  var offset = 0
  while offset < bytes.count {
    guard case .processed(let count) = sendSome(fd, bytes[offset...]) else {
      var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      _ = poll(&poller, 1, 100)
      continue
    }
    offset += count
  }
}

/// One send(2) of what fits now; a failure ends the benchmark, which cannot
/// go on without its connection.
func sendSome(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> IOResult<Int> {
  let sent: IOResult<Int>
  do {
    sent = try ioCall("send") {
      bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
  } catch {
    preconditionFailure("send failed: \(error.reason)")
  }
  if case .processed(let count) = sent { precondition(count > 0, "send failed: closed") }
  return sent
}

/// Reads from `fd` until `lines` LFs have been seen (blocking, bounded).
func readLines(_ fd: Int32, count lines: Int, timeout: Double = 60) throws -> [String] {
  var collected: [UInt8] = []
  var seen = 0
  let deadline = Date().addingTimeInterval(timeout)
  var buffer = [UInt8](repeating: 0, count: 65536)
  while seen < lines {
    guard Date() < deadline else { throw BenchError("timed out reading lines") }
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, 100) > 0 else { continue }
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { throw BenchError("connection closed") }
    for byte in buffer[0..<count] where byte == UInt8(ascii: "\n") { seen += 1 }
    collected.append(contentsOf: buffer[0..<count])
  }
  return String(decoding: collected, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Monotonic nanoseconds, for intervals.
func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Wall-clock milliseconds since the epoch, to compare with due instants.
func wallMilliseconds() -> Int64 {
  var time = timespec()
  clock_gettime(CLOCK_REALTIME, &time)
  return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
}

func wallMicroseconds() -> Int64 {
  var time = timespec()
  clock_gettime(CLOCK_REALTIME, &time)
  return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
}

/// The value below which `fraction` of the sorted samples lie.
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
  guard !sorted.isEmpty else { return .nan }
  let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
  return sorted[max(0, index)]
}

func format(_ value: Double, _ digits: Int = 1) -> String {
  String(format: "%.\(digits)f", value)
}

/// Runs `body` on its own thread; `join()` waits for it.
final class Worker: @unchecked Sendable {
  private let done = DispatchSemaphore(value: 0)
  private var thread: Thread?

  init(_ body: @escaping @Sendable () -> Void) {
    let done = self.done
    thread = Thread {
      body()
      done.signal()
    }
    thread?.stackSize = 1 << 20
    thread?.start()
  }

  func join() { done.wait() }
}

/// The machine's load averages, from /proc/loadavg, to print beside a
/// figure: the benchmarks share the machine with whatever else runs.
func loadAverage() -> String {
  let text = procText("/proc/loadavg")
  return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// A procfs file's text, read to its end (empty when it cannot be read).
func procText(_ path: String) -> String {
  String(decoding: (try? FileDescriptor.readAll(path: path)) ?? [], as: UTF8.self)
}

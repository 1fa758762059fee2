import CShims
import Glibc
import Synchronization

/// A program run by tests and tools, started with `posix_spawn` and reaped by
/// its own pid.
///
/// Foundation's `Process` on Linux learns that a child ended when a socket the
/// child inherited reaches end of file, and then blocks its one manager thread
/// in `waitpid`. A grandchild that inherits that socket (a daemon such as a
/// tmux server, spawned by another thread at the wrong moment) hides the exit
/// for as long as it lives, and a child that closes the socket early stalls
/// the detection of every other exit. Tests then wait for ever on a zombie.
/// Here nothing is inherited but descriptors 0 to 2 (see `chat_spawn`), and
/// `isRunning` asks the kernel about this pid alone (`waitpid(WNOHANG)`).
public final class ChildProcess: @unchecked Sendable {
  /// Where one of the child's standard streams goes.
  public enum Stream: Sendable {
    /// The same as this process's.
    case inherit
    /// `/dev/null`.
    case null
    /// A descriptor of this process; the caller keeps (and closes) it.
    case descriptor(Int32)
  }

  /// How a reaped child ended.
  public enum Termination: Equatable, Sendable {
    case exited(Int32)
    case signalled(Int32)
  }

  public let processIdentifier: pid_t
  public let arguments: [String]
  /// The wait status, once reaped; the lock also orders `kill` before reaping,
  /// so a signal never reaches a pid the kernel has given to someone else.
  private let reaped = Mutex<Int32?>(nil)

  /// Starts `arguments[0]` (a path; no PATH search) with the rest as its
  /// arguments, in `environment` (this process's when nil) and `directory`.
  public init(
    _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
    standardInput: Stream = .null, standardOutput: Stream = .inherit,
    standardError: Stream = .inherit
  ) throws(SystemError) {
    precondition(!arguments.isEmpty, "a program to run")
    self.arguments = arguments
    let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
    defer { if devNull >= 0 { close(devNull) } }
    func descriptor(_ stream: Stream) -> Int32 {
      switch stream {
      case .inherit: -1
      case .null: devNull
      case .descriptor(let fd): fd
      }
    }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?]? =
      environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp ?? [] { free(pointer) }
    }
    var pid: pid_t = 0
    let status = argv.withUnsafeBufferPointer { argvBuffer in
      func spawn(_ envpPointer: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        chat_spawn(
          &pid, arguments[0], argvBuffer.baseAddress, envpPointer, directory,
          descriptor(standardInput), descriptor(standardOutput), descriptor(standardError))
      }
      guard let envp else { return spawn(environ) }
      return envp.withUnsafeBufferPointer { spawn($0.baseAddress!) }
    }
    guard status == 0 else {
      throw SystemError("posix_spawn", errno: status, subject: arguments[0])
    }
    processIdentifier = pid
  }

  deinit {
    if isRunning {
      signal(SIGKILL)
      waitUntilExit()
    }
  }

  /// Whether the child has not ended yet; reaps it when it has.
  public var isRunning: Bool {
    reaped.withLock { status in
      if status != nil { return false }
      var raw: Int32 = 0
      let result = waitpid(processIdentifier, &raw, WNOHANG)
      if result == processIdentifier {
        status = raw
        return false
      }
      // ECHILD: somebody else reaped it; count it as ended.
      if result < 0 && errno == ECHILD {
        status = 0
        return false
      }
      return true
    }
  }

  /// Sends `number` to the child, unless it was already reaped.
  public func signal(_ number: Int32) {
    reaped.withLock { status in
      if status == nil { _ = kill(processIdentifier, number) }
    }
  }

  /// Waits until the child ends, or `timeout` seconds; whether it ended.
  @discardableResult
  public func waitUntilExit(timeout: Double) -> Bool {
    let deadline = Self.now() + timeout
    var pause: UInt32 = 1000
    while isRunning {
      if Self.now() >= deadline { return false }
      usleep(pause)
      pause = min(pause * 2, 20_000)
    }
    return true
  }

  /// Waits until the child ends: only after SIGKILL, which always ends it.
  public func waitUntilExit() {
    while !waitUntilExit(timeout: 60) {}
  }

  /// How the child ended; nil while it runs.
  public var termination: Termination? {
    guard !isRunning, let raw = reaped.withLock({ $0 }) else { return nil }
    let signal = raw & 0x7f
    return signal == 0 ? .exited((raw >> 8) & 0xff) : .signalled(signal)
  }

  /// The exit status, or the number of the signal that ended the child, as
  /// Foundation's `Process.terminationStatus`; -1 while it runs.
  public var terminationStatus: Int32 {
    switch termination {
    case .exited(let code): code
    case .signalled(let number): number
    case nil: -1
    }
  }

  private static func now() -> Double { MonotonicClock.seconds() }
}

extension ChildProcess {
  /// Runs `arguments` to its end, with nothing on its standard input and this
  /// process's output, for commands such as `tmux send-keys`. Bounded: killed
  /// after `timeout` seconds. Returns the exit status, or -1 when it could not
  /// start, was killed, or ended by a signal.
  @discardableResult
  public static func run(_ arguments: [String], timeout: Double = 30) -> Int32 {
    guard let process = try? ChildProcess(arguments) else { return -1 }
    guard process.waitUntilExit(timeout: timeout) else {
      process.signal(SIGKILL)
      process.waitUntilExit()
      return -1
    }
    guard case .exited(let code) = process.termination else { return -1 }
    return code
  }
}

import Foundation
import Glibc

/// What a finished program printed, and how it ended.
struct CommandResult {
  /// The exit status, or the signal number when a signal ended it.
  var status: Int32
  var output: String
  var errors: String
}

/// Runs a program to its end, with nothing on its standard input; kills it
/// and fails when it runs longer than `timeout` seconds.
func runCommand(_ arguments: [String], timeout: Double = 10) throws -> CommandResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: arguments[0])
  process.arguments = Array(arguments.dropFirst())
  let stdout = try TemporaryFile()
  let stderr = try TemporaryFile()
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = stdout.handle
  process.standardError = stderr.handle
  try process.run()
  do {
    try waitUntil(timeout: timeout, "\(arguments.joined(separator: " ")) to exit") {
      !process.isRunning
    }
  } catch {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    throw error
  }
  return CommandResult(
    status: process.terminationStatus, output: stdout.contents, errors: stderr.contents)
}

/// Runs a shell command line (`/bin/sh -c`), for pipelines such as
/// `printf ... | nc -N -U sock`.
func runShell(_ command: String, timeout: Double = 10) throws -> CommandResult {
  try runCommand(["/bin/sh", "-c", command], timeout: timeout)
}

/// An unlinked temporary file a child process can write to. Close-on-exec,
/// so brokers started meanwhile by tests running in parallel never inherit it.
private final class TemporaryFile {
  let handle: FileHandle

  init() throws {
    var template = Array("/tmp/cb-out-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw TestFailure("mkstemp failed") }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
  }

  var contents: String {
    lseek(handle.fileDescriptor, 0, SEEK_SET)
    return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
  }
}

/// Runs a program to its end with posix_spawn and an empty signal mask, for
/// programs that leave a daemon behind (tmux): test threads block signals,
/// and a tmux server inheriting that mask would never see SIGCHLD nor end
/// on kill-server (ChatshTests' Tmux does the same). Returns the wait status.
@discardableResult
func spawnWithSignals(_ arguments: [String]) -> Int32 {
  var argv = arguments.map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var noSignals = sigset_t()
  sigemptyset(&noSignals)
  posix_spawnattr_setsigmask(&attributes, &noSignals)
  posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
  var pid: pid_t = 0
  var status: Int32 = -1
  guard posix_spawn(&pid, arguments[0], nil, &attributes, &argv, environ) == 0 else { return -1 }
  waitpid(pid, &status, 0)
  return status
}

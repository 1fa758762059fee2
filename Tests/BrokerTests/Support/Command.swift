import Foundation
import Glibc
import Posix

/// What a finished program printed, and how it ended.
struct CommandResult {
  /// The exit status, or the signal number when a signal ended it.
  var status: Int32
  var output: String
  var errors: String
}

/// Runs a program to its end, with nothing on its standard input; kills it
/// and fails when it runs longer than `timeout` seconds. With
/// `errorsInOutput`, standard error goes where standard output goes, in the
/// order written.
func runCommand(_ arguments: [String], timeout: Double = 10, errorsInOutput: Bool = false)
  throws -> CommandResult
{
  let stdout = try TemporaryFile()
  let stderr = try TemporaryFile()
  let process = try ChildProcess(
    arguments, standardOutput: .descriptor(stdout.handle.fileDescriptor),
    standardError: .descriptor((errorsInOutput ? stdout : stderr).handle.fileDescriptor))
  guard process.waitUntilExit(timeout: timeout) else {
    process.signal(SIGKILL)
    process.waitUntilExit()
    throw TestFailure("\(arguments.joined(separator: " ")) did not exit within \(timeout) s")
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
final class TemporaryFile {
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

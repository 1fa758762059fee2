import Foundation
import Glibc
import Posix

/// What a finished program printed, and how it ended.
public struct CommandResult: Sendable {
  /// The exit status, or the signal number when a signal ended it.
  public var status: Int32
  public var output: String
  public var errors: String
}

/// Runs a program to its end, with `input` on its standard input, in this
/// process's environment plus `environment`; kills it and fails when it
/// runs longer than `timeout` seconds (times ``testTimeScale``). With
/// `errorsInOutput`, standard error goes where standard output goes, in the
/// order written.
public func runCommand(
  _ arguments: [String], input: String = "", environment: [String: String] = [:],
  timeout: Double = 10, errorsInOutput: Bool = false
) throws -> CommandResult {
  let stdin = try TemporaryFile()
  let stdout = try TemporaryFile()
  let stderr = try TemporaryFile()
  if !input.isEmpty {
    stdin.handle.write(Data(input.utf8))
    lseek(stdin.handle.fileDescriptor, 0, SEEK_SET)
  }
  let process = try ChildProcess(
    arguments,
    environment: environment.isEmpty
      ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
    standardInput: .descriptor(stdin.handle.fileDescriptor),
    standardOutput: .descriptor(stdout.handle.fileDescriptor),
    standardError: .descriptor((errorsInOutput ? stdout : stderr).handle.fileDescriptor))
  guard process.waitUntilExit(timeout: timeout * testTimeScale) else {
    process.signal(SIGKILL)
    process.waitUntilExit()
    throw TestFailure(
      "\(arguments.joined(separator: " ")) did not exit within \(timeout * testTimeScale) s")
  }
  return CommandResult(
    status: process.terminationStatus, output: stdout.contents, errors: stderr.contents)
}

/// Runs a shell command line (`/bin/sh -c`), for pipelines such as
/// `printf ... | nc -N -U sock`.
public func runShell(_ command: String, timeout: Double = 10) throws -> CommandResult {
  try runCommand(["/bin/sh", "-c", command], timeout: timeout)
}

/// Runs the built chatsh to its end with `NO_COLOR=1` (output the tests can
/// compare), `input` on its standard input.
public func runChatsh(
  _ arguments: [String], input: String = "", environment: [String: String] = [:],
  timeout: Double = 30
) throws -> CommandResult {
  try runCommand(
    [BuiltProducts.path("chatsh")] + arguments, input: input,
    environment: ["NO_COLOR": "1"].merging(environment) { $1 }, timeout: timeout)
}

/// An unlinked temporary file a child process can read or write. Close-on-exec,
/// so brokers started meanwhile by tests running in parallel never inherit it.
public final class TemporaryFile {
  public let handle: FileHandle

  public init() throws {
    var template = Array("/tmp/cb-out-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw TestFailure("mkstemp failed") }
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
  }

  /// Everything written to it, from the start.
  public var contents: String {
    lseek(handle.fileDescriptor, 0, SEEK_SET)
    return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
  }
}

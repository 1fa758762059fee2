import Broker
import Foundation
import Glibc
import Posix

/// Programs run as another Unix user (root only), through `setpriv` with
/// that user's uid, gid and groups, and exactly the environment given (plus
/// a PATH): what that user would run from their own shell.
public enum AsUser {
  public static func command(
    _ user: String, _ arguments: [String], environment: [String: String] = [:]
  ) -> [String] {
    let variables = (["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
      .map { "\($0)=\($1)" }.sorted()
    return [
      "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "/usr/bin/env",
      "-i",
    ] + variables + arguments
  }

  /// Runs a program as `user` to its end (killed after `timeout` seconds).
  public static func run(
    _ user: String, _ arguments: [String], environment: [String: String] = [:],
    timeout: Double = 10
  ) throws -> CommandResult {
    try runCommand(command(user, arguments, environment: environment), timeout: timeout)
  }

  public static func uid(_ user: String) throws -> uid_t {
    guard let ids = userIDs(user) else { throw TestFailure("no user \(user)") }
    return ids.uid
  }

  /// Gives `path` to `user` (and their group), with `mode`.
  public static func give(_ path: String, to user: String, mode: mode_t) throws {
    guard let ids = userIDs(user) else { throw TestFailure("no user \(user)") }
    guard chown(path, ids.uid, ids.gid) == 0, chmod(path, mode) == 0
    else { throw TestFailure("chown/chmod \(path): \(String(cString: strerror(errno)))") }
  }
}

/// A chatbroker run by a Unix user (root too) with `arguments` and
/// `environment`, waited for until it answers on `socket`; stopped
/// (SIGTERM, then SIGKILL) when released.
public final class UserBroker {
  public let socketPath: String
  private let process: ChildProcess

  public init(
    user: String, arguments: [String], socket: String, environment: [String: String] = [:]
  ) throws {
    socketPath = socket
    let command = AsUser.command(
      user, [BuiltProducts.path("chatbroker")] + arguments, environment: environment)
    let process = try ChildProcess(command, standardOutput: .null, standardError: .null)
    self.process = process
    try waitUntil(timeout: 10, "\(user)'s broker to listen on \(socket)") {
      if !process.isRunning { throw TestFailure("\(user)'s chatbroker exited") }
      return UnixSocket.isLive(socket)
    }
  }

  /// On `socket`, with its state directory in `stateDirectory`.
  public convenience init(user: String, socket: String, stateDirectory: String) throws {
    try self.init(
      user: user,
      arguments: ["--socket", socket, "--state-dir", stateDirectory, "--no-sync"], socket: socket)
  }

  deinit {
    process.signal(SIGTERM)
    if !process.waitUntilExit(timeout: 5) { process.signal(SIGKILL) }
    process.waitUntilExit()
  }
}

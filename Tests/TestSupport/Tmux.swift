import Foundation
import Glibc
import Posix

/// A terminal for a full-screen program (chatsh's chat screen, irssi): a
/// detached session on a private tmux server, typed into with send-keys and
/// read with capture-pane.
///
/// The server's socket lives in a temporary directory of its own (`-S`),
/// never under /tmp/tmux-UID, and ``close()`` (or release) kills the server
/// and removes the directory: a test run leaves no tmux behind, and tmux's
/// own complaints (such as "no server running" when the program in it has
/// already ended it) go to /dev/null rather than the test output.
public final class Tmux: @unchecked Sendable {
  private let directory: TemporaryDirectory
  /// The server's socket, for `tmux -S`.
  public let socket: String
  private var closed = false
  /// The server's process, killed by ``close()`` whatever `kill-server`
  /// did: on a loaded machine that command can outlast its bound and
  /// leave the server running its program after the test.
  private var serverPID: pid_t?

  /// Starts `command` (a program and its arguments, run with `exec` by
  /// tmux's shell) in a `width` × `height` terminal.
  public init(_ command: [String], width: Int = 100, height: Int = 30) throws {
    directory = try TemporaryDirectory("cb-tmux")
    socket = directory.path("tmux")
    let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
      .joined(separator: " ")
    let started = try tmux([
      "new-session", "-d", "-x", String(width), "-y", String(height), "exec " + line,
    ])
    guard started.status == 0 else {
      close()
      throw TestFailure("tmux new-session failed (\(started.status)): \(started.errors)")
    }
    let pid = try? tmux(["display-message", "-p", "#{pid}"])
    serverPID = pid.flatMap { pid_t($0.output.trimmingCharacters(in: .whitespacesAndNewlines)) }
  }

  deinit {
    close()
  }

  /// Ends the tmux server and the program in it; removes its socket.
  public func close() {
    guard !closed else { return }
    closed = true
    let killed = try? tmux(["kill-server"])
    if killed?.status != 0, let serverPID { kill(serverPID, SIGKILL) }
    unlink(socket)
  }

  /// Runs one tmux command against this server (bounded).
  @discardableResult
  public func tmux(_ arguments: [String]) throws -> CommandResult {
    try runCommand(["/usr/bin/tmux", "-S", socket, "-f", "/dev/null"] + arguments, timeout: 10)
  }

  /// Types `text` literally.
  public func type(_ text: String) throws {
    try tmux(["send-keys", "-t", "0", "-l", text])
  }

  /// Presses named keys (Enter, PageUp, C-a, ...).
  public func press(_ keys: String...) throws {
    try tmux(["send-keys", "-t", "0"] + keys)
  }

  /// Types a line and presses Enter.
  public func enter(_ text: String) throws {
    try type(text)
    try press("Enter")
  }

  /// The screen as text, or with escape sequences for attributes.
  public func screen(escapes: Bool = false) -> String {
    (try? tmux(["capture-pane", "-p", "-t", "0"] + (escapes ? ["-e"] : [])).output) ?? ""
  }

  /// The screen's last line.
  public var lastLine: String {
    screen().split(separator: "\n", omittingEmptySubsequences: false).dropLast().last.map(
      String.init) ?? ""
  }

  /// Waits (bounded, see ``waitUntil(timeout:interval:_:fileID:line:_:)``)
  /// until the screen satisfies `condition`; the failure shows the screen.
  public func waitFor(
    within seconds: Double = 10, fileID: String = #fileID, line: Int = #line,
    _ condition: (String) -> Bool
  ) throws {
    var last = ""
    do {
      try waitUntil(timeout: seconds, interval: 0.02, "the screen", fileID: fileID, line: line) {
        last = screen()
        return condition(last)
      }
    } catch let failure as TestFailure {
      throw TestFailure("\(failure.description); it shows:\n\(last)")
    }
  }

  /// Waits (bounded) until the program in the terminal has ended, and with
  /// it the session (`has-session` fails).
  public func waitUntilEnded(
    within seconds: Double = 10, fileID: String = #fileID, line: Int = #line
  )
    throws
  {
    try waitUntil(
      timeout: seconds, interval: 0.02, "the program in tmux to end", fileID: fileID, line: line
    ) { (try? tmux(["has-session"]))?.status != 0 }
    close()
  }

  /// Waits (bounded) until the screen shows `text`.
  public func waitFor(
    _ text: String, within seconds: Double = 10, fileID: String = #fileID, line: Int = #line
  ) throws {
    try waitFor(within: seconds, fileID: fileID, line: line) { $0.contains(text) }
  }
}

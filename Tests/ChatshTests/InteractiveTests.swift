import Foundation
import Posix
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A terminal for the chat screen: a detached tmux session on a private
/// tmux server, driven with send-keys and read with capture-pane.
final class Tmux {
  let server = "chatsh-test-\(getpid())-\(UUID().uuidString.prefix(8))"

  init(_ command: [String], width: Int = 100, height: Int = 30) throws {
    let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
      .joined(separator: " ")
    let status = ChildProcess.run([
      "/usr/bin/tmux", "-L", server, "-f", "/dev/null", "new-session", "-d", "-x", String(width),
      "-y", String(height), "exec " + line,
    ])
    #expect(status == 0)
  }

  deinit {
    close()
  }

  /// Ends the tmux server and the chatsh in it.
  func close() {
    ChildProcess.run(["/usr/bin/tmux", "-L", server, "-f", "/dev/null", "kill-server"])
  }

  @discardableResult
  func tmux(_ arguments: [String]) throws -> Run {
    try run("/usr/bin/tmux", ["-L", server, "-f", "/dev/null"] + arguments, timeout: 10)
  }

  /// Types `text` literally.
  func type(_ text: String) throws {
    try tmux(["send-keys", "-t", "0", "-l", text])
  }

  /// Presses named keys (Enter, PageUp, C-a, ...).
  func press(_ keys: String...) throws {
    try tmux(["send-keys", "-t", "0"] + keys)
  }

  /// The screen as text, or with escape sequences for attributes.
  func screen(escapes: Bool = false) -> String {
    (try? tmux(["capture-pane", "-p", "-t", "0"] + (escapes ? ["-e"] : [])).out) ?? ""
  }

  var lastLine: String {
    screen().split(separator: "\n", omittingEmptySubsequences: false).dropLast().last.map(
      String.init) ?? ""
  }

  /// Waits (bounded) until the screen satisfies `condition`.
  func waitFor(within seconds: Double = 10, _ condition: (String) -> Bool) -> Bool {
    eventually(within: seconds) { condition(screen()) }
  }
}

@Suite(.serialized) struct InteractiveTests {
  let broker: BrokerFixture

  init() throws {
    broker = try BrokerFixture()
  }

  private func chatScreen(_ targets: String...) throws -> Tmux {
    let state = broker.directory + "/xdg-state"
    return try Tmux(
      [
        "/usr/bin/env", "XDG_STATE_HOME=" + state, "TZ=UTC", Binaries.chatsh, "--socket",
        broker.socket,
      ]
        + targets)
  }

  @Test func daySeparatorTypingSurvivesAndResize() throws {
    _ = try broker.chatsh("say", "#ops", "hello from a script")
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("Today") && $0.contains("hello from a script") })
    #expect(terminal.screen().contains(" ─── Today ─") || terminal.screen().contains("─ Today ─"))
    try terminal.type("half typed")
    #expect(terminal.waitFor { $0.contains("> half typed") })
    _ = try broker.chatsh("say", "#ops", "incoming while typing")
    #expect(terminal.waitFor { $0.contains("incoming while typing") })
    #expect(terminal.lastLine.hasPrefix("> half typed"))
    try terminal.tmux(["resize-window", "-t", "0", "-x", "60", "-y", "20"])
    #expect(
      terminal.waitFor { $0.split(separator: "\n").count <= 20 && $0.contains("> half typed") })
    try terminal.press("C-u")
    try terminal.type("sent by hand")
    try terminal.press("Enter")
    #expect(
      eventually { (try? broker.chatsh("history", "#ops").out.contains("sent by hand")) ?? false })
    #expect(terminal.waitFor { $0.contains("you · just now") })
    try terminal.type("/quit")
    try terminal.press("Enter")
  }

  @Test("/at +3s is listed by /scheduled, then delivered on time (real time)")
  func scheduledMessageIsListedThenDeliveredRealTime() throws {
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("#ops") && $0.contains("[") })
    try terminal.type("/at +3s tea is ready")
    try terminal.press("Enter")
    #expect(terminal.waitFor { $0.contains("scheduled for") && $0.contains("1 pending") })
    try terminal.type("/scheduled")
    try terminal.press("Enter")
    #expect(terminal.waitFor { $0.contains("DUE") && $0.contains("CREATED") })
    // Delivered: the pending count goes, the message is in history.
    #expect(terminal.waitFor(within: 15) { !$0.contains("pending") })
    #expect(try broker.chatsh("history", "#ops").out.contains("tea is ready"))
  }

  @Test func mentionIsHighlighted() throws {
    guard getuid() == 0 else { return }  // needs a second user to mention us
    chmod(broker.directory, 0o755)
    let me = NSUserName()
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("#ops") })
    let other = try run(
      "/usr/bin/setpriv",
      [
        "--reuid=65534", "--regid=65534", "--clear-groups", Binaries.chatsh, "--socket",
        broker.socket,
        "say", "#ops", "@\(me) please look",
      ])
    #expect(other.status == 0, "\(other.err)")
    #expect(terminal.waitFor { $0.contains("please look") })
    // The mention carries its own attributes: an escape sequence right before it.
    let coloured = terminal.screen(escapes: true)
    #expect(coloured.contains("m@\(me)"))
    #expect(!coloured.contains("m please look") || coloured.contains("m@\(me)\u{1B}["))
  }
}

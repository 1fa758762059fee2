import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.serialized) struct InteractiveTests {
  let broker: BrokerProcess

  init() throws {
    broker = try BrokerProcess().start()
  }

  private func chatScreen(_ targets: String...) throws -> Tmux {
    let state = broker.directory + "/xdg-state"
    return try Tmux(
      [
        "/usr/bin/env", "XDG_STATE_HOME=" + state, "TZ=UTC", BuiltProducts.path("chatsh"),
        "--socket",
        broker.socketPath,
      ]
        + targets)
  }

  @Test(
    "the day separator shows, a half-typed line survives incoming lines and a resize, Enter sends it"
  )
  func daySeparatorTypingSurvivesAndResize() throws {
    _ = try broker.chatsh("say", "#ops", "hello from a script")
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("Today") && $0.contains("hello from a script") }
    #expect(terminal.screen().contains(" ─── Today ─") || terminal.screen().contains("─ Today ─"))
    try terminal.type("half typed")
    try terminal.waitFor { $0.contains("> half typed") }
    _ = try broker.chatsh("say", "#ops", "incoming while typing")
    try terminal.waitFor { $0.contains("incoming while typing") }
    #expect(terminal.lastLine.hasPrefix("> half typed"))
    try terminal.tmux(["resize-window", "-t", "0", "-x", "60", "-y", "20"])
    try terminal.waitFor { $0.split(separator: "\n").count <= 20 && $0.contains("> half typed") }
    try terminal.press("C-u")
    try terminal.type("sent by hand")
    try terminal.press("Enter")
    try waitUntil(timeout: 10, "the typed line in #ops's history") {
      (try? broker.chatsh("history", "#ops").output.contains("sent by hand")) ?? false
    }
    try terminal.waitFor { $0.contains("you · just now") }
    try terminal.type("/quit")
    try terminal.press("Enter")
  }

  @Test("/at +3s is listed by /scheduled, then delivered on time (real time)")
  func scheduledMessageIsListedThenDeliveredRealTime() throws {
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") && $0.contains("[") }
    try terminal.type("/at +3s tea is ready")
    try terminal.press("Enter")
    try terminal.waitFor { $0.contains("scheduled for") && $0.contains("1 pending") }
    try terminal.type("/scheduled")
    try terminal.press("Enter")
    try terminal.waitFor { $0.contains("DUE") && $0.contains("CREATED") }
    // Delivered: the pending count goes, the message is in history.
    try terminal.waitFor(within: 15) { !$0.contains("pending") }
    #expect(try broker.chatsh("history", "#ops").output.contains("tea is ready"))
  }

  @Test(
    "a mention of me from another user is drawn in its own colour",
    UnixUsers.rootOnly("for a second user to mention us"))
  func mentionIsHighlighted() throws {
    chmod(broker.directory, 0o755)
    let me = NSUserName()
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") }
    let other = try runCommand(
      ["/usr/bin/setpriv"] + [
        "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
        "--socket",
        broker.socketPath,
        "say", "#ops", "@\(me) please look",
      ])
    #expect(other.status == 0, "\(other.errors)")
    try terminal.waitFor { $0.contains("please look") }
    // The mention carries its own attributes: an escape sequence right before it.
    let coloured = terminal.screen(escapes: true)
    #expect(coloured.contains("m@\(me)"))
    #expect(!coloured.contains("m please look") || coloured.contains("m@\(me)\u{1B}["))
  }
}

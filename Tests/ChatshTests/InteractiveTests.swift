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
    try chatScreen(targets, environment: [])
  }

  /// `environment`: `NAME=value` words for env(1), `-u NAME` to unset one.
  private func chatScreen(_ arguments: [String], environment: [String]) throws -> Tmux {
    let state = broker.directory + "/xdg-state"
    return try Tmux(
      ["/usr/bin/env"] + environment + [
        "XDG_STATE_HOME=" + state, "TZ=UTC", BuiltProducts.path("chatsh"),
        "--socket",
        broker.socketPath,
      ]
        + arguments)
  }

  /// The colour parameters (30-37, 40-47, 90-97, 100-107, 38 and 48 for
  /// 256 colours and RGB) of every SGR sequence on a captured screen.
  private func colourParameters(_ screen: String) -> [Int] {
    var found: [Int] = []
    for part in screen.split(separator: "\u{1B}[", omittingEmptySubsequences: false).dropFirst() {
      guard let end = part.firstIndex(where: { !$0.isNumber && $0 != ";" }), part[end] == "m"
      else { continue }
      for number in part[..<end].split(separator: ";").compactMap({ Int($0) })
      where (30...38).contains(number) || (40...48).contains(number) || (90...107).contains(number)
      {
        found.append(number)
      }
    }
    return found
  }

  @Test(
    "chatsh alone shows the conversation with the newest message, and numbers every conversation on the top line"
  )
  func startShowsMostRecentWithWindowList() throws {
    // #alpha and #beta are mine; #beta has the newest message.
    for room in ["#alpha", "#beta", "#gamma"] {
      #expect(try broker.chatsh("say", room, "first in \(room)").status == 0)
    }
    let client = try broker.connect()
    for room in ["#alpha", "#beta", "#gamma"] {
      #expect(try client.request("JOIN \(room)").last?.hasPrefix("OK JOIN") == true)
    }
    #expect(try broker.chatsh("say", "#beta", "the newest line").status == 0)
    let terminal = try chatScreen([], environment: [])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("the newest line") }
    let top = terminal.screen().split(separator: "\n").first.map(String.init) ?? ""
    #expect(top.hasPrefix(" #beta"), "\(top)")
    #expect(top.contains("1:#alpha [2:#beta] 3:#gamma"), "\(top)")
    // Alt-3 is the third on the list.
    try terminal.press("M-3")
    try terminal.waitFor { $0.contains("first in #gamma") && $0.contains("[3:#gamma]") }
    try terminal.enter("/quit")
  }

  @Test("--color never and NO_COLOR keep the chat screen free of colour; without them it has some")
  func noColourOnTheChatScreen() throws {
    _ = try broker.chatsh("say", "#ops", "@\(NSUserName()) a mention, in #ops")
    for (arguments, environment, coloured) in [
      (["#ops"], ["-u", "NO_COLOR"], true),
      (["--color", "never", "#ops"], ["-u", "NO_COLOR"], false),
      (["#ops"], ["NO_COLOR=1"], false), (["--color", "always", "#ops"], ["NO_COLOR=1"], true),
    ] {
      let terminal = try chatScreen(arguments, environment: environment)
      defer { terminal.close() }
      try terminal.waitFor { $0.contains("a mention") && $0.contains("[") }
      let screen = terminal.screen(escapes: true)
      let colours = colourParameters(screen)
      #expect(colours.isEmpty != coloured, "\(arguments) \(environment): \(colours)")
      // Without colour the top line and the mention still stand out.
      #expect(screen.contains("\u{1B}["), "\(arguments) \(environment): no attributes at all")
      try terminal.enter("/quit")
    }
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

  @Test(
    "a message that mentions me, as @me or me: at its start, is highlighted whole; others are not",
    UnixUsers.rootOnly("for a second user to mention us"))
  func mentionLineIsHighlightedWhole() throws {
    chmod(broker.directory, 0o755)
    let me = NSUserName()
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") }
    for text in ["\(me): did the deploy finish?", "@\(me) can you look", "just chatting"] {
      let other = try runCommand(
        ["/usr/bin/setpriv"] + [
          "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
          "--socket", broker.socketPath, "say", "#ops", text,
        ])
      #expect(other.status == 0, "\(other.errors)")
    }
    try terminal.waitFor { $0.contains("just chatting") }
    let screen = terminal.screen(escapes: true)
    /// The escape sequence right before `text`, which is drawn unbroken.
    func attributes(before text: String) -> Substring? {
      guard let range = screen.range(of: text), screen[..<range.lowerBound].hasSuffix("m"),
        let start = screen[..<range.lowerBound].range(of: "\u{1B}[", options: .backwards)
      else { return nil }
      return screen[start.lowerBound..<range.lowerBound]
    }
    let addressed = attributes(before: "\(me): did the deploy finish?")
    #expect(addressed != nil, "\(screen)")
    #expect(attributes(before: "@\(me) can you look") == addressed, "\(screen)")
    #expect(attributes(before: "just chatting") != addressed, "\(screen)")
  }
}

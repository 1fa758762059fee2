import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh(1)'s chat screen in a real terminal (tmux): what nobody can break.
@Suite(.serialized) struct ScreenTests {
  let broker: BrokerFixture

  init() throws {
    broker = try BrokerFixture()
  }

  private func chatScreen(
    _ targets: [String], width: Int = 80, height: Int = 24, environment: [String] = ["LANG=C.UTF-8"]
  ) throws -> Tmux {
    let state = broker.directory + "/xdg-state"
    return try Tmux(
      ["/usr/bin/env"] + environment + [
        "XDG_STATE_HOME=" + state, "TZ=UTC", Binaries.chatsh, "--socket", broker.socket,
      ] + targets, width: width, height: height)
  }

  @Test("an emoji flood leaves every row intact and the typed input where it was")
  func emojiFloodKeepsEveryRow() throws {
    let terminal = try chatScreen(["#general"], width: 60)
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("#general") && $0.contains("[") })
    try terminal.type("my draft")
    let flood = String(repeating: "👍🏽", count: 30)
    #expect(try broker.chatsh("say", "#general", flood + " END").status == 0)
    #expect(try broker.chatsh("say", "#general", "after the flood").status == 0)
    #expect(terminal.waitFor { $0.contains("after the flood") })
    try terminal.press("C-l")
    usleep(200_000)
    let screen = terminal.screen()
    let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 24)
    #expect(lines.first?.hasPrefix(" #general") == true, "\(screen)")
    #expect(terminal.lastLine.hasPrefix("> my draft"), "\(screen)")
    #expect(screen.contains("END"))
    // The flood wraps into rows of whole emoji, none cut, none spilled.
    let floodRows = lines.filter { $0.contains("👍🏽") }
    #expect(floodRows.count >= 2)
    #expect(floodRows.map { $0.components(separatedBy: "👍🏽").count - 1 }.reduce(0, +) == 30)
  }

  @Test("a joined emoji shows whole in the sender's own view")
  func joinedEmojiShowsWhole() throws {
    let terminal = try chatScreen(["#general"])
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("#general") && $0.contains("[") })
    try terminal.type("👩‍💻 done")
    #expect(terminal.waitFor { $0.contains("> 👩‍💻 done") })
    try terminal.press("Enter")
    #expect(terminal.waitFor { $0.contains("you · just now") })
    let screen = terminal.screen()
    #expect(screen.contains("👩‍💻 done"), "\(screen)")
    #expect(try broker.chatsh("history", "#general").out.contains("\t👩‍💻 done"))
  }

  @Test("in the C locale, non-ASCII text shows, is sent, and chatsh says it uses C.UTF-8")
  func cLocaleKeepsText() throws {
    #expect(try broker.chatsh("say", "#intl", "héllo 日本 ñandú").status == 0)
    let terminal = try chatScreen(
      ["#intl"], environment: ["-u", "LANG", "-u", "LC_CTYPE", "LC_ALL=C"])
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("héllo 日本 ñandú") }, "\(terminal.screen())")
    #expect(terminal.screen().contains("uses C.UTF-8"))
    try terminal.type("grüße 👋")
    try terminal.press("Enter")
    #expect(
      eventually { (try? broker.chatsh("history", "#intl").out.contains("\tgrüße 👋")) ?? false })
  }

  @Test(
    "the screen reconnects after a broker restart, fetches what it missed, keeps the input (real time)"
  )
  func screenReconnectsRealTime() throws {
    #expect(try broker.chatsh("say", "#ops", "before").status == 0)
    let terminal = try chatScreen(["#ops"])
    defer { terminal.close() }
    #expect(terminal.waitFor { $0.contains("before") })
    try terminal.type("half typed")
    try broker.restart(down: 2.5)
    #expect(terminal.waitFor { $0.contains("reconnecting in") || $0.contains("reconnected") })
    #expect(try broker.chatsh("say", "#ops", "said while you were away").status == 0)
    #expect(terminal.waitFor(within: 15) { $0.contains("said while you were away") })
    #expect(terminal.lastLine.hasPrefix("> half typed"))
    try terminal.type(" and sent")
    try terminal.press("Enter")
    #expect(
      eventually {
        (try? broker.chatsh("history", "#ops").out.contains("half typed and sent")) ?? false
      })
    let screen = terminal.screen()
    #expect(screen.components(separatedBy: "said while you were away").count == 2, "\(screen)")
    #expect(screen.components(separatedBy: "before").count == 2, "\(screen)")
    // Still joined: a message to the room arrives live.
    #expect(try broker.chatsh("say", "#ops", "live again").status == 0)
    #expect(terminal.waitFor { $0.contains("live again") })
  }
}

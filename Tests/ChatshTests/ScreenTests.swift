import Foundation
import TestSupport
import Testing

@testable import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// chatsh(1)'s chat screen in a real terminal (tmux): what nobody can break.
@Suite(.serialized) struct ScreenTests {
  let broker: BrokerProcess

  init() throws {
    broker = try BrokerProcess().start()
  }

  private func chatScreen(
    _ targets: [String], width: Int = 80, height: Int = 24, environment: [String] = ["LANG=C.UTF-8"]
  ) throws -> Tmux {
    let state = broker.directory + "/xdg-state"
    return try Tmux(
      ["/usr/bin/env"] + environment + [
        "XDG_STATE_HOME=" + state, "TZ=UTC", BuiltProducts.path("chatsh"), "--socket",
        broker.socketPath,
      ] + targets, width: width, height: height)
  }

  @Test("an emoji flood leaves every row intact and the typed input where it was")
  func emojiFloodKeepsEveryRow() throws {
    let terminal = try chatScreen(["#general"], width: 60)
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#general") && $0.contains("[") }
    try terminal.type("my draft")
    let flood = String(repeating: "👍🏽", count: 30)
    #expect(try broker.chatsh("say", "#general", flood + " END").status == 0)
    #expect(try broker.chatsh("say", "#general", "after the flood").status == 0)
    try terminal.waitFor { $0.contains("after the flood") }
    try terminal.press("C-l")
    // Redrawn: 24 rows, the status line first.
    try terminal.waitFor { screen in
      let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      return lines.count == 24 && lines.first?.hasPrefix(" #general") == true
    }
    let screen = terminal.screen()
    let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
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
    try terminal.waitFor { $0.contains("#general") && $0.contains("[") }
    try terminal.type("👩‍💻 done")
    try terminal.waitFor { $0.contains("> 👩‍💻 done") }
    try terminal.press("Enter")
    try terminal.waitFor { $0.contains("you · just now") }
    let screen = terminal.screen()
    #expect(screen.contains("👩‍💻 done"), "\(screen)")
    #expect(try broker.chatsh("history", "#general").output.contains("\t👩‍💻 done"))
  }

  @Test("in the C locale, non-ASCII text shows, is sent, and chatsh says it uses C.UTF-8")
  func cLocaleKeepsText() throws {
    #expect(try broker.chatsh("say", "#intl", "héllo 日本 ñandú").status == 0)
    let terminal = try chatScreen(
      ["#intl"], environment: ["-u", "LANG", "-u", "LC_CTYPE", "LC_ALL=C"])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("héllo 日本 ñandú") }
    #expect(terminal.screen().contains("uses C.UTF-8"))
    try terminal.type("grüße 👋")
    try terminal.press("Enter")
    try waitUntil(timeout: 10, "the typed line in #intl's history") {
      (try? broker.chatsh("history", "#intl").output.contains("\tgrüße 👋")) ?? false
    }
  }

  @Test("a line sent while the broker is down is sent once it is back, once (real time)")
  func lineSentWhileDownRealTime() throws {
    let terminal = try chatScreen(["#ops"])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") && $0.contains("[") }
    try broker.stop()
    try terminal.waitFor { $0.contains("reconnecting in") }
    try terminal.type("sent while down")
    try terminal.press("Enter")
    try terminal.waitFor { $0.contains("is sent once the broker is back") }
    try broker.restart()
    try terminal.waitFor(within: 15) { $0.contains("reconnected") }
    try waitUntil(timeout: 10, "the line sent while down in #ops's history") {
      (try? broker.chatsh("history", "#ops").output.contains("sent while down")) ?? false
    }
    // A later line as a fence: once it is in the history, a second copy
    // of the first would be too.
    try terminal.type("fence")
    try terminal.press("Enter")
    try waitUntil(timeout: 10, "the fence in #ops's history") {
      (try? broker.chatsh("history", "#ops").output.contains("fence")) ?? false
    }
    let history = try broker.chatsh("history", "#ops").output
    #expect(history.components(separatedBy: "sent while down").count == 2, "\(history)")
  }

  @Test(
    "the screen reconnects after a broker restart, fetches what it missed, keeps the input (real time)"
  )
  func screenReconnectsRealTime() throws {
    #expect(try broker.chatsh("say", "#ops", "before").status == 0)
    let terminal = try chatScreen(["#ops"])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("before") }
    try terminal.type("half typed")
    try broker.restart(down: 2.5)
    try terminal.waitFor { $0.contains("reconnecting in") || $0.contains("reconnected") }
    #expect(try broker.chatsh("say", "#ops", "said while you were away").status == 0)
    try terminal.waitFor(within: 15) { $0.contains("said while you were away") }
    #expect(terminal.lastLine.hasPrefix("> half typed"))
    try terminal.type(" and sent")
    try terminal.press("Enter")
    try waitUntil(timeout: 10, "the half-typed line in #ops's history") {
      (try? broker.chatsh("history", "#ops").output.contains("half typed and sent")) ?? false
    }
    let screen = terminal.screen()
    #expect(screen.components(separatedBy: "said while you were away").count == 2, "\(screen)")
    #expect(screen.components(separatedBy: "before").count == 2, "\(screen)")
    // Still joined: a message to the room arrives live.
    #expect(try broker.chatsh("say", "#ops", "live again").status == 0)
    try terminal.waitFor { $0.contains("live again") }
  }

  @Test("/delete alone asks before it takes back my last line; /ids shows the ids /delete takes")
  func deleteAsksAndIDsShow() throws {
    let terminal = try chatScreen(["#undo"])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#undo") && $0.contains("[") }
    try terminal.enter("oops wrong room")
    let probe = try broker.connect()
    func history() throws -> [String] {
      try probe.request("HISTORY #undo").filter { $0.hasPrefix("HIST ") }
    }
    try waitUntil(timeout: 10, "the line in #undo") { try history().count == 1 }
    try terminal.enter("/delete")
    try terminal.waitFor("take back your last message here, “oops wrong room”?")
    try terminal.enter("n")
    try terminal.waitFor("nothing taken back")
    #expect(try history().first?.contains(" REDACTED ") == false)
    try terminal.enter("/delete")
    try terminal.enter("y")
    try waitUntil(timeout: 10, "the line taken back") {
      try history().first?.contains(" REDACTED ") == true
    }
    // With /ids each message shows the id that /delete ID takes.
    try terminal.enter("another line")
    try waitUntil(timeout: 10, "the second line in #undo") { try history().count == 2 }
    let id = try history().last?.split(separator: " ")[2] ?? ""
    #expect(!terminal.screen().contains("id \(id)"))
    try terminal.enter("/ids")
    try terminal.waitFor("id \(id)")
    try terminal.enter("/delete \(id)")
    try waitUntil(timeout: 10, "the second line taken back at once") {
      try history().last?.contains(" REDACTED ") == true
    }
  }

  @Test("a typed line longer than a request holds is sent as several messages, as say sends it")
  func overlongLineIsSplit() throws {
    let terminal = try chatScreen(["#long"])
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#long") && $0.contains("[") }
    let words = (1...1000).map { "w\($0)" }.joined(separator: " ")
    #expect(words.utf8.count > 4096)
    try terminal.type(words)
    try terminal.waitFor { $0.contains("w1000") }
    try terminal.press("Enter")
    var texts: [String] = []
    try waitUntil(timeout: 10, "the long line in #long's history") {
      texts = try broker.chatsh("history", "#long").output.split(separator: "\n").map {
        String($0.split(separator: "\t", omittingEmptySubsequences: false).last ?? "")
      }
      return texts.joined().hasSuffix("w1000")
    }
    #expect(texts.count == 2)
    #expect(texts.joined() == words)
    #expect(!terminal.screen().contains("discarded"), "\(terminal.screen())")
  }

  /// The rows of `screen` from the one holding `first` to the one holding
  /// `last`, both included.
  private func rows(of screen: String, from first: String, to last: String) -> [String] {
    let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(where: { $0.contains(first) }),
      let end = lines[start...].firstIndex(where: { $0.contains(last) })
    else { return [] }
    return Array(lines[start...end])
  }

  @Test("at 50 columns /help's descriptions wrap under their column and keep 24 columns")
  func helpWrapsUnderItsColumn() throws {
    let terminal = try chatScreen(["#help"], width: 50, height: 120)
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#help") && $0.contains("[") }
    try terminal.enter("/help")
    try terminal.waitFor("Start a line with //")
    let screen = terminal.screen()
    let help = rows(of: screen, from: "/join #room", to: "  /quit")
    #expect(help.count > 30, "\(screen)")
    // A notice's 2 columns, then 24 for the commands: descriptions at 26.
    let column = String(repeating: " ", count: 26)
    for row in help {
      #expect(
        row.hasPrefix("  /") || (row.hasPrefix(column) && !row.hasPrefix(column + " ")),
        "a command, or a description at its column: \(row)\n\(screen)")
    }
    #expect(help.contains { $0.hasPrefix("  /ids" + String(repeating: " ", count: 20) + "show") })
    #expect(help.contains { $0.hasPrefix("  /join #room [group=GROUP|invite]") })
  }

  @Test("at 50 columns /scheduled puts a long text under its own column")
  func scheduledWrapsUnderItsColumn() throws {
    let terminal = try chatScreen(["#plans"], width: 50, height: 40)
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#plans") && $0.contains("[") }
    let text = "the quarterly report is due on friday, send your numbers before noon please"
    try terminal.enter("/later 1h " + text)
    try terminal.waitFor("/cancel")
    try terminal.enter("/scheduled")
    try terminal.waitFor { $0.contains("CREATED") && $0.contains("please") }
    let screen = terminal.screen()
    let table = rows(of: screen, from: "CREATED", to: "please")
    let words = table.filter {
      $0.contains("quarterly") || $0.contains("numbers") || $0.contains("please")
    }
    #expect(words.count >= 2, "\(screen)")
    let column = String(repeating: " ", count: 26)
    for row in words {
      #expect(row.hasPrefix(column) && !row.hasPrefix(column + " "), "\(row)\n\(screen)")
    }
  }
}

/// chatsh(1): scrolling back and completing, in tmux.
@Suite(.serialized) struct ScrollAndCompletionTests {
  let broker: BrokerProcess

  init() throws {
    broker = try BrokerProcess().start()
  }

  /// chatsh on the suite's state directory, so that a second one (with
  /// no target) starts where the first left off.
  private func chatScreen(_ targets: String...) throws -> Tmux {
    try Tmux(
      [
        "/usr/bin/env", "LANG=C.UTF-8", "XDG_STATE_HOME=" + broker.directory + "/state-x",
        "TZ=UTC", BuiltProducts.path("chatsh"), "--socket", broker.socketPath,
      ] + targets, width: 80, height: 24)
  }

  private func transcript(_ terminal: Tmux) -> [String] {
    Array(
      terminal.screen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        .dropFirst().prefix(22))
  }

  @Test(
    "scrolled back, the view stays still, says N new, and PageUp past the oldest line loads more")
  func scrollStaysStillAndLoadsOlder() throws {
    let lines = (1...60).map { "line \($0) of sixty" }
    #expect(
      try broker.chatsh("say", "#ops", input: lines.joined(separator: "\n") + "\n").status == 0)
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("line 60 of sixty") }
    try terminal.press("PageUp")
    try terminal.waitFor { $0.contains("↓ PgDn") }
    let before = transcript(terminal)
    #expect(try broker.chatsh("say", "#ops", "new one").status == 0)
    #expect(try broker.chatsh("say", "#ops", "new two").status == 0)
    try terminal.waitFor { $0.contains("2 new ↓") }
    #expect(transcript(terminal) == before)
    // Up to the oldest loaded line (line 11), then past it: older ones load.
    for _ in 0..<4 { try terminal.press("PageUp") }
    try terminal.waitFor { $0.contains("line 11 of sixty") }
    for _ in 0..<3 {
      try terminal.press("PageUp")
      usleep(150_000)
    }
    try terminal.waitFor { $0.contains("line 1 of sixty") }
    for _ in 0..<12 { try terminal.press("PageDown") }
    try terminal.waitFor { $0.contains("new two") && !$0.contains("new ↓") }
  }

  @Test("two screens join different rooms; the next start opens both, from the broker")
  func twoScreensDoNotOverwriteEachOther() throws {
    let one = try chatScreen("#alpha")
    let two = try chatScreen("#beta")
    try one.waitFor { $0.contains("#alpha") && $0.contains("[") }
    try two.waitFor { $0.contains("#beta") && $0.contains("[") }
    for terminal in [two, one] {
      try terminal.type("/quit")
      try terminal.press("Enter")
      try terminal.waitUntilEnded()
    }
    let again = try chatScreen()
    defer { again.close() }
    try again.waitFor { $0.hasPrefix(" #alpha") }
    try again.type("/switch #beta")
    try again.press("Enter")
    try again.waitFor { $0.hasPrefix(" #beta") }
  }

  @Test(
    "window numbers stay with their rooms when chatsh starts again: Alt-N reaches the same room")
  func windowNumbersSurviveARestart() throws {
    let first = try chatScreen("#zeta")
    try first.waitFor { $0.contains("#zeta") && $0.contains("[") }
    try first.enter("/join #alpha")
    try first.waitFor { $0.contains("1:#zeta [2:#alpha]") }
    try first.enter("/quit")
    try first.waitUntilEnded()
    // The broker lists #alpha before #zeta; the numbers are chatsh's own.
    let again = try chatScreen()
    defer { again.close() }
    try again.waitFor { $0.contains("1:#zeta") && $0.contains("2:#alpha") }
    try again.press("M-1")
    try again.waitFor { $0.hasPrefix(" #zeta") && $0.contains("[1:#zeta] 2:#alpha") }
    let file = broker.directory + "/state-x/chatsh/windows"
    #expect(try String(contentsOfFile: file, encoding: .utf8) == "1 #zeta\n2 #alpha\n")
    var info = stat()
    #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
  }

  @Test("Tab shows the candidates on the status line, Tab again cycles, every room completes")
  func tabCompletesAndCycles() throws {
    #expect(try broker.chatsh("say", "#deploy", "x").status == 0)
    #expect(try broker.chatsh("say", "#dev", "y").status == 0)
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") && $0.contains("[") }
    try terminal.type("/join #de")
    try terminal.press("Tab")
    try terminal.waitFor { $0.hasPrefix(" Tab: #deploy  #dev") }
    #expect(terminal.lastLine.hasPrefix("> /join #de "))
    try terminal.press("Tab")
    try terminal.waitFor { _ in terminal.lastLine.hasPrefix("> /join #deploy ") }
    try terminal.press("Tab")
    try terminal.waitFor { _ in terminal.lastLine.hasPrefix("> /join #dev ") }
    // Candidates never go into the conversation.
    #expect(!transcript(terminal).contains { $0.contains("#deploy  #dev") })
    try terminal.press("C-u")
    try terminal.waitFor { $0.hasPrefix(" #ops") }
  }

  @Test(
    "Tab completes the name of another user who spoke in the conversation",
    UnixUsers.rootOnly("for a second user to complete"))
  func tabCompletesAnotherUser() throws {
    let terminal = try chatScreen("#ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("#ops") && $0.contains("[") }
    chmod(broker.directory, 0o755)
    let other = try runCommand(
      ["/usr/bin/setpriv"] + [
        "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
        "--socket",
        broker.socketPath, "say", "#ops", "hello",
      ])
    #expect(other.status == 0)
    try terminal.waitFor { $0.contains("hello") }
    try terminal.type("nob")
    try terminal.press("Tab")
    try terminal.waitFor { _ in terminal.lastLine.hasPrefix("> nobody: ") }
  }
}

/// chatsh(1), catch-up: what happened while you were away, as two Unix
/// users (root, and nobody through setpriv). Needs root.
@Suite(.serialized) struct CatchUpScreenTests {
  let broker: BrokerProcess

  init() throws {
    broker = try BrokerProcess().start()
    chmod(broker.directory, 0o755)
  }

  private func asNobody(_ arguments: String...) throws -> CommandResult {
    try runCommand(
      ["/usr/bin/setpriv"] + [
        "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.path("chatsh"),
        "--socket",
        broker.socketPath,
      ]
        + arguments)
  }

  private func chatScreen(state: String) throws -> Tmux {
    try Tmux(
      [
        "/usr/bin/env", "LANG=C.UTF-8", "XDG_STATE_HOME=" + broker.directory + "/" + state,
        "TZ=UTC", BuiltProducts.path("chatsh"), "--socket", broker.socketPath,
      ], width: 100, height: 24)
  }

  @Test(
    "back after a while: my rooms reopen, unread counts, the new line, the marker moves",
    UnixUsers.rootOnly("for a second user (nobody, through setpriv)"))
  func catchUpAsTwoUsers() throws {
    let me = NSUserName()
    // I join #retro and say something, then leave chatsh.
    let first = try Tmux(
      [
        "/usr/bin/env", "LANG=C.UTF-8", "XDG_STATE_HOME=" + broker.directory + "/one", "TZ=UTC",
        BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "#retro",
      ], width: 100, height: 24)
    try first.waitFor { $0.contains("#retro") && $0.contains("[") }
    try first.type("my own line")
    try first.press("Enter")
    try first.waitFor { $0.contains("you · just now") }
    try first.type("/quit")
    try first.press("Enter")
    first.close()
    // While I am away: a direct message, then a mention in #retro, which is
    // then the conversation with the newest message, the one shown.
    #expect(try asNobody("say", "@\(me)", "psst, lunch?").status == 0)
    #expect(try asNobody("say", "#retro", "\(me): you fixed the build").status == 0)
    // Back, from another state directory: the list comes from the broker.
    let terminal = try chatScreen(state: "two")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("you fixed the build") }
    let screen = terminal.screen()
    let lines = screen.split(separator: "\n").map(String.init)
    #expect(lines.first?.hasPrefix(" #retro") == true, "\(screen)")
    // The window list: numbers for Alt-N, the one shown in brackets.
    #expect(lines.first?.contains("[1:#retro] 2:@nobody 1!") == true, "\(screen)")
    let mine = lines.firstIndex { $0.contains("my own line") }
    let newLine = lines.firstIndex { $0.contains("─ new ─") }
    let mention = lines.firstIndex { $0.contains("you fixed the build") }
    #expect(mine != nil && newLine != nil && mention != nil)
    if let mine, let newLine, let mention { #expect(mine < newLine && newLine < mention) }
    // Seen: the broker has my marker at the newest message of #retro.
    try waitUntil(timeout: 10, "#retro to be read up to its last line") {
      let listed = conversations()
      return listed.contains { $0.hasPrefix("CONV #retro ") && $0.hasSuffix(" 0 0") }
    }
    // Alt-2 shows the direct conversation; its count goes.
    try terminal.press("M-2")
    try terminal.waitFor { $0.contains("psst, lunch?") && !$0.contains("@nobody 1!") }
  }

  @Test(
    "`── new ──` goes above the first line from someone else, not above my own line before it",
    UnixUsers.rootOnly("for a second user (nobody, through setpriv)"))
  func newLineNotAboveMyOwnLine() throws {
    // My line, from a session that never set a read marker; then nobody's.
    let session = try broker.connect()
    #expect(try session.request("JOIN #ops").last?.hasPrefix("OK JOIN #ops") == true)
    #expect(try session.request("SAY #ops :my own line").last?.hasPrefix("OK SAY") == true)
    #expect(try asNobody("say", "#ops", "while you were away").status == 0)
    let terminal = try chatScreen(state: "ops")
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("while you were away") }
    let screen = terminal.screen()
    let lines = screen.split(separator: "\n").map(String.init)
    let own = lines.firstIndex { $0.contains("my own line") }
    let newLine = lines.firstIndex { $0.contains("─ new ─") }
    let theirs = lines.firstIndex { $0.contains("while you were away") }
    #expect(own != nil && newLine != nil && theirs != nil, "\(screen)")
    if let own, let newLine, let theirs {
      #expect(own < newLine && newLine < theirs, "\(screen)")
    }
  }

  /// My `CONV` lines, from a connection of my own.
  private func conversations() -> [String] {
    guard let connection = try? BrokerConnection(path: broker.socketPath) else { return [] }
    connection.send(.conversations)
    var lines: [String] = []
    while let line = try? connection.nextLine(timeoutSeconds: 5) {
      if case .event(.conversation(let summary)) = line {
        lines.append(
          "CONV \(summary.target) \(summary.newest?.id.description ?? "-") "
            + "\(summary.read?.description ?? "-") \(summary.unread) \(summary.mentions)")
      }
      if case .event(.ok(.conversations, _)) = line { break }
    }
    return lines
  }
}

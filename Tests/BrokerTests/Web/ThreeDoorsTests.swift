import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// Three users on three doors talk with what people miss from modern
/// chat (chatbroker(7), `REPLY`, `REACT`, `AMEND`, `BLOCK`): root in
/// chatsh's script mode, cbtest1 on the chat page in Chromium, cbtest2 in a
/// raw IRC client with message-tags on irc.sock, or in irssi, which has
/// none and shows what it can: the lines of a block, a reply as a line, an
/// edit as a new line marked `(edited)`, no reaction. Each sees what the
/// others did as their client shows it, and all of it again after the
/// broker restarts.
@Suite(
  "Three doors: replies, reactions, edits and blocks", .serialized, UnixUsers.required,
  Browser.required)
struct ThreeDoorsTests {
  /// An IRC client of `user` on irc.sock, registered with message-tags,
  /// in `room`, and what its JOIN showed.
  static func ircClient(
    _ broker: BrokerProcess, _ user: String, in room: String,
    caps: String = "message-tags server-time"
  ) throws -> (LineClient, joined: [String]) {
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: user))
    try irc.send("CAP LS 302\r\nCAP REQ :\(caps)\r\nCAP END\r\n")
    try irc.send("NICK \(user)\r\nUSER \(user) 0 * :\(user)\r\n")
    _ = try irc.expect(":\(Host.name) 422 ")
    try irc.send("JOIN \(room)\r\nPING :joined\r\n")
    var joined: [String] = []
    while let line = try irc.readLine(), !line.hasSuffix(" :joined\r") { joined.append(line) }
    return (irc, joined)
  }

  /// The next IRC line holding all of `parts`, skipping others (bounded).
  static func ircLine(_ irc: LineClient, holding parts: [String]) throws -> String {
    while true {
      guard let line = try irc.readLine() else { throw TestFailure("the IRC connection ended") }
      if parts.allSatisfy({ line.contains($0) }) { return line }
    }
  }

  /// An IRC line's `msgid` tag.
  static func msgid(_ line: String) -> String? {
    guard line.hasPrefix("@") else { return nil }
    let tags = line.dropFirst().prefix { $0 != " " }.split(separator: ";")
    return tags.first { $0.hasPrefix("msgid=") }.map { String($0.dropFirst(6)) }
  }

  /// root's `chatsh history --json` of `room`, one object per message.
  static func history(_ broker: BrokerProcess, _ room: String) throws -> [[String: Any]] {
    let result = try broker.chatsh("history", "--json", room)
    #expect(result.status == 0, "\(result)")
    return try result.output.split(separator: "\n").map {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
    }
  }

  @Test(
    "chatsh, the page and an IRC client reply, react, edit and post a block to each other, and all of it stays across a restart"
  )
  func threeDoors() throws {
    let (broker, port) = try WebPageTests.door()
    let (irc, _) = try Self.ircClient(broker, "cbtest2", in: "#three")
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#three")

    // root posts the output of a build as one message of two lines.
    let posted = try broker.chatsh(
      "say", "--block", "#three", input: "build 42: ok\nall 17 tests passed\n")
    #expect(posted.status == 0, "\(posted)")
    try WebPageTests.waitForBubble(browser, "build 42: ok\nall 17 tests passed")
    let first = try Self.ircLine(irc, holding: [" PRIVMSG #three :build 42: ok"])
    _ = try Self.ircLine(irc, holding: [" PRIVMSG #three :all 17 tests passed"])
    let block = try #require(Self.msgid(first), "\(first)")

    // cbtest2 answers it from IRC; the page shows the quote.
    try irc.send("@+draft/reply=\(block) PRIVMSG #three :nice build\r\n")
    try WebPageTests.waitForBubble(browser, "nice build")
    let quotes = try WebPageReplyTests.quotes(browser)
    #expect(quotes.last?.hasPrefix("↱ root: build 42: ok") == true, "\(quotes)")

    // Reactions from all three doors: the page's on the newest of the
    // others' bubbles, the reply.
    try WebPageTests.press(browser, "React", in: "#messages .theirs .bubble")
    try WebPageTests.press(browser, "🎉", in: "dialog")
    let pageReaction = try Self.ircLine(irc, holding: ["+draft/react=🎉", " TAGMSG #three"])
    try irc.send("@+draft/react=👍;+draft/reply=\(block) TAGMSG #three\r\n")
    let history = try Self.history(broker, "#three")
    let reply = try #require(history.first { $0["text"] as? String == "nice build" })
    #expect(reply["reply_to"] as? String == block)
    let replyID = try #require(reply["id"] as? String)
    #expect(pageReaction.contains("+draft/reply=\(replyID)"), "\(pageReaction)")
    let reacted = try broker.chatsh("react", "#three", replyID, "👀")
    #expect(reacted.status == 0, "\(reacted)")
    _ = try Self.ircLine(irc, holding: ["+draft/react=👀", "+draft/reply=\(replyID)", ":root!"])

    // cbtest1 fixes a typo from the page; IRC gets the new text marked.
    try browser.type("#text", "deploy at 1800", keys: ["ENTER"])
    _ = try Self.ircLine(irc, holding: [" PRIVMSG #three :deploy at 1800"])
    try WebPageTests.waitForBubble(browser, "deploy at 1800")
    try WebPageTests.press(browser, "Edit", in: "#messages .mine .bubble")
    try browser.wait("return document.getElementById('text').value === 'deploy at 1800'")
    try browser.js("document.getElementById('text').value = ''")
    try browser.type("#text", "deploy at 18:00", keys: ["ENTER"])
    _ = try Self.ircLine(irc, holding: [" PRIVMSG #three :(edited) deploy at 18:00"])

    // The broker restarts; everything is there for every door.
    try broker.restart()
    let after = try Self.history(broker, "#three")
    let shown = after.map { $0["text"] as? String ?? "" }
    #expect(shown == ["build 42: ok\nall 17 tests passed", "nice build", "deploy at 18:00"])
    #expect(after.first?["reactions"] as? [String: [String]] == ["👍": ["cbtest2"]])
    #expect(
      after.dropFirst().first?["reactions"] as? [String: [String]]
        == ["🎉": ["cbtest1"], "👀": ["root"]])
    #expect(after.last?["edited"] as? Int == 1 || after.last?["edited"] as? Bool == true)

    try browser.js("location.reload()")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    try WebPageTests.openConversation(browser, "#three")
    try WebPageTests.waitForBubble(browser, "deploy at 18:00")
    try WebPageReactionTests.waitForChips(browser, ["👍 1", "🎉 1 (mine)", "👀 1"])
    #expect(try WebPageReplyTests.quotes(browser).count == 1)
    try browser.screenshot("three-doors")

    // A new IRC session asks for the history: the block as one batch of
    // two lines, the reply with its tag.
    let (again, _) = try Self.ircClient(
      broker, "cbtest2", in: "#three",
      caps: "message-tags server-time batch draft/chathistory draft/multiline")
    try again.send("CHATHISTORY LATEST #three * 10\r\nPING :history\r\n")
    var replayed: [String] = []
    while let line = try again.readLine(), !line.hasSuffix(" :history\r") { replayed.append(line) }
    #expect(
      replayed.contains { $0.contains(" BATCH +") && $0.hasSuffix(" draft/multiline #three\r") })
    #expect(replayed.contains { $0.hasSuffix(" PRIVMSG #three :all 17 tests passed\r") })
    #expect(
      replayed.contains { $0.contains("+draft/reply=\(block)") && $0.hasSuffix(":nice build\r") },
      "\(replayed)")
  }

  /// The id of the message of `room` whose text is `text`, from root's
  /// `chatsh history --json`.
  static func id(_ broker: BrokerProcess, _ room: String, of text: String) throws -> String {
    let found = try history(broker, room).first { $0["text"] as? String == text }
    return try #require(found?["id"] as? String, "no message \(text.debugDescription) in \(room)")
  }

  @Test(
    "chatsh, the page and irssi reply, react, edit and post a block to each other; irssi shows each as a plain IRC client can, and all of it stays across a restart"
  )
  func threeDoorsWithIrssi() throws {
    let (broker, port) = try WebPageTests.door()
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#three")
    // Quick reconnects, and no flood queue: each line typed leaves at once.
    let irssi = try broker.irssi(
      as: "cbtest2",
      settings: ["cmd_queue_speed 0", "cmds_max_at_once 1000", "server_reconnect_time 1"])
    try irssi.enter("/join #three")
    try irssi.waitFor("Total of 2 nicks")

    // root's block: one bubble on the page, its lines one by one in irssi.
    let posted = try broker.chatsh(
      "say", "--block", "#three", input: "build 42: ok\nall 17 tests passed\n")
    #expect(posted.status == 0, "\(posted)")
    try WebPageTests.waitForBubble(browser, "build 42: ok\nall 17 tests passed")
    try irssi.waitFor("root> all 17 tests passed")
    #expect(irssi.screen().contains("root> build 42: ok"))
    let block = try Self.id(broker, "#three", of: "build 42: ok\nall 17 tests passed")

    // cbtest1 answers it from the page: irssi shows the answer as a line.
    try WebPageTests.press(browser, "Reply", in: "#messages .theirs .bubble")
    try browser.type("#text", "nice build", keys: ["ENTER"])
    try irssi.waitFor("cbtest1> nice build")
    let nice = try Self.id(broker, "#three", of: "nice build")

    // irssi shows no message ids: its user replies and reacts to the ids a
    // script of theirs found, with client tags through /quote.
    try irssi.enter("/quote @+draft/reply=\(nice) PRIVMSG #three :thanks, shipping it")
    try WebPageTests.waitForBubble(browser, "thanks, shipping it")
    #expect(try WebPageReplyTests.quotes(browser).last == "↱ you: nice build")
    try irssi.enter("/quote @+draft/react=+1;+draft/reply=\(block) TAGMSG #three")
    try WebPageReactionTests.waitForChips(browser, ["+1 1"])

    // The page reacts to irssi's line: nothing of it reaches irssi, which
    // has no message-tags, and nothing garbled either.
    try WebPageTests.press(browser, "React", in: "#messages .theirs .bubble")
    try WebPageTests.press(browser, "🎉", in: "dialog")
    try WebPageReactionTests.waitForChips(browser, ["+1 1", "🎉 1 (mine)"])
    let thanks = try Self.id(broker, "#three", of: "thanks, shipping it")

    // root answers irssi's line from a script and fixes a typo in it.
    #expect(try broker.chatsh("say", "--reply", thanks, "#three", "merged").status == 0)
    try irssi.waitFor("root> merged")
    try WebPageTests.waitForBubble(browser, "merged")
    #expect(try WebPageReplyTests.quotes(browser).last == "↱ cbtest2: thanks, shipping it")
    let merged = try Self.id(broker, "#three", of: "merged")
    #expect(try broker.chatsh("amend", "#three", merged, "merged and deployed").status == 0)
    try irssi.waitFor("root> (edited) merged and deployed")
    try WebPageTests.waitForBubble(browser, "merged and deployed")
    let thread = try broker.chatsh("thread", "#three", thanks)
    #expect(
      thread.output.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
        == ["thanks, shipping it", "merged and deployed"], "\(thread)")

    // cbtest1 fixes its line from the page; irssi gets the new text marked.
    try WebPageTests.press(browser, "Edit", in: "#messages .mine .bubble")
    try browser.wait("return document.getElementById('text').value === 'nice build'")
    try browser.js("document.getElementById('text').value = ''")
    try browser.type("#text", "nice build, 17 of 17", keys: ["ENTER"])
    try irssi.waitFor("cbtest1> (edited) nice build, 17 of 17")
    let screen = irssi.screen()
    #expect(
      !screen.contains("TAGMSG") && !screen.contains("draft/") && !screen.contains("🎉"),
      "\(screen)")

    // The broker restarts; irssi comes back by itself, and gets again none
    // of what it saw (chatbroker(7), "IRC": its backlog starts where it
    // left off), but a reply to a line from before the restart.
    try irssi.enter("/clear")
    try broker.restart()
    try irssi.waitFor("Join to #three was synced", within: 30)
    #expect(try broker.chatsh("say", "--reply", block, "#three", "deployed to prod").status == 0)
    try irssi.waitFor("root> deployed to prod")
    #expect(!irssi.screen().contains("build 42"), "\(irssi.screen())")
    let after = try Self.history(broker, "#three")
    #expect(
      after.map { $0["text"] as? String ?? "" }
        == [
          "build 42: ok\nall 17 tests passed", "nice build, 17 of 17", "thanks, shipping it",
          "merged and deployed", "deployed to prod",
        ])
    #expect(after.map { $0["reply_to"] as? String } == [nil, block, nice, thanks, block])
    #expect(after.first?["reactions"] as? [String: [String]] == ["+1": ["cbtest2"]])
    #expect(after[2]["reactions"] as? [String: [String]] == ["🎉": ["cbtest1"]])
    try browser.js("location.reload()")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    try WebPageTests.openConversation(browser, "#three")
    try WebPageTests.waitForBubble(browser, "deployed to prod")
    try WebPageReactionTests.waitForChips(browser, ["+1 1", "🎉 1 (mine)"])
    #expect(try WebPageReplyTests.quotes(browser).count == 4)
    try browser.screenshot("three-doors-irssi")
  }
}

import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// Three users on three doors talk with what people miss from modern
/// chat (chatbroker(7), `REPLY`, `REACT`, `AMEND`, `BLOCK`): root in
/// chatsh's script mode, cbtest1 on the chat page in Chromium, cbtest2 in a
/// raw IRC client with message-tags on irc.sock. Each sees what the others
/// did as their client shows it, and all of it again after the broker
/// restarts.
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
}

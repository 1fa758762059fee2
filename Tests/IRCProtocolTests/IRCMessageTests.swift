import IRCProtocol
import Testing

@Suite("IRC messages: parsing, encoding, tags and 512-byte lines")
struct IRCMessageTests {
  @Test(
    "lines clients send are read into tags, source, command and parameters",
    arguments: [
      ("NICK alice", IRCMessage("NICK", ["alice"])),
      ("nick alice", IRCMessage("NICK", ["alice"])),
      ("USER alice 0 * :Alice Liddell", IRCMessage("USER", ["alice", "0", "*", "Alice Liddell"])),
      ("PRIVMSG #ops :hello there", IRCMessage("PRIVMSG", ["#ops", "hello there"])),
      ("PRIVMSG #ops ::-)", IRCMessage("PRIVMSG", ["#ops", ":-)"])),
      ("PRIVMSG #ops :", IRCMessage("PRIVMSG", ["#ops", ""])),
      ("JOIN   #a,#b   ", IRCMessage("JOIN", ["#a,#b"])),
      (":irc.example PING :tok", IRCMessage(source: "irc.example", "PING", ["tok"])),
      (
        "@label=1;+draft/x=a\\sb\\:c CAP REQ :server-time batch",
        IRCMessage(
          tags: [IRCTag("label", "1"), IRCTag("+draft/x", "a b;c")], "CAP",
          ["REQ", "server-time batch"])
      ),
      ("@flag PING x", IRCMessage(tags: [IRCTag("flag")], "PING", ["x"])),
    ])
  func parses(line: String, expected: IRCMessage) {
    #expect(IRCMessage(parsing: line) == expected)
  }

  @Test("a line with no command is not a message", arguments: ["", "   ", ":source", "@a=b"])
  func rejectsEmpty(line: String) {
    #expect(IRCMessage(parsing: line) == nil)
  }

  @Test(
    "messages are encoded with CR LF and a ':' before a last parameter that needs one",
    arguments: [
      (IRCMessage("PING", ["x"]), false, "PING x\r\n"),
      (IRCMessage("PRIVMSG", ["#a", "hi there"]), false, "PRIVMSG #a :hi there\r\n"),
      (IRCMessage("PRIVMSG", ["#a", "hi"]), true, "PRIVMSG #a :hi\r\n"),
      (IRCMessage("PRIVMSG", ["#a", ":)"]), false, "PRIVMSG #a ::)\r\n"),
      (IRCMessage("TOPIC", ["#a", ""]), false, "TOPIC #a :\r\n"),
      (
        IRCMessage(
          tags: [IRCTag("time", "2026-11-30T17:56:12.031Z"), IRCTag("msgid", "8f3k4")],
          source: "bob!bob@host", "PRIVMSG", ["#ops", "ok"]),
        true, "@time=2026-11-30T17:56:12.031Z;msgid=8f3k4 :bob!bob@host PRIVMSG #ops :ok\r\n"
      ),
    ])
  func encodes(message: IRCMessage, trailing: Bool, expected: String) {
    #expect(String(decoding: message.encoded(trailing: trailing), as: UTF8.self) == expected)
  }

  @Test(
    "tag values are escaped and unescaped as the message-tags specification says",
    arguments: [
      ("a;b", "a\\:b"), ("a b", "a\\sb"), ("a\\b", "a\\\\b"), ("a\rb\nc", "a\\rb\\nc"),
      ("plain", "plain"), ("ünï", "ünï"), ("; \\", "\\:\\s\\\\"),
    ])
  func escapesTags(raw: String, escaped: String) {
    #expect(IRCTag.escape(raw) == escaped)
    #expect(IRCTag.unescape(escaped) == raw)
  }

  @Test("an unknown escape drops the backslash, and a trailing backslash is dropped")
  func lenientUnescape() {
    #expect(IRCTag.unescape("a\\bc") == "abc")
    #expect(IRCTag.unescape("abc\\") == "abc")
  }

  @Test("encoding then parsing gives the message back, tags included")
  func roundTrip() {
    let message = IRCMessage(
      tags: [IRCTag("msgid", "x1"), IRCTag("+note", "semi; colon \\ back")],
      source: "alice!alice@host", "PRIVMSG", ["#ops", "a text: with colons"])
    let line = String(decoding: message.encoded(trailing: true).dropLast(2), as: UTF8.self)
    #expect(IRCMessage(parsing: line) == message)
  }

  @Test(
    "long texts are split at UTF-8 boundaries into pieces that fit, and nothing is lost",
    arguments: [
      String(repeating: "x", count: 1200),
      String(repeating: "é", count: 700),
      String(repeating: "日本語", count: 200),
      String(repeating: "👩‍💻 ", count: 150),
      String(repeating: "word ", count: 300),
    ])
  func splits(text: String) {
    let limit = IRCText.room(source: "alice!alice@host.example", command: "PRIVMSG", target: "#ops")
    let pieces = IRCText.split(text, maximumBytes: limit)
    #expect(pieces.count > 1)
    #expect(pieces.allSatisfy { $0.utf8.count <= limit && !$0.isEmpty })
    #expect(pieces.joined() == text)
    for piece in pieces {
      let line = IRCMessage(source: "alice!alice@host.example", "PRIVMSG", ["#ops", piece])
        .encoded(trailing: true)
      #expect(line.count <= IRCMessage.maximumBytes)
    }
  }

  @Test("names compare under CASEMAPPING=ascii: A to Z fold, nothing else does")
  func asciiCaseMapping() {
    #expect(IRCText.sameName("SCHED|BOT", "sched|bot"))
    #expect(IRCText.sameName("#Ops", "#ops"))
    #expect(IRCText.sameName("", ""))
    // Foundation's caseInsensitiveCompare takes each of these for the same.
    #expect(!IRCText.sameName("ſched|bot", "sched|bot"))
    #expect(!IRCText.sameName("#ÉTÉ", "#été"))
    #expect(!IRCText.sameName("sched\\bot", "sched|bot"), "rfc1459 would fold | and \\")
    #expect(!IRCText.sameName("sched|bo", "sched|bot"))
    #expect(!IRCText.sameName("@", "`"), "one below A, one below a")
    #expect(!IRCText.sameName("[", "{"), "one above Z, one above z")
  }

  @Test("a text that fits is one piece, and an empty text stays one empty piece")
  func shortTexts() {
    #expect(IRCText.split("hello", maximumBytes: 400) == ["hello"])
    #expect(IRCText.split("", maximumBytes: 400) == [""])
  }

  @Test("capability sets remember what was negotiated, and msgid comes with message-tags")
  func capabilities() {
    var set = CapabilitySet()
    #expect(!set.sendsTime && !set.sendsMsgid)
    set.insert(.serverTime)
    set.insert(.messageTags)
    #expect(set.sendsTime && set.sendsMsgid && set.contains(.serverTime))
    set.remove(.serverTime)
    #expect(!set.sendsTime && set.contains(.messageTags))
    #expect(Capability.allCases.map(\.rawValue).contains("draft/chathistory"))
  }
}

import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// IRCv3 draft/multiline on the IRC door (chatbroker(7), "IRC"): a batch
/// of PRIVMSG lines is one block, and a block reaches a client with the
/// capability as one batch, any other client as a PRIVMSG per line.
@Suite("IRC gateway: draft/multiline batches are blocks")
struct IRCMultilineTests {
  static let multiline = ["batch", "message-tags", "draft/multiline"]

  /// An IRC harness with carol on the line protocol and alice, with
  /// `caps`, both in #ops.
  private static func room(_ caps: [String] = multiline) -> (IRCHarness, ConnectionID, ConnectionID)
  {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: caps)
    irc.send(alice, "JOIN #ops")
    _ = irc.engine.output.take(carol)
    return (irc, alice, carol)
  }

  @Test("CAP LS 302 offers draft/multiline with the bounds of a block; older CAP LS the name")
  func offered() {
    let irc = IRCHarness()
    let client = irc.open("alice")
    let lines = irc.send(client, "CAP LS 302").joined(separator: " ")
    #expect(lines.contains(" draft/multiline=max-bytes=4096,max-lines=100"), "\(lines)")
    let old = irc.send(client, "CAP LS").joined(separator: " ")
    #expect(old.contains(" draft/multiline") && !old.contains("max-bytes"), "\(old)")
  }

  @Test("a batch is one BLOCK: blank lines kept, a concat line joined without a line feed")
  func incomingBatch() {
    let (irc, alice, carol) = Self.room()
    for line in [
      "BATCH +a1 draft/multiline #ops", "@batch=a1 PRIVMSG #ops :make: ok",
      "@batch=a1 PRIVMSG #ops :", "@batch=a1 PRIVMSG #ops :all passed ",
      "@batch=a1;draft/multiline-concat PRIVMSG #ops :in 3s",
    ] {
      #expect(irc.send(alice, line).isEmpty, "nothing is sent before the batch ends: \(line)")
      #expect(irc.engine.output.take(carol).isEmpty)
    }
    irc.send(alice, "BATCH -a1")
    let seen = irc.engine.output.take(carol)
    #expect(seen.count == 1)
    #expect(
      seen.first?.hasSuffix(#" alice BLOCK :make: ok\n\nall passed in 3s"#) == true, "\(seen)")
  }

  @Test("a batch of one line is a plain message; the opener's client tags go with it")
  func oneLineBatch() {
    let (irc, alice, carol) = Self.room()
    let bob = irc.connect("bob", caps: ["message-tags"])
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    irc.send(alice, "@+example/colour=red BATCH +x draft/multiline #ops")
    irc.send(alice, "@batch=x PRIVMSG #ops :just this")
    irc.send(alice, "BATCH -x")
    let seen = irc.engine.output.take(carol)
    #expect(seen.count == 1, "\(seen)")
    #expect(seen.first?.hasSuffix(" alice :just this") == true, "\(seen)")
    let relayed = irc.take(bob)
    #expect(relayed.count == 1)
    #expect(relayed.first?.hasPrefix("@+example/colour=red;msgid=") == true, "\(relayed)")
  }

  @Test(
    "a batch over the bounds or against the rules fails once, and nothing is sent",
    arguments: [
      (
        Array(repeating: "@batch=b PRIVMSG #ops :line", count: 101),
        "FAIL BATCH MULTILINE_MAX_LINES 100 :"
      ),
      (
        Array(repeating: "@batch=b PRIVMSG #ops :" + String(repeating: "x", count: 450), count: 10),
        "FAIL BATCH MULTILINE_MAX_BYTES 4096 :"
      ),
      (
        ["@batch=b PRIVMSG #ops :a", "@batch=b PRIVMSG #dev :b"],
        "FAIL BATCH MULTILINE_INVALID_TARGET #ops #dev :"
      ),
      (["@batch=b NOTICE #ops :a"], "FAIL BATCH MULTILINE_INVALID :"),
      (
        ["@batch=b PRIVMSG #ops :a", "@batch=b;draft/multiline-concat PRIVMSG #ops :"],
        "FAIL BATCH MULTILINE_INVALID :"
      ),
      (["@batch=b PRIVMSG #ops :  ", "@batch=b PRIVMSG #ops :"], "FAIL BATCH MULTILINE_INVALID :"),
    ])
  func refused(lines: [String], failure: String) {
    let (irc, alice, carol) = Self.room()
    var answers = irc.send(alice, "BATCH +b draft/multiline #ops")
    for line in lines { answers += irc.send(alice, line) }
    answers += irc.send(alice, "BATCH -b")
    #expect(answers.count == 1, "\(answers)")
    #expect(answers.first?.hasPrefix(":host.test \(failure)") == true, "\(answers)")
    #expect(irc.engine.output.take(carol).isEmpty)
    irc.send(alice, "PRIVMSG #ops :after")
    #expect(irc.engine.output.take(carol).first?.hasSuffix(" alice :after") == true)
  }

  @Test("batches do not nest: a second opener drops both, and its lines are dropped quietly")
  func nested() {
    let (irc, alice, carol) = Self.room()
    irc.send(alice, "BATCH +b draft/multiline #ops")
    irc.send(alice, "@batch=b PRIVMSG #ops :a")
    let failed = irc.send(alice, "BATCH +c draft/multiline #ops")
    #expect(failed.first?.hasPrefix(":host.test FAIL BATCH MULTILINE_INVALID :") == true)
    #expect(irc.send(alice, "@batch=c PRIVMSG #ops :b").isEmpty)
    #expect(irc.send(alice, "BATCH -c").isEmpty)
    let late = irc.send(alice, "BATCH -b")
    #expect(late.first?.hasPrefix(":host.test FAIL BATCH MULTILINE_INVALID :") == true)
    #expect(irc.engine.output.take(carol).isEmpty)
  }

  @Test("an unterminated batch sends nothing; other lines meanwhile are served as ever")
  func unterminated() {
    let (irc, alice, carol) = Self.room()
    irc.send(alice, "BATCH +u draft/multiline #ops")
    irc.send(alice, "@batch=u PRIVMSG #ops :never sent")
    #expect(irc.send(alice, "PING :t").first?.contains(" PONG host.test") == true)
    irc.send(alice, "PRIVMSG #ops :meanwhile")
    #expect(irc.engine.output.take(carol).map { $0.hasSuffix(" alice :meanwhile") } == [true])
    let stray = irc.send(alice, "@batch=zz PRIVMSG #ops :no such batch")
    #expect(stray.first?.hasPrefix(":host.test FAIL BATCH MULTILINE_INVALID :") == true)
  }

  @Test("a block reaches a draft/multiline client as one batch, msgid on the opener")
  func outgoingBatch() throws {
    let (irc, alice, carol) = Self.room()
    let id = okID(irc.engine.send(carol, #"BLOCK #ops :make: ok\n\nall passed"#))
    let source = ":carol!carol@host.test"
    #expect(
      irc.take(alice) == [
        "@msgid=\(id) \(source) BATCH +m\(id) draft/multiline #ops",
        "@batch=m\(id) \(source) PRIVMSG #ops :make: ok",
        "@batch=m\(id) \(source) PRIVMSG #ops :",
        "@batch=m\(id) \(source) PRIVMSG #ops :all passed",
        ":host.test BATCH -m\(id)",
      ])
  }

  @Test("a line of a block longer than an IRC line goes on with draft/multiline-concat")
  func longLine() throws {
    let (irc, alice, carol) = Self.room()
    let long = String(repeating: "y", count: 600)
    let id = okID(irc.engine.send(carol, "BLOCK #ops :a\\n" + long))
    let lines = irc.take(alice)
    try #require(lines.count == 5, "\(lines)")
    #expect(lines[3].hasPrefix("@batch=m\(id);draft/multiline-concat :carol"))
    let pieces = lines[2...3].map { $0.components(separatedBy: "PRIVMSG #ops :")[1] }
    #expect(pieces.joined() == long)
    #expect(lines.allSatisfy { $0.utf8.count <= 512 + 4096 })
  }

  @Test("without draft/multiline, a block is a PRIVMSG per line that is not blank")
  func fallback() {
    let (irc, tagged, carol) = Self.room(["message-tags"])
    let plain = irc.connect("dave")
    irc.send(plain, "JOIN #ops")
    _ = irc.take(plain)
    _ = irc.take(tagged)
    let id = okID(irc.engine.send(carol, #"BLOCK #ops :one\n  \ntwo"#))
    let source = ":carol!carol@host.test"
    #expect(irc.take(plain) == ["\(source) PRIVMSG #ops :one", "\(source) PRIVMSG #ops :two"])
    #expect(
      irc.take(tagged) == [
        "@msgid=\(id) \(source) PRIVMSG #ops :one", "\(source) PRIVMSG #ops :two",
      ], "the msgid names the whole message: on its first line only")
  }

  @Test("echo-message: the sender gets its batch back with the msgid on the opener")
  func echo() {
    let (irc, alice, _) = Self.room(Self.multiline + ["echo-message"])
    irc.send(alice, "BATCH +e draft/multiline #ops")
    irc.send(alice, "@batch=e PRIVMSG #ops :a")
    irc.send(alice, "@batch=e PRIVMSG #ops :b")
    let echoed = irc.send(alice, "BATCH -e")
    #expect(echoed.count == 4, "\(echoed)")
    #expect(
      echoed.first?.hasPrefix("@msgid=") == true
        && echoed.first?.hasSuffix(
          " :alice!alice@host.test BATCH +m\(echoed.first.map { String($0.dropFirst(7).prefix { $0 != " " }) } ?? "") draft/multiline #ops"
        ) == true,
      "\(echoed)")
    #expect(echoed.last?.hasPrefix(":host.test BATCH -m") == true)
  }

  @Test("a labeled batch: its answer, the echo, carries the label on its outer batch")
  func labeled() {
    let (irc, alice, _) = Self.room(Self.multiline + ["echo-message", "labeled-response"])
    irc.send(alice, "@label=L1 BATCH +e draft/multiline #ops")
    irc.send(alice, "@batch=e PRIVMSG #ops :a")
    irc.send(alice, "@batch=e PRIVMSG #ops :b")
    let echoed = irc.send(alice, "BATCH -e")
    #expect(echoed.first == "@label=L1 :host.test BATCH +l1 labeled-response", "\(echoed)")
    #expect(echoed.count == 6, "\(echoed)")
    #expect(echoed[1].hasPrefix("@batch=l1;msgid="), "\(echoed)")
    #expect(echoed.last == ":host.test BATCH -l1", "\(echoed)")
  }

  @Test("CHATHISTORY nests a block's batch in its own")
  func history() {
    let (irc, alice, carol) = Self.room(Self.multiline + ["draft/chathistory"])
    let id = okID(irc.engine.send(carol, #"BLOCK #ops :a\nb"#))
    _ = irc.take(alice)
    let source = ":carol!carol@host.test"
    #expect(
      irc.send(alice, "CHATHISTORY LATEST #ops * 10") == [
        ":host.test BATCH +h1 chathistory #ops",
        "@batch=h1;msgid=\(id) \(source) BATCH +m\(id) draft/multiline #ops",
        "@batch=m\(id) \(source) PRIVMSG #ops :a",
        "@batch=m\(id) \(source) PRIVMSG #ops :b",
        "@batch=h1 :host.test BATCH -m\(id)",
        ":host.test BATCH -h1",
      ])
  }
}

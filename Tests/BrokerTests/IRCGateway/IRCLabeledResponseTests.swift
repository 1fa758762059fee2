import TestSupport
import Testing

@testable import Broker

/// IRCv3 labeled-response (chatbroker(7), "IRC"): for a client that
/// negotiated it and batch, the answer to a command sent with a `label`
/// tag is `ACK` when empty, the one line tagged when it is one, and a
/// `labeled-response` batch when it has several.
@Suite("IRC gateway: labeled-response on virtual time")
struct IRCLabeledResponseTests {
  static let caps = ["batch", "labeled-response"]

  @Test("CAP LS offers labeled-response")
  func offered() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    #expect(irc.send(alice, "CAP LS 302").first?.contains("labeled-response") == true)
  }

  @Test("one line is tagged; none is ACK")
  func oneOrNone() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: Self.caps)
    #expect(irc.send(alice, "@label=p1 PING x") == ["@label=p1 :host.test PONG host.test :x"])
    #expect(irc.send(alice, "@label=p2 PONG x") == ["@label=p2 :host.test ACK"])
    #expect(
      irc.send(alice, "@label=p3 TOPIC #nowhere") == [
        "@label=p3 :host.test 403 alice #nowhere :No such channel"
      ])
  }

  @Test("a JOIN's echo, names and backlog come in one labeled-response batch")
  func joinBatch() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #lab")
    irc.engine.send(bob, "SAY #lab earlier")
    let alice = irc.connect("alice", caps: Self.caps)
    let lines = irc.send(alice, "@label=j1 JOIN #lab")
    #expect(lines.first == "@label=j1 :host.test BATCH +l1 labeled-response")
    #expect(lines.dropFirst().first == "@batch=l1 :alice!alice@host.test JOIN #lab")
    #expect(lines.contains("@batch=l1 :host.test 366 alice #lab :End of /NAMES list"))
    #expect(lines.contains { $0.hasPrefix("@batch=l1 :bob!bob@host.test PRIVMSG #lab :[") })
    #expect(lines.last == ":host.test BATCH -l1")
    #expect(lines.count == 6, "\(lines)")
  }

  @Test(
    "with draft/read-marker, a labeled JOIN and MARKREAD end with the marker, which answers them")
  func readMarker() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: Self.caps + ["draft/read-marker"])
    let joined = irc.send(alice, "@label=j JOIN #lab")
    #expect(joined.first == "@label=j :host.test BATCH +l1 labeled-response")
    #expect(joined.contains("@batch=l1 :host.test MARKREAD #lab *"))
    #expect(joined.last == ":host.test BATCH -l1")
    #expect(irc.send(alice, "@label=m MARKREAD #lab") == ["@label=m :host.test MARKREAD #lab *"])
  }

  @Test("PRIVMSG: the echo carries the label, ACK without echo-message; the recipient sees none")
  func privmsg() {
    let irc = IRCHarness()
    let bob = irc.connect("bob", caps: Self.caps)
    let carol = irc.connect("carol")
    let alice = irc.connect("alice", caps: Self.caps + ["echo-message"])
    #expect(
      irc.send(alice, "@label=m1 PRIVMSG bob :hi") == [
        "@label=m1 :alice!alice@host.test PRIVMSG bob :hi"
      ])
    #expect(irc.take(bob) == [":alice!alice@host.test PRIVMSG bob :hi"])
    #expect(irc.send(bob, "@label=m2 PRIVMSG alice :hello") == ["@label=m2 :host.test ACK"])
    _ = irc.take(alice)
    let both = irc.send(alice, "@label=m3 PRIVMSG bob,carol :both")
    #expect(
      both == [
        "@label=m3 :host.test BATCH +l2 labeled-response",
        "@batch=l2 :alice!alice@host.test PRIVMSG bob :both",
        "@batch=l2 :alice!alice@host.test PRIVMSG carol :both",
        ":host.test BATCH -l2",
      ])
    #expect(irc.take(carol) == [":alice!alice@host.test PRIVMSG carol :both"])
  }

  @Test("with echo-message, a message to oneself is the labeled echo, then the delivery unlabeled")
  func toSelf() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: Self.caps + ["echo-message", "message-tags"])
    #expect(
      irc.send(alice, "@label=s1 PRIVMSG alice :hi") == [
        "@label=s1;msgid=1 :alice!alice@host.test PRIVMSG alice :hi",
        "@msgid=1 :alice!alice@host.test PRIVMSG alice :hi",
      ])
    #expect(
      irc.send(alice, "@label=s2 NOTICE alice :hi") == [
        "@label=s2;msgid=2 :alice!alice@host.test NOTICE alice :hi",
        "@msgid=2 :alice!alice@host.test NOTICE alice :hi",
      ])
    #expect(
      irc.send(alice, "@label=s3;+typing=active TAGMSG alice") == [
        "@label=s3;+typing=active :alice!alice@host.test TAGMSG alice",
        "@+typing=active :alice!alice@host.test TAGMSG alice",
      ])
    let bob = irc.connect("bob")
    #expect(
      irc.send(bob, "PRIVMSG bob :note") == [":bob!bob@host.test PRIVMSG bob :note"],
      "without echo-message, once")
  }

  @Test("replies the gateway makes itself and the engine's come in one batch (LIST, 403)")
  func mixed() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: Self.caps)
    irc.send(alice, "JOIN #lab")
    let list = irc.send(alice, "@label=L LIST")
    #expect(
      list == [
        "@label=L :host.test BATCH +l1 labeled-response",
        "@batch=l1 :host.test 321 alice Channel :Users  Name",
        "@batch=l1 :host.test 322 alice #lab 1 :",
        "@batch=l1 :host.test 323 alice :End of /LIST",
        ":host.test BATCH -l1",
      ])
    let parts = irc.send(alice, "@label=P PART #lab,nonsense")
    #expect(parts.first == "@label=P :host.test BATCH +l2 labeled-response")
    #expect(parts.dropFirst().first == "@batch=l2 :alice!alice@host.test PART #lab")
    #expect(parts.dropFirst(2).first?.hasPrefix("@batch=l2 :host.test 403 alice nonsense ") == true)
    #expect(parts.count == 4)
  }

  @Test("a CHATHISTORY batch nests in the labeled one: its start carries the outer batch")
  func nested() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #lab")
    irc.engine.send(bob, "SAY #lab one")
    irc.engine.send(bob, "SAY #lab two")
    let alice = irc.connect("alice", caps: Self.caps + ["draft/chathistory"])
    irc.send(alice, "JOIN #lab")
    let lines = irc.send(alice, "@label=h CHATHISTORY LATEST #lab * 10")
    #expect(
      lines == [
        "@label=h :host.test BATCH +l2 labeled-response",
        "@batch=l2 :host.test BATCH +h1 chathistory #lab",
        "@batch=h1 :bob!bob@host.test PRIVMSG #lab :one",
        "@batch=h1 :bob!bob@host.test PRIVMSG #lab :two",
        ":host.test BATCH -h1",
        ":host.test BATCH -l2",
      ])
  }

  @Test("a long CHATHISTORY answered page by page leaves as one answer after its last page")
  func pages() {
    let irc = IRCHarness()
    irc.defersLines = true
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #lab")
    for number in 1...120 { irc.engine.send(bob, "SAY #lab m\(number)") }
    let alice = irc.connect("alice", caps: Self.caps + ["draft/chathistory"])
    irc.send(alice, "JOIN #lab")
    let lines = irc.send(alice, "@label=big CHATHISTORY LATEST #lab * 100")
    #expect(lines.first == "@label=big :host.test BATCH +l2 labeled-response")
    #expect(lines.count == 104, "100 lines, two batch starts and two ends")
    #expect(lines.dropLast().last == ":host.test BATCH -h1")
    #expect(lines.last == ":host.test BATCH -l2")
  }

  @Test("no label without batch, nor past 64 bytes: the answer is as without one")
  func ignored() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["labeled-response"])
    #expect(irc.send(alice, "@label=p1 PING x") == [":host.test PONG host.test :x"])
    let bob = irc.connect("bob", caps: Self.caps)
    let long = String(repeating: "a", count: 65)
    #expect(irc.send(bob, "@label=\(long) PING x") == [":host.test PONG host.test :x"])
    let longest = String(repeating: "a", count: 64)
    #expect(
      irc.send(bob, "@label=\(longest) PING x") == [
        "@label=\(longest) :host.test PONG host.test :x"
      ]
    )
  }
}

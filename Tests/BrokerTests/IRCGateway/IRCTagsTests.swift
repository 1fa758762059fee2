import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Client-only tags (IRCv3 message-tags) and TAGMSG, relayed only to IRC
/// clients that negotiated message-tags (chatbroker(7), "IRC").
@Suite("IRC gateway: TAGMSG and client-only tags")
struct IRCTagsTests {
  @Test("a PRIVMSG's client-only tags reach clients with message-tags, and no one else")
  func taggedPrivmsg() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["message-tags"])
    let bob = irc.connect("bob", caps: ["message-tags"])
    let dave = irc.connect("carol")
    for id in [alice, bob, dave] { irc.send(id, "JOIN #ops") }
    _ = irc.take(bob)
    _ = irc.take(dave)
    _ = irc.engine.output.take(carol)
    irc.send(alice, "@+draft/reply=42;+example.com/x=a\\sb;vendor=no PRIVMSG #ops :yes")
    let got = irc.take(bob)
    #expect(got.count == 1)
    #expect(got.first?.hasPrefix("@+draft/reply=42;+example.com/x=a\\sb;msgid=") == true)
    #expect(got.first?.hasSuffix(" PRIVMSG #ops :yes") == true)
    #expect(irc.take(dave) == [":alice!alice@host.test PRIVMSG #ops :yes"])
    #expect(irc.engine.output.take(carol).first?.hasSuffix(" alice :yes") == true)
  }

  @Test("TAGMSG reaches clients with message-tags, is echoed with echo-message, and is not kept")
  func tagmsg() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["message-tags", "echo-message"])
    let bob = irc.connect("bob", caps: ["message-tags"])
    let dave = irc.connect("carol")
    for id in [alice, bob, dave] { irc.send(id, "JOIN #ops") }
    for id in [alice, bob, dave] { _ = irc.take(id) }
    _ = irc.engine.output.take(carol)
    #expect(
      irc.send(alice, "@+typing=active TAGMSG #ops") == [
        "@+typing=active :alice!alice@host.test TAGMSG #ops"
      ])
    #expect(irc.take(bob) == ["@+typing=active :alice!alice@host.test TAGMSG #ops"])
    #expect(irc.take(dave).isEmpty, "no message-tags, no TAGMSG")
    #expect(irc.engine.output.take(carol).isEmpty, "the line protocol shows nothing")
    #expect(irc.engine.send(carol, "HISTORY #ops 10").last == "OK HISTORY #ops 0")
    irc.send(alice, "@+draft/react=\u{1F44D} TAGMSG bob")
    #expect(irc.take(bob) == ["@+draft/react=\u{1F44D} :alice!alice@host.test TAGMSG bob"])
    #expect(irc.send(alice, "TAGMSG nosuchuser").first?.contains(" 401 ") == true)
  }

  @Test("client tags with control characters are cleaned, and more than 4096 bytes of tags is 417")
  func tagLimits() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob", caps: ["message-tags"])
    irc.send(alice, "@+x=a\u{1B}[2J PRIVMSG bob :hi")
    #expect(irc.take(bob).first?.hasPrefix("@+x=a\u{FFFD}[2J;msgid=") == true)
    let tags = "@+x=" + String(repeating: "a", count: 4092)
    #expect(irc.send(alice, tags + " PRIVMSG bob :hi").first?.contains(" 417 ") == true)
    #expect(irc.take(bob).isEmpty)
    let fits = "@+x=" + String(repeating: "a", count: 4091)
    irc.send(alice, fits + " PRIVMSG bob :hi")
    #expect(irc.take(bob).count == 1)
  }
}

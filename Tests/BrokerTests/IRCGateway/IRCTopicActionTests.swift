import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Topics and actions as IRC clients know them (chatbroker(7), "IRC",
/// `TOPIC`, `ACTION`): 332/333 after a JOIN and for `TOPIC #room`, a
/// `TOPIC` line when it changes, and CTCP ACTION both ways.
@Suite("IRC gateway: topics and actions on virtual time")
struct IRCTopicActionTests {
  @Test("TOPIC sets the topic for everyone; a JOIN then shows 332 and 333 after the JOIN line")
  func topicOnJoin() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    _ = (irc.take(alice), irc.engine.output.take(carol))
    #expect(irc.send(alice, "TOPIC #ops") == [":host.test 331 alice #ops :No topic is set"])
    #expect(
      irc.send(alice, "TOPIC #ops :deploy at 18:00") == [
        ":alice!alice@host.test TOPIC #ops :deploy at 18:00"
      ])
    #expect(
      irc.engine.output.take(carol) == [
        "TOPIC #ops alice 2026-11-30T17:00:00.000Z :deploy at 18:00"
      ])
    let bob = irc.connect("bob")
    let joined = irc.send(bob, "JOIN #ops")
    #expect(joined.first == ":bob!bob@host.test JOIN #ops")
    #expect(joined.dropFirst().first == ":host.test 332 bob #ops :deploy at 18:00")
    #expect(
      joined.dropFirst(2).first == ":host.test 333 bob #ops alice!alice@host.test 1796058000")
    #expect(
      irc.send(bob, "TOPIC #ops").prefix(1) == [":host.test 332 bob #ops :deploy at 18:00"])
    #expect(irc.send(bob, "LIST").contains(":host.test 322 bob #ops 3 :deploy at 18:00"))
  }

  @Test("only a member may set it: others get 442")
  func topicRefused() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    let bob = irc.connect("bob")
    #expect(
      irc.send(bob, "TOPIC #ops :mine") == [
        ":host.test 442 bob #ops :You're not on that channel"
      ])
  }

  @Test("CTCP ACTION is an action for everyone; other CTCP is not passed on as text")
  func actions() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    irc.send(alice, "PRIVMSG #ops :\u{01}ACTION waves\u{01}")
    #expect(irc.take(bob) == [":alice!alice@host.test PRIVMSG #ops :\u{01}ACTION waves\u{01}"])
    #expect(irc.engine.output.take(carol).first?.hasSuffix(" alice ACTION :waves") == true)
    irc.engine.send(carol, "ACTION #ops :nods")
    #expect(irc.take(alice) == [":carol!carol@host.test PRIVMSG #ops :\u{01}ACTION nods\u{01}"])
    _ = irc.take(bob)
    #expect(irc.send(alice, "PRIVMSG #ops :\u{01}VERSION\u{01}").isEmpty)
    #expect(irc.take(bob).isEmpty && irc.engine.output.take(carol).isEmpty)
  }
}

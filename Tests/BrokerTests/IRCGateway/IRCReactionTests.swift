import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Reactions on IRC (chatbroker(7), `REACT` and "IRC"): a TAGMSG with
/// `+draft/react` and `+draft/reply` is a kept reaction, and every kept
/// reaction reaches clients with message-tags as such a TAGMSG.
@Suite("IRC gateway: reactions as +draft/react")
struct IRCReactionTests {
  @Test("an IRC reaction on a kept message is a REACT: line users see it, HISTORY keeps it")
  func ircReactionIsKept() throws {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["message-tags", "echo-message"])
    let bob = irc.connect("bob", caps: ["message-tags"])
    let dave = irc.connect("dave")
    for id in [alice, bob, dave] { irc.send(id, "JOIN #ops") }
    let asked = okID(irc.engine.send(carol, "SAY #ops :who deploys?"))
    for id in [alice, bob, dave] { _ = irc.take(id) }
    let echoed = irc.send(alice, "@+draft/react=👍;+draft/reply=\(asked) TAGMSG #ops")
    #expect(
      echoed == ["@+draft/react=👍;+draft/reply=\(asked) :alice!alice@host.test TAGMSG #ops"],
      "the echo")
    #expect(
      irc.take(bob) == ["@+draft/react=👍;+draft/reply=\(asked) :alice!alice@host.test TAGMSG #ops"])
    #expect(irc.take(dave).isEmpty, "no TAGMSG without message-tags")
    #expect(irc.engine.output.take(carol) == ["REACT #ops \(asked) alice 👍"])
    #expect(
      irc.engine.send(carol, "HISTORY #ops 1").first?.contains(" REACTIONS 👍=alice :") == true)
    irc.send(alice, "@+draft/unreact=👍;+draft/reply=\(asked) TAGMSG #ops")
    #expect(irc.engine.output.take(carol) == ["UNREACT #ops \(asked) alice 👍"])
  }

  @Test("a line-protocol REACT reaches tagged IRC clients as a TAGMSG; an unknown id passes on")
  func lineReactionReachesIRC() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let bob = irc.connect("bob", caps: ["message-tags"])
    irc.send(bob, "JOIN #ops")
    let said = okID(irc.engine.send(carol, "SAY #ops :ship it"))
    _ = irc.take(bob)
    irc.engine.send(carol, "REACT #ops \(said) 🎉")
    #expect(
      irc.take(bob) == ["@+draft/react=🎉;+draft/reply=\(said) :carol!carol@host.test TAGMSG #ops"])
    // Another server's msgid: nothing to keep, the TAGMSG goes on as it was.
    irc.send(bob, "@+draft/react=🎉;+draft/reply=zz9 TAGMSG #ops")
    #expect(irc.engine.output.take(carol).isEmpty, "the line protocol shows no client tags")
    #expect(
      irc.engine.send(carol, "HISTORY #ops 1").first?.contains(" REACTIONS 🎉=carol :") == true,
      "bob's TAGMSG kept nothing")
  }
}

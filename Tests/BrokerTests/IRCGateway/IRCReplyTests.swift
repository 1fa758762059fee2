import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Replies on IRC (chatbroker(7), `REPLY` and "IRC"): `+draft/reply` on a
/// PRIVMSG is a kept reply, and every kept reply carries it to clients with
/// message-tags, live and in CHATHISTORY.
@Suite("IRC gateway: replies as +draft/reply")
struct IRCReplyTests {
  @Test(
    "an IRC reply to a kept message is a REPLY: line users see REPLY <id>, tagged clients the tag")
  func ircReplyIsKept() throws {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["message-tags"])
    let bob = irc.connect("bob", caps: ["message-tags"])
    let dave = irc.connect("dave")
    for id in [alice, bob, dave] { irc.send(id, "JOIN #ops") }
    for id in [alice, bob, dave] { _ = irc.take(id) }
    let asked = okID(irc.engine.send(carol, "SAY #ops :who deploys?"))
    for id in [alice, bob, dave] { _ = irc.take(id) }
    irc.send(alice, "@+draft/reply=\(asked) PRIVMSG #ops :me")
    let seen = irc.take(bob)
    #expect(seen.count == 1 && seen[0].hasPrefix("@+draft/reply=\(asked);msgid="), "\(seen)")
    #expect(irc.take(dave) == [":alice!alice@host.test PRIVMSG #ops :me"])
    let line = try #require(irc.engine.output.take(carol).first)
    #expect(line.hasPrefix("MSG #ops ") && line.hasSuffix(" alice REPLY \(asked) :me"), "\(line)")
    #expect(
      irc.engine.send(carol, "HISTORY #ops 1").first?.hasSuffix(" REPLY \(asked) :me") == true)
  }

  @Test(
    "a line-protocol REPLY reaches tagged IRC clients with +draft/reply, live and in CHATHISTORY")
  func lineReplyReachesIRC() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let bob = irc.connect("bob", caps: ["message-tags", "batch", "draft/chathistory"])
    irc.send(bob, "JOIN #ops")
    let asked = okID(irc.engine.send(carol, "SAY #ops :lunch?"))
    _ = irc.take(bob)
    let id = okID(irc.engine.send(carol, "REPLY #ops \(asked) :at one"))
    let live = irc.take(bob)
    #expect(live.count == 1 && live[0].hasPrefix("@+draft/reply=\(asked);msgid=\(id)"), "\(live)")
    #expect(live.first?.hasSuffix(" PRIVMSG #ops :at one") == true)
    let history = irc.send(bob, "CHATHISTORY LATEST #ops * 10")
    #expect(
      history.contains { $0.contains("+draft/reply=\(asked);") && $0.hasSuffix(":at one") },
      "\(history)")
  }

  @Test(
    "a changed line reaches IRC as a new PRIVMSG starting (edited), a reply with message-tags; history has the new text"
  )
  func amendedLine() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let bob = irc.connect("bob", caps: ["message-tags", "batch", "draft/chathistory"])
    let dave = irc.connect("dave")
    for id in [bob, dave] { irc.send(id, "JOIN #ops") }
    let id = okID(irc.engine.send(carol, "SAY #ops :deploy at 1800"))
    for session in [bob, dave] { _ = irc.take(session) }
    #expect(irc.engine.send(carol, "AMEND #ops \(id) :deploy at 18:00") == ["OK AMEND #ops \(id)"])
    #expect(
      irc.take(bob) == [
        "@+draft/reply=\(id) :carol!carol@host.test PRIVMSG #ops :(edited) deploy at 18:00"
      ])
    #expect(irc.take(dave) == [":carol!carol@host.test PRIVMSG #ops :(edited) deploy at 18:00"])
    let history = irc.send(bob, "CHATHISTORY LATEST #ops * 10")
    #expect(history.contains { $0.hasSuffix(" PRIVMSG #ops :deploy at 18:00") }, "\(history)")
    #expect(!history.contains { $0.contains("1800") })
  }

  @Test(
    "a +draft/reply to a message the broker cannot show is sent as a message, its tag passed on")
  func unknownReplyIsAMessage() throws {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    irc.engine.send(carol, "JOIN #secret invite")
    let hidden = okID(irc.engine.send(carol, "SAY #secret :not for alice"))
    let alice = irc.connect("alice", caps: ["message-tags"])
    let bob = irc.connect("bob", caps: ["message-tags"])
    for id in [alice, bob] { irc.send(id, "JOIN #ops") }
    for id in [alice, bob] { _ = irc.take(id) }
    _ = irc.engine.output.take(carol)
    for answered in ["zz9", hidden] {
      irc.send(alice, "@+draft/reply=\(answered) PRIVMSG #ops :hm")
      let seen = irc.take(bob)
      #expect(seen.count == 1 && seen[0].hasPrefix("@+draft/reply=\(answered);msgid="), "\(seen)")
      let line = try #require(irc.engine.output.take(carol).first)
      #expect(!line.contains("REPLY"), "not kept as a reply: \(line)")
      #expect(line.hasSuffix(" alice :hm"))
    }
  }
}

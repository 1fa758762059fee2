import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// What other users see of a NOTICE, a PART and a QUIT from IRC
/// (chatbroker(7), "IRC").
@Suite("IRC gateway: NOTICE, PART and QUIT reach the others as sent")
struct IRCRelayTests {
  @Test("a NOTICE reaches IRC clients as NOTICE, never PRIVMSG, and line-protocol users as MSG")
  func noticeIsNotice() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    irc.send(alice, "NOTICE #ops :build finished")
    #expect(irc.take(bob) == [":alice!alice@host.test NOTICE #ops :build finished"])
    #expect(irc.engine.output.take(carol).first?.hasSuffix(" alice :build finished") == true)
    irc.send(alice, "NOTICE bob :psst")
    #expect(irc.take(bob) == [":alice!alice@host.test NOTICE bob :psst"])
  }

  @Test(
    "a line-protocol NOTICE is answered OK NOTICE, reaches IRC clients as NOTICE and line users as MSG, and is kept"
  )
  func lineNotice() throws {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    let dave = irc.engine.connect("dave")
    irc.engine.send(carol, "JOIN #ops")
    irc.engine.send(dave, "JOIN #ops")
    let bob = irc.connect("bob")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    _ = irc.engine.output.take(dave)
    let answer = irc.engine.send(carol, "NOTICE #ops :deploy 42 finished")
    let words = try #require(answer.last?.split(separator: " "))
    #expect(words.count == 4 && words[0] == "OK" && words[1] == "NOTICE", "\(answer)")
    #expect(irc.take(bob) == [":carol!carol@host.test NOTICE #ops :deploy 42 finished"])
    #expect(
      irc.engine.output.take(dave) == ["MSG #ops \(words[2]) \(words[3]) carol :deploy 42 finished"]
    )
    #expect(
      irc.engine.send(dave, "HISTORY #ops 1") == [
        "HIST #ops \(words[2]) \(words[3]) carol :deploy 42 finished", "OK HISTORY #ops 1",
      ])
    #expect(irc.engine.send(carol, "NOTICE #ops").last?.hasPrefix("ERR NOTICE SYNTAX ") == true)
  }

  @Test("an IRC NOTICE's client-only tags reach IRC clients with message-tags, and no others")
  func taggedNotice() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let tagged = irc.connect("bob", caps: ["message-tags"])
    let plain = irc.connect("carol")
    for id in [alice, tagged, plain] { irc.send(id, "JOIN #ops") }
    _ = irc.take(tagged)
    _ = irc.take(plain)
    irc.send(alice, "@+draft/reply=k3;+x/y=a\\sb NOTICE #ops :done")
    let seen = irc.take(tagged)
    #expect(seen.count == 1 && seen[0].hasPrefix("@+draft/reply=k3;+x/y=a\\sb;"), "\(seen)")
    #expect(seen.first?.hasSuffix(" :alice!alice@host.test NOTICE #ops :done") == true)
    #expect(irc.take(plain) == [":alice!alice@host.test NOTICE #ops :done"])
  }

  @Test(
    "a PRIVMSG or NOTICE to a room asks the user database nothing, with or without echo-message")
  func roomMessageLooksUpNoUser() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let echoed = irc.connect("bob", caps: ["echo-message"])
    for id in [alice, echoed] { irc.send(id, "JOIN #ops") }
    let before = irc.engine.users.lookups
    irc.send(alice, "PRIVMSG #ops :one")
    irc.send(echoed, "PRIVMSG #ops :two")
    irc.send(alice, "NOTICE #ops :three")
    #expect(irc.engine.users.lookups == before)
  }

  @Test("a NOTICE to the service nick is never answered; a PRIVMSG is")
  func noticeToService() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(irc.send(alice, "NOTICE sched|bot :help").isEmpty)
    #expect(!irc.send(alice, "PRIVMSG sched|bot :help").isEmpty)
  }

  @Test("a PART reason reaches the room's IRC clients; line-protocol users see PART")
  func partReason() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(alice)
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    #expect(
      irc.send(alice, "PART #ops :off to lunch") == [
        ":alice!alice@host.test PART #ops :off to lunch"
      ], "the echo carries the reason too")
    #expect(irc.take(bob) == [":alice!alice@host.test PART #ops :off to lunch"])
    #expect(irc.engine.output.take(carol) == ["PART #ops alice"])
  }

  @Test("QUIT reaches those who share a room as one QUIT with its reason, not a PART per room")
  func quitReason() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    for room in ["#ops", "#dev"] {
      irc.send(alice, "JOIN \(room)")
      irc.send(bob, "JOIN \(room)")
    }
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    irc.send(alice, "QUIT :see you")
    #expect(irc.take(bob) == [":alice!alice@host.test QUIT :Quit: see you"])
    #expect(irc.engine.output.take(carol) == ["PART #ops alice"])
    let dave = irc.connect("carol")
    irc.send(dave, "JOIN #dev")
    _ = irc.take(bob)
    irc.engine.engine.disconnect(dave)
    #expect(
      irc.take(bob) == [":carol!carol@host.test PART #dev"],
      "carol's line-protocol session stays: she is still connected, so it is a PART")
  }

  @Test("a connection that closes without QUIT is a QUIT too when it was the user's last")
  func droppedIsQuit() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    irc.engine.engine.disconnect(alice)
    #expect(irc.take(bob) == [":alice!alice@host.test QUIT :Connection closed"])
  }
}

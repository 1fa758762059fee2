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

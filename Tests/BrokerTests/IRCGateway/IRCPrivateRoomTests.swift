import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Private rooms as IRC clients see them (chatbroker(7), "Moderation"):
/// `+i`, a JOIN key that creates one, INVITE, MODE -i, and 473. Group
/// `ops` holds alice and bob, not carol.
@Suite("IRC gateway: private rooms on virtual time")
struct IRCPrivateRoomTests {
  @Test("JOIN #ops group=ops creates the room private: MODE shows +i; 005 and 004 name the mode")
  func joinKey() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(irc.send(alice, "JOIN #ops group=ops").first == ":alice!alice@host.test JOIN #ops")
    #expect(irc.send(alice, "MODE #ops").first == ":host.test 324 alice #ops +i")
    #expect(irc.send(alice, "JOIN #plan,#pub invite").first == ":alice!alice@host.test JOIN #plan")
    #expect(irc.engine.send(irc.engine.connect("carol"), "ROOMS") == ["ROOM #pub 1", "OK ROOMS 1"])
    #expect(irc.send(alice, "VERSION").contains { $0.contains(" CHANMODES=b,k,l,imnst ") })
    #expect(irc.send(alice, "JOIN #other somekey").first == ":alice!alice@host.test JOIN #other")
    #expect(irc.send(alice, "MODE #other").first == ":host.test 324 alice #other +")
  }

  @Test(
    "an outsider's JOIN is 473, PRIVMSG 404, MODE and NAMES as for no room; INVITE lets them in")
  func outsider() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops group=ops")
    let carol = irc.connect("carol")
    #expect(irc.send(carol, "JOIN #ops") == [":host.test 473 carol #ops :Cannot join channel (+i)"])
    #expect(
      irc.send(carol, "PRIVMSG #ops :hi").first?.hasPrefix(":host.test 404 carol #ops ") == true)
    #expect(
      irc.send(carol, "MODE #ops")
        == irc.send(carol, "MODE #nosuch").map {
          $0.replacingOccurrences(of: "#nosuch", with: "#ops")
        })
    #expect(irc.send(carol, "NAMES #ops") == [":host.test 366 carol #ops :End of /NAMES list"])
    #expect(
      irc.send(carol, "INVITE carol #ops") == [
        ":host.test 442 carol #ops :You're not on that channel"
      ])
    #expect(irc.send(alice, "INVITE carol #ops") == [":host.test 341 alice carol #ops"])
    #expect(irc.take(carol) == [":alice!alice@host.test INVITE carol #ops"])
    #expect(irc.send(carol, "JOIN #ops").first == ":carol!carol@host.test JOIN #ops")
  }

  @Test(
    "MODE -i makes a private room public, +i on one is no change; +i makes a public room private")
  func modes() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops group=ops")
    #expect(irc.send(alice, "MODE #ops +i") == [])
    #expect(irc.send(alice, "MODE #ops").first == ":host.test 324 alice #ops +i")
    #expect(irc.send(alice, "MODE #ops -i") == [":alice!alice@host.test MODE #ops -i"])
    #expect(irc.send(alice, "MODE #ops").first == ":host.test 324 alice #ops +")
    // A public room made private keeps who is in it: bob is invited.
    let bob = irc.connect("bob")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(alice)
    #expect(irc.send(alice, "MODE #ops +i") == [":alice!alice@host.test MODE #ops +i"])
    #expect(irc.take(bob) == [":alice!alice@host.test MODE #ops +i"])
    let carol = irc.connect("carol")
    #expect(irc.send(carol, "JOIN #ops") == [":host.test 473 carol #ops :Cannot join channel (+i)"])
    #expect(irc.send(bob, "PRIVMSG #ops :still here").isEmpty)
  }
}

import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Channel operators and modes as IRC clients see them (chatbroker(7),
/// "Moderation"), what irctest's chmodes, names, invite, kick and topic
/// modules found.
@Suite("IRC gateway: operators, modes and KICK on virtual time")
struct IRCModerationTests {
  /// alice creates #chan, bob joins it.
  private func channel() -> (IRCHarness, ConnectionID, ConnectionID) {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #chan")
    irc.send(bob, "JOIN #chan")
    _ = irc.take(alice)
    return (irc, alice, bob)
  }

  @Test("005 names the prefixes and modes; the first joiner is @ in NAMES and WHO")
  func prefixes() {
    let (irc, alice, bob) = channel()
    let version = irc.send(alice, "VERSION").joined(separator: " ")
    #expect(version.contains(" PREFIX=(ov)@+ ") && version.contains(" CHANMODES=b,k,l,imnst "))
    #expect(
      irc.send(bob, "NAMES #chan") == [
        ":host.test 353 bob = #chan :@alice bob", ":host.test 366 bob #chan :End of /NAMES list",
      ])
    #expect(irc.send(bob, "WHO #chan").first?.contains(" alice H@ :0 alice") == true)
    #expect(irc.send(alice, "MODE #chan +v bob") == [":alice!alice@host.test MODE #chan +v bob"])
    #expect(irc.take(bob) == [":alice!alice@host.test MODE #chan +v bob"])
    #expect(irc.send(bob, "NAMES #chan").first == ":host.test 353 bob = #chan :@alice +bob")
  }

  @Test("324 shows the modes set, the key to members; -modes reverses them in one MODE line")
  func modeIs() {
    let (irc, alice, bob) = channel()
    #expect(
      irc.send(alice, "MODE #chan +ntk beer") == [":alice!alice@host.test MODE #chan +ntk beer"])
    _ = irc.take(bob)
    #expect(irc.send(bob, "MODE #chan").first == ":host.test 324 bob #chan +knt beer")
    #expect(irc.send(alice, "MODE #chan -ntk") == [":alice!alice@host.test MODE #chan -ntk"])
    #expect(irc.send(alice, "MODE #chan").first == ":host.test 324 alice #chan +")
  }

  @Test("482 for who is no operator, 441 for a target not in the room, 403 for no room")
  func refusals() {
    let (irc, alice, bob) = channel()
    #expect(
      irc.send(bob, "MODE #chan +o bob").first?.hasPrefix(":host.test 482 bob #chan ") == true)
    _ = irc.connect("carol")
    #expect(
      irc.send(alice, "MODE #chan +o carol") == [
        ":host.test 441 alice carol #chan :They aren't on that channel"
      ])
    #expect(
      irc.send(alice, "MODE #nosuch +o bob") == [":host.test 403 alice #nosuch :No such channel"])
    #expect(irc.send(alice, "MODE #chan +y").first?.hasPrefix(":host.test 472 alice y ") == true)
    #expect(irc.send(alice, "MODE #chan +l").first?.hasPrefix(":host.test 461 alice MODE ") == true)
    #expect(
      irc.send(alice, "MODE #chan +l abc").first?.hasPrefix(":host.test 696 alice #chan l abc ")
        == true)
    #expect(
      irc.send(alice, "MODE #chan +k :with spaces").first?.hasPrefix(":host.test 525 alice #chan ")
        == true)
    #expect(
      irc.send(alice, "MODE #chan").first == ":host.test 324 alice #chan +", "nothing changed")
  }

  @Test("+b, +k, +l and +i refuse a JOIN with 474, 475, 471 and 473; the ban list is 367 and 368")
  func joins() {
    let (irc, alice, _) = channel()
    irc.send(alice, "MODE #chan +b carol")
    let list = irc.send(alice, "MODE #chan +b")
    #expect(
      list.first?.hasPrefix(":host.test 367 alice #chan carol!*@* alice!alice@host.test ") == true)
    #expect(list.last == ":host.test 368 alice #chan :End of channel ban list")
    let carol = irc.connect("carol")
    #expect(
      irc.send(carol, "JOIN #chan") == [":host.test 474 carol #chan :Cannot join channel (+b)"])
    #expect(
      irc.send(carol, "PRIVMSG #chan :hi").first?.hasPrefix(":host.test 404 carol #chan ") == true)
    irc.send(alice, "MODE #chan -b+k carol!*@* beer")
    #expect(
      irc.send(carol, "JOIN #chan") == [":host.test 475 carol #chan :Cannot join channel (+k)"])
    irc.send(alice, "MODE #chan -k+l beer 2")
    #expect(
      irc.send(carol, "JOIN #chan") == [":host.test 471 carol #chan :Cannot join channel (+l)"])
    irc.send(alice, "MODE #chan -l+i")
    #expect(
      irc.send(carol, "JOIN #chan") == [":host.test 473 carol #chan :Cannot join channel (+i)"])
    #expect(irc.send(alice, "INVITE carol #chan") == [":host.test 341 alice carol #chan"])
    _ = irc.take(carol)
    #expect(irc.send(carol, "JOIN #chan beer").first == ":carol!carol@host.test JOIN #chan")
  }

  @Test("+m, +n and +t: 404 for a line, 482 for a topic")
  func writes() {
    let (irc, alice, bob) = channel()
    irc.send(alice, "MODE #chan +mt")
    _ = irc.take(bob)
    #expect(
      irc.send(bob, "PRIVMSG #chan :hi").first?.hasPrefix(":host.test 404 bob #chan ") == true)
    #expect(
      irc.send(bob, "TOPIC #chan :mine").first?.hasPrefix(":host.test 482 bob #chan ") == true)
    irc.send(alice, "MODE #chan -m+n")
    let carol = irc.connect("carol")
    #expect(
      irc.send(carol, "PRIVMSG #chan :hi").first?.hasPrefix(":host.test 404 carol #chan ") == true)
  }

  @Test("KICK: the room sees it, the kicked user leaves; 482, 441, 442 and 403 as RFC 2812 says")
  func kick() {
    let (irc, alice, bob) = channel()
    let carol = irc.connect("carol")
    #expect(irc.send(bob, "KICK #chan alice").first?.hasPrefix(":host.test 482 bob #chan ") == true)
    #expect(
      irc.send(carol, "KICK #chan alice") == [
        ":host.test 442 carol #chan :You're not on that channel"
      ])
    #expect(
      irc.send(alice, "KICK #chan carol").first?.hasPrefix(":host.test 441 alice carol #chan ")
        == true)
    #expect(
      irc.send(alice, "KICK #nosuch bob") == [":host.test 403 alice #nosuch :No such channel"])
    #expect(
      irc.send(alice, "KICK #chan bob :bye") == [":alice!alice@host.test KICK #chan bob :bye"])
    #expect(irc.take(bob) == [":alice!alice@host.test KICK #chan bob :bye"])
    #expect(irc.send(alice, "NAMES #chan").first == ":host.test 353 alice = #chan :@alice")
    irc.send(bob, "JOIN #chan")
    irc.send(carol, "JOIN #chan")
    _ = irc.take(alice)
    #expect(
      irc.send(alice, "KICK #chan bob,carol") == [
        ":alice!alice@host.test KICK #chan bob :alice",
        ":alice!alice@host.test KICK #chan carol :alice",
      ], "one step per nick, the kicker's nick the default reason")
  }

  @Test(
    "INVITE: 442 from a non-member, 443 for a member, 401 for no connected nick, 482 without +o on +i"
  )
  func invite() {
    let (irc, alice, bob) = channel()
    let carol = irc.connect("carol")
    #expect(
      irc.send(carol, "INVITE bob #chan") == [
        ":host.test 442 carol #chan :You're not on that channel"
      ])
    #expect(
      irc.send(alice, "INVITE bob #chan") == [
        ":host.test 443 alice bob #chan :is already on channel"
      ])
    #expect(irc.send(alice, "INVITE dave #chan") == [":host.test 401 alice dave :No such nick"])
    irc.send(alice, "MODE #chan +i")
    _ = irc.take(bob)
    #expect(
      irc.send(bob, "INVITE carol #chan").first?.hasPrefix(":host.test 482 bob #chan ") == true)
  }

  @Test(
    "a secret room is 353 @ and not in LIST for who is not in it; NAMES of several rooms ends once")
  func secretAndNames() {
    let (irc, alice, _) = channel()
    irc.send(alice, "MODE #chan +s")
    irc.send(alice, "JOIN #other")
    #expect(
      irc.send(alice, "NAMES #chan,#other") == [
        ":host.test 353 alice @ #chan :@alice bob", ":host.test 353 alice = #other :@alice",
        ":host.test 366 alice #chan,#other :End of /NAMES list",
      ])
    let carol = irc.connect("carol")
    #expect(!irc.send(carol, "LIST").contains { $0.contains("#chan") })
  }
}

import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// What WHO and WHOIS tell of a user beyond the nick: the real name from
/// USER, idle time, and WHOX's fields (chatbroker(7), "IRC").
@Suite("IRC gateway: real names, idle time and WHOX")
struct IRCWhoTests {
  /// Registers `user` with a real name of its own.
  func register(_ irc: IRCHarness, _ user: String, realName: String) -> ConnectionID {
    let id = irc.open(user)
    irc.send(id, "NICK \(user)")
    irc.send(id, "USER someone 0 * :\(realName)")
    _ = irc.take(id)
    return id
  }

  @Test("USER's real name is shown by WHOIS (311) and WHO (352); the user field stays the login")
  func realName() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = register(irc, "bob", realName: "Bob \u{02}Builder\u{02}")
    irc.send(bob, "JOIN #a")
    irc.send(alice, "JOIN #a")
    #expect(
      irc.send(alice, "WHOIS bob").first == ":host.test 311 alice bob bob host.test * :Bob Builder")
    #expect(
      irc.send(alice, "WHO bob").first
        == ":host.test 352 alice * bob host.test host.test bob H :0 Bob Builder")
    #expect(
      irc.send(alice, "WHO #a").contains(
        ":host.test 352 alice #a bob host.test host.test bob H@ :0 Bob Builder"))
  }

  @Test("WHO of a mask lists the matching users one shares a room with, and oneself; WHO nick any")
  func whoMask() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let evan = irc.connect("evan")
    _ = irc.connect("eve")
    #expect(irc.send(alice, "WHO ev*") == [":host.test 315 alice ev* :End of /WHO list"])
    #expect(irc.send(alice, "WHO evan").count == 2, "a plain nick is answered all the same")
    irc.send(evan, "JOIN #a")
    irc.send(alice, "JOIN #a")
    #expect(
      irc.send(alice, "WHO EV*") == [
        ":host.test 352 alice * evan host.test host.test evan H :0 evan",
        ":host.test 315 alice EV* :End of /WHO list",
      ])
    #expect(
      irc.send(alice, "WHO * %n") == [
        ":host.test 354 alice :alice", ":host.test 354 alice :evan",
        ":host.test 315 alice * :End of /WHO list",
      ])
  }

  @Test("USER without a username or a real name answers 461 and does not register")
  func userNeedsRealName() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    irc.send(alice, "NICK alice")
    #expect(irc.send(alice, "USER alice * * :") == [":host.test 461 * USER :Not enough parameters"])
    #expect(irc.send(alice, "USER alice *") == [":host.test 461 * USER :Not enough parameters"])
    #expect(irc.send(alice, "USER alice 0 * :Alice").first?.contains(" 001 alice ") == true)
  }

  @Test("WHOIS answers 317 with the seconds since the user's last message and the sign-on")
  func whoisIdle() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    let signOn = irc.engine.clock.now.milliseconds / 1000
    irc.engine.advance(to: "2026-11-30T17:00:30.000Z")
    irc.send(bob, "PRIVMSG alice :hi")
    irc.engine.advance(to: "2026-11-30T17:01:00.000Z")
    let whois = irc.send(alice, "WHOIS bob")
    #expect(whois.contains(":host.test 317 alice bob 30 \(signOn) :seconds idle, signon time"))
    #expect(whois.last == ":host.test 318 alice bob :End of /WHOIS list")
    _ = bob
  }

  @Test("WHO with %fields answers WHOX's 354 with those fields in their order, and the token")
  func whox() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = register(irc, "bob", realName: "Bob B")
    irc.send(bob, "JOIN #a")
    #expect(
      irc.send(alice, "WHO bob %tcuihsnfdlaor,123") == [
        ":host.test 354 alice 123 * bob 255.255.255.255 host.test host.test bob H 0 0 0 n/a :Bob B",
        ":host.test 315 alice bob :End of /WHO list",
      ])
    #expect(
      irc.send(alice, "WHO bob %nt,7") == [
        ":host.test 354 alice 7 :bob", ":host.test 315 alice bob :End of /WHO list",
      ], "the fields come in WHOX's order, not the order asked")
    #expect(
      irc.send(alice, "WHO #a %cnf") == [
        ":host.test 354 alice #a bob :H@", ":host.test 315 alice #a :End of /WHO list",
      ])
    #expect(irc.session(alice).isupportLines().contains { $0.bytes.contains(Array("WHOX".utf8)) })
  }
}

import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// IRCv3 multi-prefix and userhost-in-names: how NAMES and WHO show a
/// room's members to a client that asked for them (chatbroker(7), "IRC").
@Suite("IRC gateway: multi-prefix and userhost-in-names")
struct IRCNamesCapabilityTests {
  @Test("with multi-prefix, NAMES and WHO show every prefix, highest first; without, the highest")
  func multiPrefix() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["multi-prefix"])
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #a")
    irc.send(bob, "JOIN #a")
    irc.send(alice, "MODE #a +v alice")
    _ = irc.take(bob)
    #expect(irc.send(alice, "NAMES #a").first == ":host.test 353 alice = #a :@+alice bob")
    #expect(irc.send(alice, "WHO #a").first?.contains(" alice H@+ :0 alice") == true)
    #expect(irc.send(bob, "NAMES #a").first == ":host.test 353 bob = #a :@alice bob")
    #expect(irc.send(bob, "WHO #a").first?.contains(" alice H@ :0 alice") == true)
  }

  @Test("with userhost-in-names, NAMES shows each member as nick!user@host")
  func userhostInNames() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["userhost-in-names"])
    irc.send(alice, "JOIN #a")
    #expect(
      irc.send(alice, "NAMES #a").first
        == ":host.test 353 alice = #a :@alice!alice@host.test")
    #expect(
      IRCSession.userhost(ofNick: "bob|h2", serverName: "host.test") == "bob|h2!bob@h2",
      "a user of another host, as its lines' source")
  }

  @Test("CAP LS offers both, and CAP REQ acknowledges them")
  func offered() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    let ls = irc.send(alice, "CAP LS 302").joined(separator: " ")
    #expect(ls.contains("multi-prefix") && ls.contains("userhost-in-names"))
    #expect(
      irc.send(alice, "CAP REQ :multi-prefix userhost-in-names") == [
        ":host.test CAP * ACK :multi-prefix userhost-in-names"
      ])
  }
}

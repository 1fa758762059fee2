import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// An IRC client that comes back finds its rooms as a bouncer keeps them
/// (chatbroker(7), "IRC"): joined on registration, with what it missed.
@Suite("IRC gateway: joined to your rooms on registration, with only what you missed")
struct IRCContinuityTests {
  /// Registers `user` over IRC and returns every line after 001.
  func register(_ irc: IRCHarness, _ user: String) -> (ConnectionID, [String]) {
    let id = irc.open(user)
    irc.send(id, "NICK \(user)")
    let lines = irc.send(id, "USER \(user) 0 * :\(user)")
    return (id, lines)
  }

  @Test("on registration the client is joined to the user's rooms, after the burst")
  func joinedOnRegistration() {
    let irc = IRCHarness()
    let line = irc.engine.connect("alice")
    irc.engine.send(line, "JOIN #ops")
    irc.engine.send(line, "JOIN #dev")
    let (_, lines) = register(irc, "alice")
    let joins = lines.filter { $0.hasPrefix(":alice!alice@host.test JOIN ") }
    #expect(joins == [":alice!alice@host.test JOIN #dev", ":alice!alice@host.test JOIN #ops"])
    let motd = lines.firstIndex { $0.contains(" 422 ") } ?? lines.endIndex
    let firstJoin = lines.firstIndex { $0.contains(" JOIN ") } ?? -1
    #expect(motd < firstJoin, "the JOINs come after the welcome burst")
    #expect(lines.contains(":host.test 366 alice #ops :End of /NAMES list"))
  }

  @Test("a JOIN of a room the client is already in is not answered again")
  func joinAgain() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(!irc.send(alice, "JOIN #ops").isEmpty)
    #expect(irc.send(alice, "JOIN #OPS").isEmpty)
    irc.send(alice, "PART #ops")
    #expect(irc.send(alice, "JOIN #ops").first == ":alice!alice@host.test JOIN #ops")
  }

  @Test("coming back, the backlog is what arrived while away, not the last 50 again")
  func onlyWhatWasMissed() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    irc.engine.send(bob, "SAY #ops seen before")
    let first = irc.connect("alice")
    irc.send(first, "JOIN #ops")
    irc.engine.send(bob, "SAY #ops seen live")
    irc.send(first, "QUIT")
    irc.engine.send(bob, "SAY #ops missed one")
    irc.engine.send(bob, "SAY #ops missed two")
    let (_, lines) = register(irc, "alice")
    let backlog = lines.filter { $0.contains(" PRIVMSG #ops ") }
    #expect(backlog.count == 2)
    #expect(backlog.first?.hasSuffix("] missed one") == true)
    #expect(backlog.last?.hasSuffix("] missed two") == true)
  }
}

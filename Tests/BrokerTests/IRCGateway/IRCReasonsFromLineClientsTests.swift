import Testing

@testable import Broker

/// A reason given on the line protocol's PART and QUIT (chatbroker(7),
/// since 1.6) is shown to IRC clients as IRC's own reasons are: one
/// request for both wire formats, not one per door.
@Suite("IRC: reasons of line-protocol clients' PART and QUIT")
struct IRCReasonsFromLineClientsTests {
  /// carol on the line protocol and bob on IRC in #ops, their lines so
  /// far taken.
  static func room() -> (IRCHarness, ConnectionID, ConnectionID) {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let bob = irc.connect("bob")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(bob)
    _ = irc.engine.output.take(carol)
    return (irc, carol, bob)
  }

  @Test("PART #room :text over the line protocol is a PART with that reason on IRC")
  func partReason() {
    let (irc, carol, bob) = Self.room()
    #expect(irc.engine.send(carol, "PART #ops :off to lunch") == ["OK PART #ops"])
    #expect(irc.take(bob) == [":carol!carol@host.test PART #ops :off to lunch"])
  }

  @Test("QUIT :text over the line protocol is a QUIT with that reason on IRC")
  func quitReason() {
    let (irc, carol, bob) = Self.room()
    irc.engine.send(carol, "QUIT :the train is here")
    #expect(irc.take(bob) == [":carol!carol@host.test QUIT :Quit: the train is here"])
  }
}

import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// IRCv3 away-notify (chatbroker(7), "IRC", `AWAY`): a client that
/// negotiated it hears when someone who shares a room with it goes away
/// or comes back, however the away state was set, and when an away user
/// joins; others hear nothing.
@Suite("IRC gateway: away-notify on virtual time")
struct IRCAwayNotifyTests {
  /// alice with away-notify, bob without, both on IRC, and carol on the
  /// line protocol, all in #ops.
  private func room() -> (IRCHarness, alice: ConnectionID, bob: ConnectionID, carol: ConnectionID) {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["away-notify"])
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = (irc.take(alice), irc.take(bob), irc.engine.output.take(carol))
    return (irc, alice, bob, carol)
  }

  @Test("CAP LS offers away-notify")
  func offered() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    #expect(irc.send(alice, "CAP LS 302").first?.contains("away-notify") == true)
  }

  @Test("AWAY over the line protocol reaches IRC clients with away-notify, and back again")
  func fromLineProtocol() {
    let (irc, alice, bob, carol) = room()
    #expect(irc.engine.send(carol, "AWAY :at lunch") == ["OK AWAY"])
    #expect(irc.take(alice) == [":carol!carol@host.test AWAY :at lunch"])
    #expect(irc.take(bob).isEmpty)
    irc.engine.send(carol, "AWAY :at lunch")
    #expect(irc.take(alice).isEmpty, "the same text again changes nothing")
    #expect(irc.engine.send(carol, "AWAY") == ["OK AWAY BACK"])
    #expect(irc.take(alice) == [":carol!carol@host.test AWAY"])
  }

  @Test("AWAY over IRC: 306 to the one who set it, AWAY to the others who share a room")
  func fromIRC() {
    let (irc, alice, bob, carol) = room()
    #expect(
      irc.send(bob, "AWAY :meeting") == [
        ":host.test 306 bob :You have been marked as being away"
      ])
    #expect(irc.take(alice) == [":bob!bob@host.test AWAY :meeting"])
    #expect(irc.engine.output.take(carol).isEmpty, "the line protocol shows nothing")
    irc.send(bob, "AWAY")
    #expect(irc.take(alice) == [":bob!bob@host.test AWAY"])
  }

  @Test("one AWAY however many rooms are shared; none for who shares no room, nor for oneself")
  func onlyThoseSharingARoom() {
    let (irc, alice, bob, carol) = room()
    irc.send(alice, "JOIN #dev")
    irc.engine.send(carol, "JOIN #dev")
    let dave = irc.connect("dave", caps: ["away-notify"])
    irc.send(dave, "JOIN #elsewhere")
    _ = (irc.take(alice), irc.take(dave))
    irc.engine.send(carol, "AWAY :gone")
    #expect(irc.take(alice) == [":carol!carol@host.test AWAY :gone"])
    #expect(irc.take(dave).isEmpty)
    #expect(
      irc.send(alice, "AWAY :too") == [":host.test 306 alice :You have been marked as being away"])
    #expect(irc.take(bob).isEmpty)
  }

  @Test("a user who is away says so as they join: JOIN, then AWAY")
  func awayOnJoin() {
    let (irc, alice, _, carol) = room()
    irc.send(alice, "JOIN #dev")
    _ = irc.take(alice)
    irc.engine.send(carol, "AWAY :on a train")
    _ = irc.take(alice)
    irc.engine.send(carol, "JOIN #dev")
    #expect(
      irc.take(alice) == [
        ":carol!carol@host.test JOIN #dev", ":carol!carol@host.test AWAY :on a train",
      ])
  }

  @Test("a long away text set over the line protocol is cut to AWAYLEN")
  func awayLength() {
    let (irc, alice, _, carol) = room()
    irc.engine.send(carol, "AWAY :" + String(repeating: "x", count: 300))
    let line = irc.take(alice).first ?? ""
    #expect(line == ":carol!carol@host.test AWAY :" + String(repeating: "x", count: 200))
  }
}

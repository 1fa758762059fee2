import TestSupport
import Testing

@testable import Broker

/// Several IRC sessions of one user are one nick, as a bouncer's clients
/// are (chatbroker(7), "IRC"): each gets what is sent to the nick and to
/// its rooms, and what another of them sent; others see one user.
@Suite("IRC gateway: sessions of one user on virtual time")
struct IRCMultiSessionTests {
  @Test("both sessions get what is sent to the nick, and each what the other sent")
  func sharedNick() {
    let irc = IRCHarness()
    let bob = irc.connect("bob")
    irc.send(bob, "JOIN #lab")
    let first = irc.connect("alice")
    irc.send(first, "JOIN #lab")
    _ = irc.take(bob)
    // Joined to alice's rooms as it registers.
    let second = irc.connect("alice")
    #expect(irc.take(bob).isEmpty, "a second session is no new JOIN")

    irc.send(bob, "PRIVMSG alice :hi")
    #expect(irc.take(first) == [":bob!bob@host.test PRIVMSG alice :hi"])
    #expect(irc.take(second) == [":bob!bob@host.test PRIVMSG alice :hi"])

    irc.send(first, "PRIVMSG bob :yo")
    #expect(irc.take(bob) == [":alice!alice@host.test PRIVMSG bob :yo"])
    #expect(irc.take(second) == [":alice!alice@host.test PRIVMSG bob :yo"], "as a bouncer shows it")

    irc.send(first, "PRIVMSG #lab :to the room")
    #expect(irc.take(second) == [":alice!alice@host.test PRIVMSG #lab :to the room"])
    #expect(irc.take(bob) == [":alice!alice@host.test PRIVMSG #lab :to the room"])

    irc.send(first, "QUIT :one of two")
    #expect(irc.take(bob).isEmpty, "alice is still here")
    irc.send(second, "QUIT :the last")
    #expect(irc.take(bob) == [":alice!alice@host.test QUIT :Quit: the last"])
  }
}

import Foundation
import Posix
import TestSupport
import Testing

/// The invited user is told on every door (chatbroker(7), `INVITE`): a
/// line-protocol session gets the `INVITE` line, an IRC client IRC's
/// `INVITE` from the inviter, as from any IRC server.
@Suite("INVITE tells the invited user, on both doors", .serialized)
struct InvitationTests {
  @Test(
    "cbtest1 invites cbtest2 to a private room: cbtest2's line session gets INVITE #r cbtest2 cbtest1, its IRC client :cbtest1!… INVITE cbtest2 #r",
    UnixUsers.required)
  func invitedUserIsTold() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start(["--no-sync"])
    let inviter = try broker.connect(as: "cbtest1")
    _ = try inviter.request("JOIN #r invite")
    let line = try broker.connect(as: "cbtest2")
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest2"))
    try irc.send("NICK cbtest2\r\nUSER cbtest2 0 * :cbtest2\r\n")
    try irc.expect(":\(Host.name) 422 cbtest2 ")

    #expect(try inviter.request("INVITE #r cbtest2") == ["OK INVITE #r cbtest2"])
    #expect(try line.expect("INVITE ") == "INVITE #r cbtest2 cbtest1")
    #expect(try irc.expect(":cbtest1!") == ":cbtest1!cbtest1@\(Host.name) INVITE cbtest2 #r\r")
    #expect(try line.request("JOIN #r").last?.hasPrefix("OK JOIN #r") == true)
  }
}

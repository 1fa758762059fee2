import Broker
import Foundation
import Posix
import TestSupport
import Testing

/// Operators and modes through the real broker as real Unix users
/// (chatbroker(7), "Moderation"): cbtest1 creates the room and is its
/// operator, cbtest2 is held to its modes over the line protocol and IRC,
/// and a restart keeps them.
@Suite("Moderation as real users")
struct ModerationTests {
  @Test(
    "cbtest1's room is +m: cbtest2 is refused until voiced, sees @cbtest1 over IRC, is KICKed; a restart keeps the modes",
    UnixUsers.required)
  func moderatedRoom() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let op = try broker.connect(as: "cbtest1")
    let member = try broker.connect(as: "cbtest2")
    #expect(try op.request("JOIN #mod") == ["OK JOIN #mod 1"])
    #expect(try member.request("JOIN #mod") == ["OK JOIN #mod 2"])
    _ = try op.expect("JOIN #mod cbtest2")
    #expect(
      try member.request("MODE #mod +t") == [
        "ERR MODE NOTOPERATOR :you are not an operator of #mod"
      ])
    #expect(try op.request("MODE #mod +mt") == ["OK MODE #mod +mt"])
    #expect(try member.expect("MODE #mod ") == "MODE #mod cbtest1 +mt")
    #expect(
      try member.request("SAY #mod :hello") == [
        "ERR SAY MODERATED :#mod is moderated (+m): only its operators and voiced members write to it"
      ])
    #expect(try op.request("MODE #mod +v cbtest2") == ["OK MODE #mod +v cbtest2"])
    _ = try member.expect("MODE #mod cbtest1 +v cbtest2")
    #expect(try member.request("SAY #mod :hello").first?.hasPrefix("OK SAY ") == true)

    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest2"))
    try irc.send("NICK x\r\nUSER x 0 * :x\r\n")
    _ = try irc.expect(":\(Host.name) 353 ")
    try irc.send("NAMES #mod\r\n")
    #expect(
      try irc.expect(":\(Host.name) 353 ")
        == ":\(Host.name) 353 cbtest2 = #mod :@cbtest1 +cbtest2\r")

    _ = try op.expect("MSG #mod ")
    #expect(
      try op.request("KICK #mod cbtest2 :enough") == [
        "KICK #mod cbtest2 cbtest1 :enough", "OK KICK #mod cbtest2",
      ])
    #expect(try member.expect("KICK ") == "KICK #mod cbtest2 cbtest1 :enough")
    #expect(
      try irc.expect(":cbtest1!") == ":cbtest1!cbtest1@\(Host.name) KICK #mod cbtest2 :enough\r")

    try broker.restart()
    let again = try broker.connect(as: "cbtest2")
    #expect(try again.request("MODE #mod") == ["OK MODE #mod +mt"])
    #expect(try again.request("JOIN #mod") == ["OK JOIN #mod 1"])
    #expect(
      try again.request("TOPIC #mod :mine") == [
        "ERR TOPIC NOTOPERATOR :only an operator of #mod sets its topic (+t)"
      ])
    #expect(broker.journal.contains(##""type":"mode","room":"#mod","mode":"+m","user":"cbtest1""##))
  }
}

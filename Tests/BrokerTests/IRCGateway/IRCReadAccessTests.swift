import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// What IRC shows of a room someone may not read (chatbroker(7),
/// "Moderation" and "Private rooms"): a secret room (`+s`) to who is not
/// in it, and any room to a user banned from it, answer every command as
/// a room that does not exist, as RFC 2812 hides secret channels.
@Suite("IRC gateway: rooms one may not read, on virtual time")
struct IRCReadAccessTests {
  /// alice's #sec is +s with a topic and a line; bob is in it; dave is
  /// not, and has the history capabilities.
  func secretRoom() -> (irc: IRCHarness, alice: ConnectionID, bob: ConnectionID, dave: ConnectionID)
  {
    let irc = IRCHarness()
    irc.engine.users.names.insert("dave")
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #sec")
    irc.send(bob, "JOIN #sec")
    irc.send(alice, "MODE #sec +s")
    irc.send(alice, "TOPIC #sec :the walnut plan")
    irc.send(alice, "PRIVMSG #sec :the walnut is hidden")
    _ = irc.take(bob)
    let dave = irc.connect(
      "dave", caps: ["batch", "server-time", "message-tags", "draft/chathistory"])
    return (irc, alice, bob, dave)
  }

  static let commands = [
    "NAMES #R", "WHO #R", "WHO #R %cn", "TOPIC #R", "MODE #R", "MODE #R +b", "LIST", "LIST #R",
    "CHATHISTORY LATEST #R * 10", "KICK #R alice", "INVITE dave #R", "WHO * %cn",
  ]

  /// Each command's lines, with the room's name written `#R` and
  /// CHATHISTORY's batch (a new one each time) `B`.
  func answers(_ irc: IRCHarness, _ id: ConnectionID, _ room: String) -> [String] {
    Self.commands.flatMap { command in
      irc.send(id, command.replacingOccurrences(of: "#R", with: room)).map {
        "\(command) -> "
          + $0.replacingOccurrences(of: room, with: "#R").replacing(/BATCH ([+-])h[0-9]+/) {
            "BATCH \($0.output.1)B"
          }
      }
    }
  }

  @Test(
    "NAMES, WHO, TOPIC, MODE, LIST, CHATHISTORY, KICK and INVITE of a secret room answer an outsider as for no room"
  )
  func secretHidden() {
    let (irc, _, _, dave) = secretRoom()
    let missing = answers(irc, dave, "#nosuch")
    let hidden = answers(irc, dave, "#sec")
    #expect(hidden == missing)
    #expect(!hidden.contains { $0.contains("walnut") || $0.contains(" bob") })
  }

  @Test("LUSERS counts only the rooms the asker may see (254)")
  func lusers() {
    let (irc, alice, _, dave) = secretRoom()
    #expect(irc.send(dave, "LUSERS").contains(":host.test 254 dave 0 :channels formed"))
    #expect(irc.send(alice, "LUSERS").contains(":host.test 254 alice 1 :channels formed"))
  }

  @Test("a user banned from a room reads nothing of it over IRC either")
  func bannedHidden() {
    let (irc, alice, bob, _) = secretRoom()
    irc.send(alice, "MODE #sec -s")
    irc.send(alice, "MODE #sec +b bob")
    #expect(irc.take(bob).contains(":alice!alice@host.test KICK #sec bob :banned"))
    #expect(answers(irc, bob, "#sec") == answers(irc, bob, "#nosuch"))
  }
}

import Broker
import Foundation
import Posix
import TestSupport
import Testing

/// Private rooms through the real broker as real Unix users
/// (chatbroker(7), "Private rooms" and "Moderation"): group cbtestgrp
/// holds cbtest1 and cbtest2, not cbtest3, and the broker asks NSS.
/// Serialized: one test takes cbtest2 out of the group.
@Suite("Private rooms", .serialized)
struct PrivateRoomTests {
  /// cbtest1 makes #ops private to cbtestgrp, with a topic and a line,
  /// and #plan private to the invited; cbtest2 joins #ops.
  func privateRooms() throws -> (broker: BrokerProcess, creator: LineClient, member: LineClient) {
    try UnixUsers.ensureGroup()
    let broker = try BrokerProcess().start([])
    let creator = try broker.connect(as: "cbtest1")
    let member = try broker.connect(as: "cbtest2")
    #expect(try creator.request("JOIN #ops group=\(UnixUsers.group)") == ["OK JOIN #ops 1"])
    _ = try creator.request("TOPIC #ops :deploy at 18:00")
    _ = try creator.request("SAY #ops :the password is hunter2")
    #expect(try member.request("JOIN #ops").last == "OK JOIN #ops 2")
    _ = try creator.expect("JOIN #ops cbtest2")
    #expect(try creator.request("JOIN #plan invite") == ["OK JOIN #plan 1"])
    _ = try creator.request("SAY #plan :surprise party")
    return (broker, creator, member)
  }

  /// Each request's answer with the room's name written `#R`.
  func answers(_ client: LineClient, _ room: String, _ requests: [String]) throws -> [[String]] {
    try requests.map { request in
      try client.request(request.replacingOccurrences(of: "#R", with: room)).map {
        $0.replacingOccurrences(of: room, with: "#R")
      }
    }
  }

  @Test(
    "an outsider learns nothing of a private room over the line protocol: every answer is that of a room that does not exist, or one NOACCESS",
    UnixUsers.required)
  func outsiderOnLineProtocol() throws {
    let (broker, _, _) = try privateRooms()
    let outsider = try broker.connect(as: "cbtest3")
    let queries = [
      "ROOMS", "WHO #R", "HISTORY #R", "HISTORY #R 10 AFTER 1", "TOPIC #R", "CONVERSATIONS",
      "MARKREAD #R 1", "SCHEDULED #R", "ACCESS #R", "TOPIC #R :mine", "PART #R",
      "INVITE #R cbtest3", "ACCESS #R public",
    ]
    let nonexistent = try answers(outsider, "#nosuch", queries)
    #expect(nonexistent[0] == ["OK ROOMS 0"])
    #expect(try answers(outsider, "#ops", queries) == nonexistent)
    #expect(try answers(outsider, "#plan", queries) == nonexistent)
    let writes = [
      "JOIN #R", "JOIN #R invite", "SAY #R :hi", "ACTION #R waves", "SAYAT #R +1h :later",
      "SAYEVERY #R daily@09:00 :daily",
    ]
    let refused = try answers(outsider, "#ops", writes)
    #expect(
      refused.allSatisfy { $0.count == 1 && $0[0].hasSuffix(" NOACCESS :#R is not open to you") })
    #expect(try answers(outsider, "#plan", writes) == refused)
    #expect(try outsider.request("SCHEDULED") == ["OK SCHEDULED 0"])
    #expect(try outsider.request("ROOMS") == ["OK ROOMS 0"], "nothing was created")
  }

  @Test(
    "an outsider learns nothing over IRC: LIST, NAMES, WHO, WHOIS, TOPIC, MODE, CHATHISTORY answer as for no room; JOIN is 473 and PRIVMSG 404 for every private room",
    UnixUsers.required)
  func outsiderOnIRC() throws {
    let (broker, creator, member) = try privateRooms()
    defer { withExtendedLifetime(creator) {} }
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest3"))
    try irc.send("CAP LS 302\r\nNICK x\r\nUSER x 0 * :x\r\nCAP REQ :draft/chathistory batch\r\n")
    try irc.send("CAP END\r\n")
    _ = try irc.expect(":\(Host.name) 422 cbtest3 ")
    var serial = 0
    /// What one command gets, up to the PONG of a PING sent after it.
    func exchange(_ command: String) throws -> [String] {
      serial += 1
      try irc.send("\(command)\r\nPING :end\(serial)\r\n")
      var lines: [String] = []
      while let line = try irc.readLine(), !line.hasSuffix(" :end\(serial)\r") {
        lines.append(line)
      }
      return lines
    }
    func answers(_ room: String, _ commands: [String]) throws -> [[String]] {
      try commands.map { command in
        try exchange(command.replacingOccurrences(of: "#R", with: room)).map {
          $0.replacingOccurrences(of: room, with: "#R")
        }
      }
    }
    let queries = [
      "NAMES #R", "WHO #R", "TOPIC #R", "MODE #R", "INVITE cbtest3 #R", "MODE #R -i",
      "TOPIC #R :mine",
    ]
    let nonexistent = try answers("#nosuch", queries)
    #expect(nonexistent[3].first?.contains(" 403 cbtest3 #R ") == true)
    #expect(try answers("#ops", queries) == nonexistent)
    #expect(try answers("#plan", queries) == nonexistent)
    let everything =
      try exchange("LIST") + exchange("WHOIS cbtest1") + exchange("WHOIS cbtest2")
      + exchange(
        "CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2100-01-01T00:00:00.000Z 100"
      )
    for secret in ["#ops", "#plan", "hunter2", "deploy", "surprise"] {
      #expect(!everything.contains { $0.contains(secret) }, "\(secret) in \(everything)")
    }
    // Only the batch the request itself named, empty.
    let latest = try exchange("CHATHISTORY LATEST #ops * 10")
    #expect(latest.count == 2 && latest.allSatisfy { $0.contains(" BATCH ") }, "\(latest)")
    let joins = try answers("#ops", ["JOIN #R", "PRIVMSG #R :hello?"])
    #expect(joins[0] == [":\(Host.name) 473 cbtest3 #R :Cannot join channel (+i)\r"])
    #expect(joins[1].first?.hasPrefix(":\(Host.name) 404 cbtest3 #R ") == true)
    #expect(try answers("#plan", ["JOIN #R", "PRIVMSG #R :hello?"]) == joins)
    #expect(try member.request("PING quiet") == ["OK PING quiet"], "the room heard nothing")
  }

  @Test(
    "a member sees +i on IRC and PRIVATE in ROOMS; the creator invites cbtest3 over IRC, who then joins",
    UnixUsers.required)
  func memberAndInvite() throws {
    let (broker, creator, member) = try privateRooms()
    defer { withExtendedLifetime(creator) {} }
    let rooms = try member.request("ROOMS")
    #expect(rooms == ["ROOM #ops 2 PRIVATE :deploy at 18:00", "OK ROOMS 1"], "\(rooms)")
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest1"))
    try irc.send("NICK x\r\nUSER x 0 * :x\r\n")
    _ = try irc.expect(":\(Host.name) 422 cbtest1 ")
    try irc.send("MODE #ops\r\n")
    #expect(try irc.expect(":\(Host.name) 324 ") == ":\(Host.name) 324 cbtest1 #ops +i\r")
    // Over IRC a nick is a connected user: cbtest3 connects first.
    let invited = try broker.connect(as: "cbtest3")
    try irc.send("INVITE cbtest3 #plan\r\n")
    #expect(try irc.expect(":\(Host.name) 341 ") == ":\(Host.name) 341 cbtest1 cbtest3 #plan\r")
    #expect(try invited.expect("INVITE ") == "INVITE #plan cbtest3 cbtest1", "told, since 1.6")
    #expect(try invited.request("JOIN #plan") == ["OK JOIN #plan 2"])
    #expect(try invited.request("HISTORY #plan").first?.hasSuffix(" :surprise party") == true)
    #expect(try invited.request("JOIN #ops") == ["ERR JOIN NOACCESS :#ops is not open to you"])
  }

  @Test(
    "cbtest2 taken out of the group with gpasswd -d is refused at the next JOIN and removed; a restart keeps the room private",
    UnixUsers.required)
  func removedFromGroup() throws {
    let (broker, creator, member) = try privateRooms()
    defer { try? UnixUsers.ensureGroup() }
    try UnixUsers.removeFromGroup("cbtest2")
    #expect(
      try member.request("JOIN #ops") == [
        "PART #ops cbtest2", "ERR JOIN NOACCESS :#ops is not open to you",
      ])
    _ = try creator.expect("PART #ops cbtest2")
    #expect(try member.request("ROOMS") == ["OK ROOMS 0"])
    #expect(try member.request("CONVERSATIONS") == ["OK CONVERSATIONS 0"])
    #expect(try creator.request("WHO #ops") == ["MEMBER #ops cbtest1", "OK WHO #ops 1"])

    try broker.restart()
    let outsider = try broker.connect(as: "cbtest3")
    #expect(try outsider.request("ROOMS") == ["OK ROOMS 0"])
    let again = try broker.connect(as: "cbtest1")
    #expect(try again.request("ACCESS #ops") == ["OK ACCESS #ops group=\(UnixUsers.group)"])
    #expect(
      broker.journal.contains(
        ##""type":"access","room":"#ops","access":"group=cbtestgrp","user":"cbtest1""##))
    #expect(broker.journal.contains(##""type":"leave","user":"cbtest2","room":"#ops""##))
  }

  /// An IRC session of `user` registered with the history capabilities,
  /// and a function that sends a command and returns its lines up to the
  /// PONG of a PING sent after it.
  func ircSession(_ broker: BrokerProcess, as user: String) throws -> (
    client: LineClient, exchange: (String) throws -> [String]
  ) {
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: user))
    try irc.send("CAP LS 302\r\nNICK x\r\nUSER x 0 * :x\r\nCAP REQ :draft/chathistory batch\r\n")
    try irc.send("CAP END\r\n")
    _ = try irc.expect(":\(Host.name) 422 \(user) ")
    var serial = 0
    func exchange(_ command: String) throws -> [String] {
      serial += 1
      try irc.send("\(command)\r\nPING :end\(serial)\r\n")
      var lines: [String] = []
      while let line = try irc.readLine(), !line.hasSuffix(" :end\(serial)\r") {
        lines.append(line)
      }
      return lines
    }
    return (irc, exchange)
  }

  @Test(
    "cbtest2 taken out of the group while a session of theirs stays open: a new session, line or IRC, reads nothing of the room, and the open one leaves it",
    UnixUsers.required)
  func removedFromGroupWhileConnected() throws {
    let (broker, creator, member) = try privateRooms()
    defer { try? UnixUsers.ensureGroup() }
    try UnixUsers.removeFromGroup("cbtest2")
    #expect(
      try creator.request("SAY #ops :said after the removal").last?.hasPrefix("OK SAY") == true)
    let again = try broker.connect(as: "cbtest2")
    #expect(try again.request("ROOMS") == ["OK ROOMS 0"])
    #expect(try again.request("HISTORY #ops") == ["OK HISTORY #ops 0"])
    #expect(try again.request("SEARCH * removal") == ["OK SEARCH * 0"])
    #expect(try again.request("SEARCH * hunter2") == ["OK SEARCH * 0"])
    #expect(try again.request("WHO #ops") == ["OK WHO #ops 0"])
    let (irc, exchange) = try ircSession(broker, as: "cbtest2")
    defer { withExtendedLifetime(irc) {} }
    let latest = try exchange("CHATHISTORY LATEST #ops * 10")
    #expect(latest.count == 2 && latest.allSatisfy { $0.contains(" BATCH ") }, "\(latest)")
    #expect(try member.expect("PART #ops cbtest2") == "PART #ops cbtest2")
  }

  @Test(
    "cbtest3 kicked from an invite-only room is not let back in by chatsh reconnecting after a restart (real time)",
    UnixUsers.required)
  func kickSurvivesReconnectRealTime() throws {
    let (broker, creator, _) = try privateRooms()
    #expect(try creator.request("INVITE #plan cbtest3").last == "OK INVITE #plan cbtest3")
    let command = AsUser.command(
      "cbtest3", [BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "tail", "#plan"],
      environment: ["NO_COLOR": "1"])
    let tail = try Running(command[0], Array(command.dropFirst()))
    try broker.waitForMember("cbtest3", in: "#plan")
    #expect(try creator.request("KICK #plan cbtest3 :out").last == "OK KICK #plan cbtest3")
    try broker.restart()
    try waitUntil(timeout: 20, "chatsh tail to reconnect or give up") {
      tail.err.current.contains("reconnected") || !tail.process.isRunning
    }
    // The restart closed cbtest1's session: nobody is in the room.
    let root = try broker.connect()
    #expect(try root.request("WHO #plan") == ["OK WHO #plan 0"], "\(tail.err.current)")
    #expect(tail.err.current.contains("#plan is not open to you"), "\(tail.err.current)")
    let kicked = try broker.connect(as: "cbtest3")
    #expect(try kicked.request("JOIN #plan") == ["ERR JOIN NOACCESS :#plan is not open to you"])
  }

  @Test(
    "a secret room and a room one is kicked and banned from show nothing on either door: SEARCH, WHO, NAMES, TOPIC, HISTORY, CHATHISTORY, and LUSERS counts only the rooms one may see",
    UnixUsers.required)
  func secretAndBanned() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let op = try broker.connect(as: "cbtest1")
    #expect(try op.request("JOIN #sec") == ["OK JOIN #sec 1"])
    #expect(try op.request("MODE #sec +s") == ["OK MODE #sec +s"])
    _ = try op.request("TOPIC #sec :the walnut plan")
    _ = try op.request("SAY #sec :the walnut is in the shed")
    _ = try op.request("JOIN #plan invite")
    _ = try op.request("SAY #plan :the walnut is in the cellar")
    _ = try op.request("JOIN #pub")
    _ = try op.request("INVITE #plan cbtest3")
    let outsider = try broker.connect(as: "cbtest3")
    #expect(try outsider.request("JOIN #plan").last == "OK JOIN #plan 2")
    _ = try op.expect("JOIN #plan cbtest3")
    #expect(try op.request("KICK #plan cbtest3").last == "OK KICK #plan cbtest3")
    #expect(try op.request("MODE #plan +b cbtest3") == ["OK MODE #plan +b cbtest3!*@*"])
    _ = try outsider.expect("KICK #plan cbtest3 cbtest1")

    #expect(try outsider.request("SEARCH * walnut") == ["OK SEARCH * 0"])
    for room in ["#sec", "#plan"] {
      #expect(try outsider.request("WHO \(room)") == ["OK WHO \(room) 0"])
      #expect(try outsider.request("TOPIC \(room)") == ["OK TOPIC \(room)"])
      #expect(try outsider.request("HISTORY \(room)") == ["OK HISTORY \(room) 0"])
    }
    #expect(try outsider.request("ROOMS") == ["ROOM #pub 1", "OK ROOMS 1"])

    let (irc, exchange) = try ircSession(broker, as: "cbtest3")
    defer { withExtendedLifetime(irc) {} }
    let (opIRC, opExchange) = try ircSession(broker, as: "cbtest1")
    defer { withExtendedLifetime(opIRC) {} }
    #expect(try exchange("LUSERS").contains { $0.contains(" 254 cbtest3 1 :") })
    #expect(try opExchange("LUSERS").contains { $0.contains(" 254 cbtest1 3 :") })
    for room in ["#sec", "#plan"] {
      let seen =
        try exchange("NAMES \(room)") + exchange("WHO \(room)") + exchange("TOPIC \(room)")
        + exchange("LIST") + exchange("CHATHISTORY LATEST \(room) * 10")
      #expect(
        !seen.contains { $0.contains("walnut") || $0.contains("cbtest1") || $0.contains(" 332 ") },
        "\(seen)")
    }
  }

  @Test(
    "the daemon's group directory asks NSS: primary and supplementary groups, and a removal at once",
    UnixUsers.required)
  func systemGroups() throws {
    try UnixUsers.ensureGroup()
    defer { try? UnixUsers.ensureGroup() }
    let groups = SystemGroups()
    #expect(groups.groups(of: "cbtest1").isSuperset(of: ["cbtest1", UnixUsers.group]))
    #expect(!groups.groups(of: "cbtest3").contains(UnixUsers.group))
    #expect(groups.groups(of: "cbtest3").contains("cbtest3"), "the primary group")
    #expect(groups.groups(of: "nosuchuser-cb").isEmpty)
    try UnixUsers.removeFromGroup("cbtest2")
    #expect(!groups.groups(of: "cbtest2").contains(UnixUsers.group))
  }
}

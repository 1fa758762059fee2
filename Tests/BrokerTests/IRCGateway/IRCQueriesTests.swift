import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// What IRC clients ask of the server about users and itself, as RFC 2812
/// and modern.ircdocs.horse answer it (chatbroker(7), "IRC").
@Suite("IRC gateway: USERHOST, ISON, LUSERS, WHO, WHOIS, WHOWAS, AWAY and server queries")
struct IRCQueriesTests {
  @Test("USERHOST answers 302 with each connected nick, + here and - away")
  func userhost() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    #expect(
      irc.send(alice, "USERHOST bob carol alice") == [
        ":host.test 302 alice :bob=+bob@host.test alice=+alice@host.test"
      ], "carol is not connected")
    irc.send(bob, "AWAY :lunch")
    #expect(irc.send(alice, "USERHOST BOB") == [":host.test 302 alice :bob=-bob@host.test"])
  }

  @Test("ISON answers 303 with the nicks that are connected")
  func ison() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    _ = irc.connect("bob")
    #expect(irc.send(alice, "ISON bob carol") == [":host.test 303 alice :bob"])
    #expect(irc.send(alice, "ISON :carol Bob") == [":host.test 303 alice :bob"])
  }

  @Test("LUSERS answers 251 to 255, 265 and 266, and they come in the welcome burst")
  func lusers() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let lines = irc.send(alice, "LUSERS")
    #expect(
      lines.map { $0.split(separator: " ")[1] } == [
        "251", "252", "253", "254", "255", "265", "266",
      ])
    #expect(lines[0] == ":host.test 251 alice :There are 1 users and 0 invisible on 1 servers")
    #expect(lines[4] == ":host.test 255 alice :I have 1 clients and 0 servers")
  }

  @Test("AWAY answers 306 and 305; a PRIVMSG to an away user gets 301, a NOTICE does not")
  func away() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    #expect(
      irc.send(bob, "AWAY :at lunch") == [":host.test 306 bob :You have been marked as being away"])
    #expect(irc.engine.engine.awayText("bob") == "at lunch", "held by the broker, per user")
    #expect(irc.send(alice, "PRIVMSG bob :hi").contains(":host.test 301 alice bob :at lunch"))
    #expect(!irc.send(alice, "NOTICE bob :hi").contains { $0.contains(" 301 ") })
    #expect(irc.send(alice, "WHOIS bob").contains(":host.test 301 alice bob :at lunch"))
    _ = irc.take(bob)
    #expect(
      irc.send(alice, "WHO bob") == [
        ":host.test 352 alice * bob host.test host.test bob G :0 bob",
        ":host.test 315 alice bob :End of /WHO list",
      ])
    #expect(
      irc.send(bob, "AWAY") == [":host.test 305 bob :You are no longer marked as being away"])
    #expect(!irc.send(alice, "WHOIS bob").contains { $0.contains(" 301 ") })
    _ = irc.take(bob)
    irc.send(bob, "AWAY :gone")
    irc.send(bob, "QUIT")
    #expect(irc.engine.engine.awayText("bob") == nil, "forgotten with the last session")
  }

  @Test("WHO of a connected nick answers 352 and 315 naming the mask as sent")
  func whoNick() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    _ = irc.connect("bob")
    #expect(
      irc.send(alice, "WHO Bob") == [
        ":host.test 352 alice * bob host.test host.test bob H :0 bob",
        ":host.test 315 alice Bob :End of /WHO list",
      ])
    #expect(irc.send(alice, "WHO carol") == [":host.test 315 alice carol :End of /WHO list"])
  }

  @Test("LIST with ELIST terms lists the rooms matching a mask, no ! mask, and every count")
  func listFilter() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob")
    irc.send(alice, "JOIN #chan1,#chan2,#other")
    irc.send(bob, "JOIN #chan2")
    func listed(_ line: String) -> [String] {
      irc.send(bob, line).filter { $0.contains(" 322 ") }.map {
        String($0.split(separator: " ")[3])
      }
    }
    #expect(listed("LIST") == ["#chan1", "#chan2", "#other"])
    #expect(listed("LIST *an1") == ["#chan1"])
    #expect(listed("LIST #c*n2,#other") == ["#chan2", "#other"])
    #expect(listed("LIST !#ch*") == ["#other"])
    #expect(listed("LIST >1") == ["#chan2"])
    #expect(listed("LIST <2,#ch*") == ["#chan1"])
    #expect(listed("LIST C>5") == ["#chan1", "#chan2", "#other"], "C and T are not offered")
    #expect(
      irc.send(bob, "LIST #nonexistent").map { $0.split(separator: " ")[1] } == ["321", "323"])
    #expect(irc.send(bob, "VERSION").contains { $0.contains(" ELIST=MNU ") })
  }

  @Test("HELP and HELPOP answer 704, 705 and 706 on a command, or on all; 524 for no command")
  func help() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(
      irc.send(alice, "HELP privmsg") == [
        ":host.test 704 alice PRIVMSG :PRIVMSG <#room|nick>[,...] :<text>: "
          + "say something to a room or a user",
        ":host.test 705 alice PRIVMSG :See chatbroker(7), section IRC.",
        ":host.test 706 alice PRIVMSG :End of /HELP",
      ])
    let all = irc.send(alice, "HELPOP")
    #expect(all.first?.hasPrefix(":host.test 704 alice * :") == true)
    #expect(all.dropFirst().dropLast().allSatisfy { $0.hasPrefix(":host.test 705 alice * :") })
    let listed = all.joined(separator: " ")
    #expect(
      listed.contains(" WHOIS ") && listed.contains(" CHATHISTORY ") && listed.contains(" HELP"))
    #expect(all.last == ":host.test 706 alice * :End of /HELP")
    #expect(
      irc.send(alice, "HELP nosuch") == [
        ":host.test 524 alice nosuch :No help for that subject: try HELP"
      ])
  }

  @Test("WHOIS of an unknown nick answers 401 and 318; WHOWAS 314 for a user, 406 for others")
  func whoisWhowas() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(
      irc.send(alice, "WHOIS nosuchnick") == [
        ":host.test 401 alice nosuchnick :No such nick",
        ":host.test 318 alice nosuchnick :End of /WHOIS list",
      ])
    #expect(
      irc.send(alice, "WHOWAS bob") == [
        ":host.test 314 alice bob bob host.test * :bob",
        ":host.test 312 alice bob host.test :chatbroker",
        ":host.test 369 alice bob :End of WHOWAS",
      ])
    let whowas = irc.send(alice, "WHOWAS nosuchnick")
    #expect(whowas.map { $0.split(separator: " ")[1] } == ["406", "369"])
    #expect(whowas[1] == ":host.test 369 alice nosuchnick :End of WHOWAS")
    #expect(irc.send(alice, "WHOWAS").first?.contains(" 431 ") == true)
  }

  @Test("nicks are case-insensitive everywhere, as CASEMAPPING=ascii says")
  func nickCase() {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["draft/chathistory", "batch"])
    let bob = irc.connect("bob")
    irc.send(alice, "PRIVMSG BOB :hello")
    #expect(irc.take(bob) == [":alice!alice@host.test PRIVMSG bob :hello"])
    let history = irc.send(alice, "CHATHISTORY LATEST Bob * 10")
    #expect(history.contains { $0.hasSuffix("PRIVMSG bob :hello") })
    #expect(irc.send(alice, "WHOIS BoB").first?.contains(" 311 alice bob ") == true)
  }

  @Test("a PRIVMSG to one's own nick is delivered to the session that sent it")
  func privmsgSelf() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(
      irc.send(alice, "PRIVMSG alice :note to self") == [
        ":alice!alice@host.test PRIVMSG alice :note to self"
      ])
  }

  @Test("PART of a room one is not in answers 442")
  func partNotOn() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let lines = irc.send(alice, "PART #nowhere")
    #expect(lines.count == 1)
    #expect(lines.first?.hasPrefix(":host.test 442 alice #nowhere :") == true)
  }

  @Test("PING without a token answers 409, an unknown CAP subcommand 410, an empty PRIVMSG 412")
  func errors() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(irc.send(alice, "PING") == [":host.test 409 alice :No origin specified"])
    #expect(
      irc.send(alice, "CAP NOTACOMMAND").first?.hasPrefix(":host.test 410 alice NOTACOMMAND ")
        == true)
    #expect(irc.send(alice, "PRIVMSG #ops :") == [":host.test 412 alice :No text to send"])
    #expect(
      irc.send(alice, "NAMES invalid") == [":host.test 366 alice invalid :End of /NAMES list"])
    #expect(
      irc.send(alice, "NICK other").first
        == ":host.test 433 alice other :Your nick is your login name, alice, and cannot be changed")
  }

  @Test("TIME, VERSION, INFO, ADMIN and MOTD are answered")
  func serverQueries() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(irc.send(alice, "TIME").first?.hasPrefix(":host.test 391 alice host.test ") == true)
    let version = irc.send(alice, "VERSION")
    #expect(version.first?.hasPrefix(":host.test 351 alice chatbroker-") == true)
    #expect(version.dropFirst().allSatisfy { $0.contains(" 005 ") })
    #expect(irc.send(alice, "INFO").last == ":host.test 374 alice :End of INFO list")
    #expect(
      irc.send(alice, "ADMIN").map { $0.split(separator: " ")[1] } == ["256", "257", "258", "259"])
    #expect(irc.send(alice, "MOTD") == [":host.test 422 alice :MOTD File is missing"])
  }

  @Test("the RFC 2812 commands not offered answer the numeric that says why, not 421")
  func notOffered() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let expected = [
      "OPER a b": "491", "KILL bob :x": "481", "WALLOPS :x": "481",
      "SUMMON bob": "445", "USERS": "446", "STATS u": "219",
      "LINKS": "364", "SQUERY x :y": "408", "TRACE": "262", "DIE": "481",
    ]
    for (line, code) in expected {
      #expect(irc.send(alice, line).first?.split(separator: " ")[1] == Substring(code), "\(line)")
    }
    #expect(irc.send(alice, "FROBNICATE").first?.contains(" 421 ") == true)
  }
}

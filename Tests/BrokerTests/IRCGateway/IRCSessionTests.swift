import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

@Suite("IRC gateway: registration, rooms and messages on virtual time")
struct IRCSessionTests {
  @Test("registration waits for CAP END, and the nick is always the login name")
  func registration() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    #expect(
      irc.send(alice, "CAP LS 302").first?.hasPrefix(":host.test CAP * LS :server-time") == true)
    #expect(
      irc.send(alice, "CAP REQ :server-time echo-message") == [
        ":host.test CAP * ACK :server-time echo-message"
      ])
    #expect(irc.send(alice, "NICK queen").isEmpty)
    #expect(irc.send(alice, "USER q 0 * :Queen").isEmpty, "registration waits for CAP END")
    let burst = irc.send(alice, "CAP END")
    #expect(burst.first == ":host.test 001 alice :Welcome to chatbroker on host.test, alice")
    let isupport = burst.first { $0.contains(" 005 ") } ?? ""
    for token in ["CHANTYPES=#", "CASEMAPPING=ascii", "NETWORK=host.test", "CHATHISTORY="] {
      #expect(isupport.contains(token))
    }
    #expect(burst.contains { $0.contains(" 251 alice ") })
    #expect(burst.last == ":host.test 422 alice :MOTD File is missing")
    #expect(irc.send(alice, "NICK bob").first?.hasPrefix(":host.test 433 alice bob :") == true)
    #expect(irc.send(alice, "NICK alice").isEmpty)
    #expect(irc.session(alice).capabilities.contains(.echoMessage))
  }

  @Test("NICK of a word no nick may be answers 432 and does not count toward registration")
  func erroneousNick() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    #expect(irc.send(alice, "NICK *") == [":host.test 432 * * :Erroneous nickname"])
    #expect(irc.send(alice, "USER a 0 * :Alice").isEmpty, "no NICK yet")
    #expect(irc.send(alice, "NICK #a") == [":host.test 432 * #a :Erroneous nickname"])
    #expect(irc.send(alice, "NICK alice").first?.contains(" 001 alice ") == true)
    _ = irc.take(alice)
    #expect(irc.send(alice, "NICK a!b") == [":host.test 432 alice a!b :Erroneous nickname"])
    #expect(IRCSession.isNickname("sched|bot") && IRCSession.isNickname("a-b[c]"))
  }

  @Test("a client without CAP registers on NICK and USER; unknown capabilities are refused whole")
  func withoutCap() {
    let irc = IRCHarness()
    let bob = irc.open("bob")
    #expect(irc.send(bob, "JOIN #a").first?.contains(" 451 ") == true)
    irc.send(bob, "NICK bob")
    #expect(irc.send(bob, "USER bob 0 * :Bob").first?.contains(" 001 bob ") == true)
    #expect(
      irc.send(bob, "CAP REQ :server-time sasl") == [":host.test CAP bob NAK :server-time sasl"])
    #expect(irc.send(bob, "PING :abc") == [":host.test PONG host.test :abc"])
  }

  @Test("JOIN answers the echo, NAMES and the room's last lines with their time in the text")
  func joinWithBacklog() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.clock.set("2026-11-30T16:50:00.000Z")
    irc.engine.send(carol, "JOIN #ops")
    irc.engine.clock.set("2026-11-30T16:52:00.000Z")
    irc.engine.send(carol, "SAY #ops deploy at six")
    let alice = irc.connect("alice")
    let lines = irc.send(alice, "JOIN #Ops")
    #expect(
      lines == [
        ":alice!alice@host.test JOIN #ops",
        ":host.test 353 alice = #ops :alice @carol",
        ":host.test 366 alice #ops :End of /NAMES list",
        ":carol!carol@host.test PRIVMSG #ops :[17:52] deploy at six",
      ])
    #expect(irc.engine.output.take(carol) == ["JOIN #ops alice"])
    #expect(
      irc.send(alice, "MODE #ops") == [
        ":host.test 324 alice #ops +", ":host.test 329 alice #ops 1796057400",
      ], "329 is the room's creation time, in seconds since the epoch")
    #expect(irc.send(alice, "MODE #nowhere") == [":host.test 403 alice #nowhere :No such channel"])
    #expect(
      irc.send(alice, "MODE #ops b") == [":host.test 368 alice #ops :End of channel ban list"])
    #expect(irc.send(alice, "TOPIC #ops") == [":host.test 331 alice #ops :No topic is set"])
    #expect(
      irc.send(alice, "WHO #ops").suffix(1) == [":host.test 315 alice #ops :End of /WHO list"])
  }

  @Test("with server-time the backlog carries time tags, and msgid comes with message-tags")
  func backlogTags() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #ops")
    let id = okID(irc.engine.send(carol, "SAY #ops hello"))
    let alice = irc.connect("alice", caps: ["server-time", "message-tags"])
    let lines = irc.send(alice, "JOIN #ops")
    #expect(
      lines.last
        == "@time=2026-11-30T17:00:00.000Z;msgid=\(id) :carol!carol@host.test PRIVMSG #ops :hello")
  }

  @Test("a PRIVMSG from IRC reaches line-protocol users as MSG, and back, same id and time")
  func crossesBothWays() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    let alice = irc.connect("alice", caps: ["server-time", "message-tags", "echo-message"])
    irc.send(alice, "JOIN #ops")
    _ = irc.engine.output.take(bob)
    let echo = irc.send(alice, "PRIVMSG #ops :hi bob")
    let msg = irc.engine.output.take(bob)
    #expect(msg.count == 1)
    let words = msg.first?.split(separator: " ").map(String.init) ?? []
    #expect(words.prefix(2) == ["MSG", "#ops"] && msg.first?.hasSuffix(" alice :hi bob") == true)
    #expect(
      echo == ["@time=\(words[3]);msgid=\(words[2]) :alice!alice@host.test PRIVMSG #ops :hi bob"])

    let reply = irc.engine.send(bob, "SAY #ops :hello alice")
    let lines = irc.take(alice)
    #expect(
      lines == [
        "@time=\(reply.last!.split(separator: " ")[3]);msgid=\(okID(reply)) "
          + ":bob!bob@host.test PRIVMSG #ops :hello alice"
      ])
  }

  @Test("no tag is sent to a client that has not negotiated it, and no echo without echo-message")
  func noTagsUnasked() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let bob = irc.connect("bob", caps: ["server-time"])
    irc.send(alice, "JOIN #ops")
    irc.send(bob, "JOIN #ops")
    _ = irc.take(alice)
    #expect(irc.send(alice, "PRIVMSG #ops :plain").isEmpty)
    #expect(
      irc.take(bob) == ["@time=2026-11-30T17:00:00.000Z :alice!alice@host.test PRIVMSG #ops :plain"]
    )
    irc.send(bob, "PRIVMSG #ops :back")
    #expect(irc.take(alice) == [":bob!bob@host.test PRIVMSG #ops :back"])
  }

  @Test("direct messages: PRIVMSG to a nick is SAY @user, and the answer comes to the nick")
  func directMessages() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    let alice = irc.connect("alice")
    #expect(irc.send(alice, "PRIVMSG bob :psst").isEmpty)
    #expect(irc.engine.output.take(bob).first?.hasSuffix(" alice :psst") == true)
    irc.engine.send(bob, "SAY @alice :what")
    #expect(irc.take(alice) == [":bob!bob@host.test PRIVMSG alice :what"])
    #expect(
      irc.send(alice, "PRIVMSG nobody :x").first?.hasPrefix(":host.test 401 alice nobody :") == true
    )
    #expect(irc.send(alice, "WHOIS bob").first == ":host.test 311 alice bob bob host.test * :bob")
    #expect(irc.send(alice, "WHOIS nobody").first == ":host.test 401 alice nobody :No such nick")
  }

  @Test("texts longer than an IRC line are split at UTF-8 boundaries, each line at most 512 bytes")
  func splitsLongTexts() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    let text = String(repeating: "é日", count: 300)
    irc.engine.send(bob, "SAY #ops " + text)
    let lines = irc.take(alice)
    #expect(lines.count == 4)
    #expect(lines.allSatisfy { $0.utf8.count + 2 <= 512 })
    let prefix = ":bob!bob@host.test PRIVMSG #ops :"
    #expect(lines.map { String($0.dropFirst(prefix.count)) }.joined() == text)
  }

  @Test("PART, QUIT and formatting: others see PART, QUIT closes with ERROR, colours are dropped")
  func partQuitFormatting() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    _ = irc.engine.output.take(bob)
    irc.send(alice, "PRIVMSG #ops :\u{02}bold\u{02} \u{03}4,1red\u{03}")
    #expect(irc.engine.output.take(bob).first?.hasSuffix(" alice :bold red") == true)
    irc.send(alice, "PRIVMSG #ops :\u{01}ACTION waves\u{01}")
    #expect(irc.engine.output.take(bob).first?.hasSuffix(" alice ACTION :waves") == true)
    #expect(irc.send(alice, "PART #ops") == [":alice!alice@host.test PART #ops"])
    #expect(irc.engine.output.take(bob) == ["PART #ops alice"])
    irc.send(alice, "JOIN #ops")
    #expect(irc.send(alice, "QUIT :bye").last?.hasPrefix("ERROR :Closing link") == true)
    #expect(irc.engine.output.closed.contains(alice))
  }

  @Test("a line that is not UTF-8 gets FAIL INVALID_UTF8 and a NOTICE; the session goes on")
  func badUTF8() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let lines = irc.session(alice).refuse(.badUTF8).map { action -> String in
      guard case .reply(let bytes, _) = action else { return "" }
      return String(decoding: bytes, as: UTF8.self)
    }
    #expect(lines.count == 2)
    #expect(
      lines.first?.hasPrefix(
        ":host.test FAIL * INVALID_UTF8 :Your line was not valid UTF-8") == true)
    #expect(
      lines.last?.hasPrefix(":host.test NOTICE alice :Your line was not valid UTF-8") == true)
    #expect(irc.send(alice, "PING x") == [":host.test PONG host.test :x"])
    #expect(irc.send(alice, "VERSION").contains { $0.contains(" UTF8ONLY ") })
  }

  @Test("the service nick schedules, lists and cancels; the line comes at its time")
  func serviceNick() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    let accepted = irc.send(alice, "PRIVMSG sched|bot :at 18:30 #ops standup now")
    #expect(accepted.count == 1)
    // In the broker's local time (Europe/Berlin here), not protocol words.
    #expect(
      accepted.first?.hasPrefix(":sched|bot!service@host.test NOTICE alice :scheduled ")
        == true)
    #expect(accepted.first?.hasSuffix(": Mon 30 Nov 2026 18:30 +01:00") == true, "\(accepted)")
    let listed = irc.send(alice, "PRIVMSG sched|bot :list")
    #expect(
      listed.count == 2 && listed[0].contains(" to #ops Mon 30 Nov 2026 18:30 +01:00: standup now"))
    irc.engine.advance(to: "2026-11-30T17:30:00.000Z")
    #expect(irc.take(alice) == [":alice!alice@host.test PRIVMSG #ops :standup now"])
    let raw = irc.send(alice, "SAYAT #ops +10m :later")
    #expect(raw.first?.contains(":scheduled ") == true)
    let help = irc.send(alice, "PRIVMSG sched|bot :help")
    #expect(help.count == 11)
  }

  @Test("the service nick starts, lists, edits, reschedules and skips series, in local time")
  func serviceSeries() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #ops")
    let notice = ":sched|bot!service@host.test NOTICE alice :"
    let started = irc.send(alice, "PRIVMSG sched|bot :every weekdays@09:00 #ops stand-up")
    #expect(
      started == [
        notice + "series 1 (weekdays@09:00/Europe/Berlin) starts Tue 1 Dec 2026 09:00 +01:00"
      ])
    #expect(
      irc.send(alice, "PRIVMSG sched|bot :next 1 2") == [
        notice + "1 to #ops Tue 1 Dec 2026 09:00 +01:00, weekdays@09:00/Europe/Berlin: stand-up",
        notice + "1 to #ops Wed 2 Dec 2026 09:00 +01:00, weekdays@09:00/Europe/Berlin: stand-up",
        notice + "2 pending",
      ])
    let edited = irc.send(alice, "PRIVMSG sched|bot :edit 1 stand-up in room 2")
    #expect(edited.last == notice + "1 changed; due Tue 1 Dec 2026 09:00 +01:00", "\(edited)")
    let skipped = irc.send(alice, "PRIVMSG sched|bot :skip 1")
    #expect(skipped.last == notice + "1 moved: now due Wed 2 Dec 2026 09:00 +01:00", "\(skipped)")
    let moved = irc.send(alice, "PRIVMSG sched|bot :reschedule 1 monthly:last-fri@17:00")
    #expect(moved.last == notice + "1 moved: now due Fri 25 Dec 2026 17:00 +01:00", "\(moved)")
    let unknown = irc.send(alice, "PRIVMSG sched|bot :skip ABC")
    #expect(unknown.count == 1 && unknown[0].contains("series ABC"), "\(unknown)")
    let refused = irc.send(alice, "PRIVMSG sched|bot :every every:30s #ops too often")
    #expect(refused.count == 1 && refused[0].contains("at least 1m"), "\(refused)")
    irc.send(alice, "PRIVMSG sched|bot :reschedule 1 now")
    irc.engine.engine.timerFired()
    #expect(irc.take(alice).contains(":alice!alice@host.test PRIVMSG #ops :stand-up in room 2"))
  }

  @Test("CHATHISTORY LATEST and BEFORE answer in a batch, with msgid references")
  func chathistory() {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    let first = okID(irc.engine.send(bob, "SAY #ops one"))
    irc.engine.send(bob, "SAY #ops two")
    let alice = irc.connect(
      "alice", caps: ["batch", "server-time", "message-tags", "draft/chathistory"])
    let joined = irc.send(alice, "JOIN #ops")
    #expect(!joined.contains { $0.contains("PRIVMSG") }, "no backlog with chathistory")
    let latest = irc.send(alice, "CHATHISTORY LATEST #ops * 10")
    #expect(latest.first == ":host.test BATCH +h1 chathistory #ops")
    #expect(latest.count == 4 && latest[1].hasPrefix("@batch=h1;time="))
    #expect(latest[1].hasSuffix("PRIVMSG #ops :one") && latest[2].hasSuffix("PRIVMSG #ops :two"))
    #expect(latest.last == ":host.test BATCH -h1")
    let after = irc.send(alice, "CHATHISTORY AFTER #ops msgid=\(first) 10")
    #expect(after.count == 3 && after[1].hasSuffix(":two"))
  }
}

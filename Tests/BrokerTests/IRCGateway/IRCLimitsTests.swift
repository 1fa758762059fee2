import IRCProtocol
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// The IRC door's limits on virtual time (chatbroker(7), "IRC": several
/// targets, lines): every target is a request of its own, nothing a client
/// sent comes back raw, and every reply fits 512 bytes.
@Suite("IRC gateway: targets, line limits and what replies quote")
struct IRCLimitsTests {
  /// Every line fits IRC's 512 bytes without its tags (CR LF included)
  /// and holds no control character but in a relayed text.
  private func expectWellFormed(
    _ lines: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    for line in lines {
      var rest = Substring(line)
      if rest.hasPrefix("@"), let space = rest.firstIndex(of: " ") {
        rest = rest[rest.index(after: space)...]
      }
      #expect(
        rest.utf8.count + 2 <= 512, "\(rest.utf8.count + 2) bytes: \(line.prefix(80))",
        sourceLocation: sourceLocation)
      #expect(
        !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
        "a control character in \(line.debugDescription)", sourceLocation: sourceLocation)
    }
  }

  @Test("a JOIN of 25 rooms is 20 steps, one per room, and 407 names the 21st")
  func joinTargets() {
    let irc = IRCHarness(backlog: 0)
    let alice = irc.connect("alice")
    let rooms = (1...25).map { "#r\($0)" }
    let session = irc.session(alice)
    let first = session.receive("JOIN " + rooms.joined(separator: ","))
    #expect(first.filter { if case .request(.join, _) = $0 { true } else { false } }.count == 1)
    var steps = 0
    while session.nextStep() != nil { steps += 1 }
    #expect(steps == 20, "19 more rooms and the refusal of the rest")

    // The steps above were never carried out: another client joins.
    let bob = irc.connect("bob")
    let lines = irc.send(bob, "JOIN " + rooms.joined(separator: ","))
    #expect(lines.filter { $0.hasSuffix(" JOIN #r1") || $0.contains(" JOIN #r") }.count == 20)
    #expect(!lines.contains { $0.hasSuffix(" JOIN #r21") })
    #expect(lines.last?.hasPrefix(":host.test 407 bob #r21 :Too many targets") == true)
    expectWellFormed(lines)
  }

  @Test("a PRIVMSG to three targets reaches each, and 20 is the most one line sends")
  func privmsgTargets() {
    let irc = IRCHarness(backlog: 0)
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #a")
    irc.engine.send(carol, "JOIN #b")
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #a,#b")
    _ = irc.engine.output.take(carol)
    irc.send(alice, "PRIVMSG #a,#b,carol :hello all")
    let got = irc.engine.output.take(carol)
    #expect(got.filter { $0.hasSuffix(" alice :hello all") }.count == 3, "\(got)")
    let many = (1...30).map { _ in "carol" }.joined(separator: ",")
    let lines = irc.send(alice, "PRIVMSG \(many) :again")
    #expect(irc.engine.output.take(carol).count == 20)
    #expect(lines.last?.hasPrefix(":host.test 407 alice carol :Too many targets") == true)
  }

  @Test("NAMES of a name that is no room answers 366; PRIVMSG without text 412, without target 411")
  func namesAndEmptyMessages() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    #expect(
      irc.send(alice, "NAMES invalid") == [":host.test 366 alice invalid :End of /NAMES list"])
    #expect(irc.send(alice, "PRIVMSG #a :") == [":host.test 412 alice :No text to send"])
    #expect(irc.send(alice, "PRIVMSG") == [":host.test 411 alice :No recipient given (PRIVMSG)"])
    #expect(
      irc.send(alice, "CAP NOTACOMMAND") == [
        ":host.test 410 alice NOTACOMMAND :Unknown CAP subcommand"
      ])
  }

  @Test(
    "a CR or escape sent in PING, NICK, an unknown command, a channel or WHO never comes back raw",
    arguments: [
      "PING :x\r:root!root@h PRIVMSG cbbob :forged",
      "NICK x\r:root!root@h",
      "FOO\u{1B}[31m bar",
      "JOIN #a\r:root!root@h",
      "WHO x\ry",
      "PART #\u{7F}x",
      "MODE #x\u{1B}]0;title\u{07}",
      "TOPIC #x\u{85}y",
      "CHATHISTORY LATEST #a\rb * 10",
    ])
  func nothingEchoedRaw(line: String) {
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["draft/chathistory", "batch"])
    let lines = irc.send(alice, line)
    #expect(!lines.isEmpty, "every line is answered")
    #expect(lines.count == 1 || !line.hasPrefix("PING"), "one PONG, no second line: \(lines)")
    expectWellFormed(lines)
  }

  @Test("a PING token of 500 bytes comes back cut to fit, never over 512 bytes")
  func longEcho() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    let lines = irc.send(alice, "PING :" + String(repeating: "é", count: 250))
    #expect(lines.count == 1 && lines[0].hasPrefix(":host.test PONG host.test :éé"))
    expectWellFormed(lines)
    expectWellFormed(irc.send(alice, String(repeating: "X", count: 505)))
  }

  @Test("CAP REQ too long to echo is refused with NAK in one line; CAP LS fits")
  func capabilityLines() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    let ls = irc.send(alice, "CAP LS 302")
    expectWellFormed(ls)
    #expect(ls.last?.contains(" LS :") == true)
    // 493 bytes: the line fits 512, its echo would not.
    let asked = Array(repeating: "echo-message", count: 38).joined(separator: " ")
    let nak = irc.send(alice, "CAP REQ :" + asked)
    #expect(nak.count == 1 && nak[0].hasPrefix(":host.test CAP * NAK :echo-message"))
    expectWellFormed(nak)
    #expect(!irc.session(alice).capabilities.contains(.echoMessage))
    #expect(irc.send(alice, "CAP REQ :echo-message") == [":host.test CAP * ACK :echo-message"])
  }

  @Test("a line over 512 bytes without tags, or with more than 4096 of tags, is refused with 417")
  func inputLimits() {
    let irc = IRCHarness()
    let carol = irc.engine.connect("carol")
    irc.engine.send(carol, "JOIN #a")
    let alice = irc.connect("alice")
    let text = String(repeating: "a", count: 4400)
    let lines = irc.send(alice, "PRIVMSG #a :" + text)
    #expect(lines.count == 1 && lines[0].hasPrefix(":host.test 417 alice :Input line was too long"))
    #expect(irc.engine.output.take(carol).isEmpty, "nothing was sent")
    let fits = "PRIVMSG #a :" + String(repeating: "b", count: 510 - 12)
    #expect(irc.send(alice, fits).isEmpty)
    #expect(irc.engine.output.take(carol).count == 1, "510 bytes and CR LF are allowed")
    let tags = "@+x=" + String(repeating: "t", count: 4100) + " PRIVMSG #a :tagged"
    #expect(irc.send(alice, tags).first?.contains(" 417 alice ") == true)
    #expect(
      irc.session(alice).refuse(.tooLong).first?.bytes.starts(with: Array(":host.test 417 ".utf8))
        == true)
  }

  @Test("a CHATHISTORY limit of 20 digits is 1000, as 100000 is; 0 and letters are refused")
  func historyLimit() {
    #expect(IRCSession.historyLimit("99999999999999999999") == 1000)
    #expect(IRCSession.historyLimit("100000") == 1000)
    #expect(IRCSession.historyLimit("7") == 7)
    #expect(IRCSession.historyLimit("0") == nil)
    #expect(IRCSession.historyLimit("-5") == nil)
    #expect(IRCSession.historyLimit("1e3") == nil)
    let irc = IRCHarness()
    let alice = irc.connect("alice", caps: ["draft/chathistory", "batch"])
    irc.send(alice, "JOIN #a")
    irc.send(alice, "PRIVMSG #a :one")
    let lines = irc.send(alice, "CHATHISTORY LATEST #a * 99999999999999999999")
    #expect(lines.count == 3, "batch start, the line, batch end: \(lines)")
    #expect(lines.contains { $0.hasSuffix("PRIVMSG #a :one") })
  }

  @Test("LIST answers every room, 1000 a step, and one 323 at the end")
  func listEveryRoom() {
    var limits = Limits()
    limits.newRoomsPerUserPerMinute = 10_000
    let irc = IRCHarness(EngineHarness(limits: limits), backlog: 0)
    let carol = irc.engine.connect("carol")
    for index in 0..<2500 { irc.engine.send(carol, "JOIN #room\(index)") }
    let alice = irc.connect("alice")
    let session = irc.session(alice)
    _ = session.receive("LIST")
    #expect(!session.hasPendingSteps, "the next page is asked once the first is answered")
    let lines = irc.send(alice, "LIST")
    #expect(lines.filter { $0.contains(" 322 alice #room") }.count == 2500)
    #expect(lines.filter { $0.contains(" 323 alice ") }.count == 1)
    #expect(lines.last == ":host.test 323 alice :End of /LIST")
  }

  @Test("a CHATHISTORY of 250 synced lines is encoded 50 a step, in order, each by its own author")
  func chathistoryPages() {
    let irc = IRCHarness(backlog: 0)
    let carol = irc.engine.connect("carol")
    let bob = irc.engine.connect("bob")
    irc.engine.send(carol, "JOIN #a")
    irc.engine.send(bob, "JOIN #a")
    for index in 0..<250 { irc.engine.send(index % 2 == 0 ? carol : bob, "SAY #a line \(index)") }
    let alice = irc.connect("alice", caps: ["draft/chathistory", "batch"])
    let session = irc.session(alice)
    // As the server encodes a list that shows only synced messages.
    irc.defersLines = true
    irc.perform(session.receive("CHATHISTORY LATEST #a * 1000"), for: alice)
    #expect(irc.take(alice).count == 1, "the batch start; its lines wait for steps")
    var pages: [[String]] = []
    while let step = session.nextStep() {
      for case .reply(let bytes, _) in step {
        irc.engine.output.encoded[alice, default: []] += bytes
      }
      pages.append(irc.take(alice))
    }
    #expect(pages.map(\.count) == [50, 50, 50, 50, 51], "the last page ends the batch")
    let lines = pages.joined().filter { $0.contains(" PRIVMSG ") }
    #expect(lines.count == 250)
    for (index, line) in lines.enumerated() {
      let author = index % 2 == 0 ? "carol" : "bob"
      #expect(line.hasSuffix(":\(author)!\(author)@host.test PRIVMSG #a :line \(index)"), "\(line)")
    }
    #expect(pages.last?.last == ":host.test BATCH -h1")
  }

  @Test("005 carries TARGMAX and MAXTARGETS, at most 13 tokens a line")
  func isupport() {
    let irc = IRCHarness()
    let alice = irc.open("alice")
    irc.send(alice, "NICK alice")
    let burst = irc.send(alice, "USER a 0 * :A")
    let isupport = burst.filter { $0.contains(" 005 alice ") }
    #expect(isupport.joined().contains("TARGMAX=JOIN:20,PART:20,NAMES:20,PRIVMSG:20,NOTICE:20"))
    #expect(isupport.joined().contains("MAXTARGETS=20"))
    for line in isupport {
      let tokens = line.split(separator: " ").dropFirst(3).prefix { !$0.hasPrefix(":") }
      #expect(tokens.count <= 13)
    }
    expectWellFormed(burst)
  }

  @Test(
    "a blank text sent by the IRC door (SAYAT, the service nick, PRIVMSG) is refused, never journaled",
    arguments: ["SAYAT #a +1h : ", "PRIVMSG sched|bot :at +1h #a \t", "PRIVMSG #a :\t"])
  func blankTexts(line: String) {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    irc.send(alice, "JOIN #a")
    let before = irc.engine.journal.records.count
    let lines = irc.send(alice, line)
    #expect(!lines.isEmpty, "told, not silently dropped")
    #expect(irc.engine.journal.records.count == before, "\(lines)")
  }

  @Test("a series whose interval passes the horizon is TOOFAR, not PAST")
  func hugeInterval() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let reply = harness.send(alice, "SAYEVERY #r every:999999999999d x")
    #expect(reply.first?.hasPrefix("ERR SAYEVERY TOOFAR :") == true, "\(reply)")
    #expect(
      harness.send(alice, "SAYEVERY #r every:367d x").first?.hasPrefix("ERR SAYEVERY TOOFAR")
        == true)
    #expect(harness.send(alice, "SAYEVERY #r every:300d x").first?.hasPrefix("OK SAYEVERY") == true)
  }
}

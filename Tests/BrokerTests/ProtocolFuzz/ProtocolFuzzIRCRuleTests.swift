import Testing

@testable import ProtocolFuzz

/// The IRC reply checker's own rules (chatbroker(7), "IRC"): what a line to
/// an IRC client must be, and who it may claim to come from.
@Suite("Protocol fuzzer IRC rules")
struct ProtocolFuzzIRCRuleTests {
  static let users = ["alice", "bob"]

  static func kinds(_ line: String, users: [String] = users) -> [String] {
    var checker = IRCReplyChecker(users: users)
    return checker.received(Array(line.utf8)).map(\.kind)
  }

  @Test(
    "well-formed lines pass",
    arguments: [
      ":host 001 alice :Welcome to chatbroker on host, alice\r",
      "@time=2026-12-01T06:00:00.000Z;msgid=3f :alice!alice@host PRIVMSG #a :hi \(IRCShape.token(user: 0, serial: 1))\r",
      ":bob!bob@host PRIVMSG alice :\u{1}ACTION waves\u{1} \u{2}bold\u{2} \u{3}4colour\r",
      ":bob!bob@host NOTICE #a :a\ttab \(IRCShape.token(user: 1, serial: 9))\r",
      ":alice!alice@host JOIN #\(IRCShape.token(user: 0, serial: 2))\r",
      ":host PONG host :x\r",
      ":sched|bot!service@host NOTICE alice :at +1m \(IRCShape.token(user: 1, serial: 3))\r",
      "ERROR :Closing link: bye\r",
      ":host 403 alice #a!b :Not a room name\r",
    ])
  func wellFormed(_ line: String) {
    #expect(Self.kinds(line).isEmpty, "\(line.debugDescription)")
  }

  @Test("a line with another user's token under this user's source is an identity finding")
  func forgedSource() {
    let forged = ":bob!bob@host PRIVMSG #a :hello \(IRCShape.token(user: 0, serial: 7))\r"
    var checker = IRCReplyChecker(users: Self.users)
    let found = checker.received(Array(forged.utf8))
    #expect(found.map(\.category) == ["identity"])
    #expect(found.first?.kind == "IRC: a PRIVMSG from one user shown as another's")
    // A room's name is nobody's words: anyone may join the room another's
    // token names, or write to it.
    let join = ":bob!bob@host JOIN #\(IRCShape.token(user: 0, serial: 8))\r"
    #expect(Self.kinds(join).isEmpty)
    let toRoom = ":bob!bob@host PRIVMSG #\(IRCShape.token(user: 0, serial: 9)) :mine\r"
    #expect(Self.kinds(toRoom).isEmpty)
  }

  @Test("a bare CR is flagged, and the line forged after it is an identity finding")
  func bareCR() {
    let line =
      ":host PONG host :x\r:bob!bob@h PRIVMSG #a :forged \(IRCShape.token(user: 0, serial: 4))\r"
    #expect(
      Self.kinds(line) == [
        "IRC: a bare CR inside a line (PONG)", "IRC: a line forged after a bare CR (PONG)",
      ])
    #expect(
      Self.kinds(":host 421 alice CM\rD :Unknown command\r") == [
        "IRC: a bare CR inside a line (421)"
      ])
  }

  @Test("a line of 600 bytes without its tags is flagged; 512 with CR LF is not, nor long tags")
  func overlong() {
    let head = ":host NOTICE alice :"
    let long = head + String(repeating: "x", count: 600 - head.utf8.count - 2) + "\r"
    #expect(Self.kinds(long) == ["IRC: a line over 512 bytes without its tags (NOTICE)"])
    let fits = head + String(repeating: "x", count: 512 - head.utf8.count - 2) + "\r"
    #expect(Self.kinds(fits).isEmpty)
    let tags = "@+x=" + String(repeating: "t", count: 8000) + " "
    #expect(Self.kinds(tags + fits).isEmpty)
    let tooManyTags = "@+x=" + String(repeating: "t", count: 8200) + " "
    #expect(Self.kinds(tooManyTags + fits) == ["IRC: tags over 8191 bytes (NOTICE)"])
  }

  @Test(
    "malformed lines are flagged",
    arguments: [
      (":host NOTICE alice :no CR at the end", "a line that does not end in CR LF"),
      (":host 421 alice CM\u{0}D :Unknown command\r", "a NUL inside a line"),
      (":host 433 alice n\u{7}x :in use\r", "a control character in a parameter"),
      (":host 403 alice #a\u{7F} :no such channel\r", "a control character in a parameter"),
      (":host PRIVMSG alice :esc \u{1B}[2J\r", "a control character in a parameter"),
      (":host 4O3 alice #a :x\r", "a command that is neither a word nor a numeric"),
      (":host 421 alice CAP NOSUCH :Unknown CAP subcommand\r", "421 with 4 parameters, not 3"),
      (": NOTICE alice :x\r", "an empty source"),
    ])
  func malformed(_ line: String, _ problem: String) {
    #expect(
      Self.kinds(line).first?.hasPrefix("IRC: \(problem)") == true, "\(line.debugDescription)")
  }

  @Test("a token survives no mutation that makes it another user's")
  func tokens() {
    let token = IRCShape.token(user: 1, serial: 4711)
    #expect(IRCShape.tokenUsers(in: Array(token.utf8)) == [1])
    #expect(
      IRCShape.tokenUsers(in: Array(token.replacingOccurrences(of: "fz1", with: "fz0").utf8))
        .isEmpty)
    #expect(IRCShape.tokenUsers(in: Array(token.dropLast().utf8)).isEmpty)
  }

  @Test(
    "fences tell answered lines from waiting ones; a half-close before the last PONG is a finding")
  func fences() {
    var checker = IRCReplyChecker(users: Self.users)
    for line in IRCGenerator.registration(nick: "alice", capabilities: ["batch"]) {
      checker.sent(line)
    }
    let fence = checker.fence() ?? []
    checker.sent(fence)
    #expect(checker.unanswered == 6)
    _ = checker.received(Array(":host 001 alice :Welcome\r".utf8))
    _ = checker.received(
      Array(":host PONG host :\(String(decoding: fence.dropFirst(6), as: UTF8.self))\r".utf8))
    #expect(checker.unanswered == 0)
    checker.sent(Array("JOIN #a".utf8))
    checker.sent(checker.fence() ?? [])
    #expect(
      checker.endOfStream(halfClosed: true).map(\.kind) == [
        "IRC: closed before answering every line after a half-close"
      ])
    #expect(
      checker.endOfStream(halfClosed: false).map(\.kind) == ["IRC: connection closed without ERROR"]
    )
    checker.sent(Array("QUIT :bye".utf8))
    #expect(checker.endOfStream(halfClosed: false).isEmpty, "after QUIT the broker may just close")
  }

  /// A QUIT the checker misses makes the broker's ERROR and close look
  /// like a reader dropped; one it sees where the broker refused the line
  /// stops it checking that connection.
  @Test(
    "a QUIT counts as the broker reads it: its last CR dropped only without CR LF, none past IRC's bounds"
  )
  func quitAsTheBrokerReadsIt() {
    func isQuit(_ line: String, crlf: Bool = true) -> Bool {
      IRCReplyChecker.isQuit(IRCReplyChecker.asRead(Array(line.utf8), crlf: crlf))
    }
    #expect(isQuit("QUIT"))
    #expect(isQuit("quit :bye") && isQuit("  QUIT") && isQuit("@label=1 :me QUIT"))
    #expect(isQuit("QUIT\r", crlf: false))
    #expect(!isQuit("QUIT\r"))
    #expect(!isQuit("  @label=1 QUIT"), "spaces first make @label=1 the command")
    #expect(!isQuit("@+x=" + String(repeating: "t", count: 4092) + " QUIT"))
    #expect(isQuit("@+x=" + String(repeating: "t", count: 4091) + " QUIT"))
    #expect(!isQuit("QUIT :" + String(repeating: "x", count: 505)))
    #expect(isQuit("QUIT :" + String(repeating: "x", count: 504)))
  }

  @Test("IRC reproducers end lines in CR LF and name the IRC socket")
  func reproducer() {
    let shell = Reproducer.shell(
      [Array("NICK a".utf8), Array("PING :x\ry".utf8)], lineEnd: "\\r\\n",
      connect: "nc -N -U \"$IRCSOCK\"")
    #expect(shell == #"printf 'NICK a\r\nPING :x\015y\r\n' | nc -N -U "$IRCSOCK""#)
    #expect(Reproducer.shell([Array("PING".utf8)]) == #"printf 'PING\n' | nc -N -U "$SOCK""#)
  }

  @Test("the generator covers every command of the gateway, many targets and tags")
  func coverage() {
    var generator = IRCGenerator(random: ProtocolFuzz.SplitMix64(seed: 7), users: Self.users)
    var commands = Set<String>()
    var manyTargets = false
    var tagged = false
    for _ in 0..<20_000 {
      let line = generator.next()
      if line.first == UInt8(ascii: "@") { tagged = true }
      guard let parsed = IRCShape.parse(line) else { continue }
      commands.insert(parsed.command.uppercased())
      if (parsed.parameters.first?.split(separator: ",").count ?? 0) > 100 { manyTargets = true }
    }
    let gateway: Set<String> = [
      "JOIN", "PART", "NAMES", "WHO", "WHOIS", "LIST", "TOPIC", "MODE", "PRIVMSG", "NOTICE",
      "SAYAT", "MARKREAD", "CHATHISTORY", "USERHOST", "ISON", "AWAY", "LUSERS", "MOTD", "PING",
      "PONG", "QUIT", "NICK", "USER", "CAP",
    ]
    #expect(gateway.subtracting(commands).isEmpty)
    #expect(manyTargets && tagged)
  }
}

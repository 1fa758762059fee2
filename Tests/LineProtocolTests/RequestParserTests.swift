import LineProtocol
import Testing

private func room(_ name: String) -> RoomName {
  RoomName(name)!
}

private func id(_ text: String) -> MessageID {
  MessageID(text)!
}

struct GoodLine: Sendable, CustomTestStringConvertible {
  let line: String
  let request: Request

  init(_ line: String, _ request: Request) {
    self.line = line
    self.request = request
  }

  var testDescription: String { line.debugDescription }
}

struct BadLine: Sendable, CustomTestStringConvertible {
  let line: String
  let verb: String
  let code: ErrorCode

  init(_ line: String, _ verb: String, _ code: ErrorCode) {
    self.line = line
    self.verb = verb
    self.code = code
  }

  var testDescription: String { "\(line.debugDescription) -> \(verb) \(code.rawValue)" }
}

let goodLines: [GoodLine] = [
  // JOIN, PART, WHO: one room; verbs in any case; one or more spaces.
  GoodLine("JOIN #ops", .join(room("#ops"))),
  GoodLine("join #ops", .join(room("#ops"))),
  GoodLine("Join #Ops", .join(room("#ops"))),
  GoodLine("jOiN    #ops", .join(room("#ops"))),
  GoodLine("  JOIN #ops  ", .join(room("#ops"))),
  GoodLine(
    "JOIN #" + String(repeating: "a", count: 32),
    .join(room("#" + String(repeating: "a", count: 32)))),
  GoodLine("JOIN #a.b_c-9", .join(room("#a.b_c-9"))),
  // BLOCK (chatbroker(7)): \n a new line, \\ a backslash, any other
  // backslash itself; empty lines inside; one line is a SAY's text.
  GoodLine(
    "BLOCK #ops :make: ok\\n\\n\\tC:\\\\x \\d+\\",
    .block(.room(room("#ops")), text: "make: ok\n\n\\tC:\\x \\d+\\")),
  GoodLine("block @bob one line", .block(.user("bob"), text: "one line")),
  GoodLine(
    "BLOCK #ops :" + String(repeating: "x\\n", count: 99) + "x",
    .block(.room(room("#ops")), text: String(repeating: "x\n", count: 99) + "x")),
  // Private rooms (chatbroker(7), "Private rooms"): a group's name is at
  // most 32 characters, as a login name.
  GoodLine("JOIN #ops group=ops", .joinPrivate(room("#ops"), .group("ops"))),
  GoodLine("join #ops GROUP=Ops", .joinPrivate(room("#ops"), .group("Ops"))),
  GoodLine(
    "JOIN #ops group=" + String(repeating: "g", count: 32),
    .joinPrivate(room("#ops"), .group(String(repeating: "g", count: 32)))),
  GoodLine("JOIN #plan Invite", .joinPrivate(room("#plan"), .invited)),
  GoodLine("INVITE #plan carol", .invite(room("#plan"), user: "carol")),
  GoodLine("ACCESS #plan", .access(room("#plan"))),
  GoodLine("ACCESS #plan PUBLIC", .setAccess(room("#plan"), nil)),
  GoodLine("access #plan group=ops", .setAccess(room("#plan"), .group("ops"))),
  GoodLine("PART #ops", .part(room("#ops"))),
  GoodLine("part  #OPS", .part(room("#ops"))),
  GoodLine("PART #ops :lunch, back at 2", .part(room("#ops"), reason: "lunch, back at 2")),
  GoodLine("PART #ops now", .part(room("#ops"), reason: "now")),
  GoodLine("WHO #ops", .who(room("#ops"))),
  GoodLine("who #Ops ", .who(room("#ops"))),
  // SAY: the text is the rest of the line after one space; one leading ':' goes.
  GoodLine("SAY #ops hello world", .say(.room(room("#ops")), text: "hello world")),
  GoodLine("say #ops :hello world", .say(.room(room("#ops")), text: "hello world")),
  GoodLine("Say #ops ::x", .say(.room(room("#ops")), text: ":x")),
  GoodLine("SAY #ops :::", .say(.room(room("#ops")), text: "::")),
  GoodLine("SAY #ops a :b", .say(.room(room("#ops")), text: "a :b")),
  GoodLine("SAY   #ops   two spaces", .say(.room(room("#ops")), text: "  two spaces")),
  GoodLine("SAY #ops trailing  ", .say(.room(room("#ops")), text: "trailing  ")),
  GoodLine("SAY #ops a\tb", .say(.room(room("#ops")), text: "a\tb")),
  GoodLine("SAY #ops \tindented", .say(.room(room("#ops")), text: "\tindented")),
  GoodLine("SAY #ops :\tx", .say(.room(room("#ops")), text: "\tx")),
  GoodLine("SAY #ops x", .say(.room(room("#ops")), text: "x")),
  GoodLine("SAY #ops héllo wörld → 🎉", .say(.room(room("#ops")), text: "héllo wörld → 🎉")),
  // Printable characters whose UTF-8 contains bytes 80-9F, but not after C2.
  GoodLine(
    "SAY #ops \u{A0}\u{C5}\u{100}\u{2026}", .say(.room(room("#ops")), text: "\u{A0}Å\u{100}…")),
  GoodLine("SAY @alice hi", .say(.user("alice"), text: "hi")),
  GoodLine("SAY @Alice.B_1-x$ hi", .say(.user("Alice.B_1-x$"), text: "hi")),
  // SAYAT: target, one <when> word (kept as typed), then the text.
  GoodLine(
    "SAYAT #ops 18:00 deploy now", .sayAt(.room(room("#ops")), when: "18:00", text: "deploy now")),
  GoodLine("sayat @bob +10m :hi", .sayAt(.user("bob"), when: "+10m", text: "hi")),
  GoodLine(
    "SayAt  #Ops   @1798131600 ::x", .sayAt(.room(room("#ops")), when: "@1798131600", text: ":x")),
  GoodLine(
    "SAYAT #ops 2026-12-24T18:00:00+01:00 merry\tchristmas",
    .sayAt(.room(room("#ops")), when: "2026-12-24T18:00:00+01:00", text: "merry\tchristmas")),
  GoodLine("SAYAT #ops nonsense hi", .sayAt(.room(room("#ops")), when: "nonsense", text: "hi")),
  // HISTORY: [<n>] [BEFORE <id> | AFTER <id>].
  GoodLine("HISTORY #ops", .history(.room(room("#ops")), count: 50, anchor: nil)),
  GoodLine("history #ops 10", .history(.room(room("#ops")), count: 10, anchor: nil)),
  GoodLine("HISTORY #ops 007", .history(.room(room("#ops")), count: 7, anchor: nil)),
  GoodLine("HISTORY #ops 1000000", .history(.room(room("#ops")), count: 1_000_000, anchor: nil)),
  GoodLine(
    "HISTORY #ops 99999999999999999999999999999",
    .history(.room(room("#ops")), count: Int.max, anchor: nil)),
  GoodLine(
    "HISTORY #ops BEFORE 8f3k2",
    .history(.room(room("#ops")), count: 50, anchor: .before(id("8f3k2")))),
  GoodLine(
    "history #ops 5 before 8f3k2",
    .history(.room(room("#ops")), count: 5, anchor: .before(id("8f3k2")))),
  GoodLine("HISTORY @bob After z", .history(.user("bob"), count: 50, anchor: .after(id("z")))),
  GoodLine("HISTORY @bob 3   AFTER   0", .history(.user("bob"), count: 3, anchor: .after(id("0")))),
  // SCHEDULED [<target>], CANCEL <id>.
  GoodLine("SCHEDULED", .scheduled(nil)),
  GoodLine("scheduled #Ops", .scheduled(.room(room("#ops")))),
  GoodLine("Scheduled @bob", .scheduled(.user("bob"))),
  GoodLine("CANCEL 8f3k3", .cancel(id("8f3k3"))),
  // The verbs without words.
  GoodLine("ROOMS", .rooms(after: nil)),
  GoodLine("rooms", .rooms(after: nil)),
  GoodLine("ROOMS after #Ops", .rooms(after: room("#ops"))),
  GoodLine("PING", .ping(token: nil)),
  GoodLine("ping abc123", .ping(token: "abc123")),
  GoodLine("PING  x:y ", .ping(token: "x:y")),
  GoodLine("HELP", .help),
  GoodLine("help", .help),
  GoodLine("QUIT", .quit()),
  GoodLine("Quit", .quit()),
  GoodLine("QUIT :gone home", .quit(reason: "gone home")),
  GoodLine("QUIT now", .quit(reason: "now")),
]

@Test(arguments: goodLines)
func parsesGoodLine(_ good: GoodLine) throws {
  let request = try RequestParser.parse(good.line).get()
  #expect(request == good.request)
  #expect(request.verb == good.request.verb)
}

private let unknownLines: [BadLine] = [
  BadLine("HELLO", "-", .unknown),
  BadLine("SAYS #ops hi", "-", .unknown),
  BadLine("JOINS #ops", "-", .unknown),
  BadLine("SAY:#ops hi", "-", .unknown),
  BadLine("SCHEDULEDX", "-", .unknown),
  BadLine("MSG #ops x", "-", .unknown),
  BadLine("?", "-", .unknown),
  BadLine(":SAY #ops hi", "-", .unknown),
  BadLine("ßay #ops hi", "-", .unknown),
  BadLine("\u{1B}[2J", "-", .unknown),
  BadLine("SAY\t#ops hi", "-", .unknown),
  BadLine("   ", "-", .syntax),
]

private let syntaxLines: [BadLine] = [
  // Missing words.
  BadLine("JOIN", "JOIN", .syntax),
  BadLine("join   ", "JOIN", .syntax),
  BadLine("PART", "PART", .syntax),
  BadLine("SAY", "SAY", .syntax),
  BadLine("say #ops", "SAY", .syntax),
  BadLine("SAY @bob", "SAY", .syntax),
  BadLine("SAYAT", "SAYAT", .syntax),
  BadLine("SAYAT #ops", "SAYAT", .syntax),
  BadLine("sayat #ops 18:00", "SAYAT", .syntax),
  BadLine("HISTORY", "HISTORY", .syntax),
  BadLine("HISTORY #ops BEFORE", "HISTORY", .syntax),
  BadLine("HISTORY #ops 10 AFTER", "HISTORY", .syntax),
  BadLine("CANCEL", "CANCEL", .syntax),
  BadLine("WHO", "WHO", .syntax),
  // Extra words.
  BadLine("JOIN #ops #dev", "JOIN", .badName),
  BadLine("JOIN #ops group=ops extra", "JOIN", .syntax),
  BadLine("JOIN #ops group=-x", "JOIN", .badName),
  BadLine("JOIN #ops group=" + String(repeating: "g", count: 33), "JOIN", .badName),
  BadLine("ACCESS #ops private", "ACCESS", .badName),
  BadLine("INVITE #ops", "INVITE", .syntax),
  BadLine("INVITE #ops b@d", "INVITE", .badName),
  BadLine("HISTORY #ops 10 20", "HISTORY", .syntax),
  BadLine("HISTORY #ops BEFORE a b", "HISTORY", .syntax),
  BadLine("HISTORY #ops 10 BEFORE a AFTER b", "HISTORY", .syntax),
  BadLine("HISTORY #ops SINCE a", "HISTORY", .syntax),
  BadLine("HISTORY #ops BEFORE a 10", "HISTORY", .syntax),
  BadLine("SCHEDULED #ops #dev", "SCHEDULED", .syntax),
  BadLine("CANCEL a b", "CANCEL", .syntax),
  BadLine("ROOMS #ops", "ROOMS", .syntax),
  BadLine("ROOMS AFTER", "ROOMS", .syntax),
  BadLine("ROOMS AFTER #a #b", "ROOMS", .syntax),
  BadLine("ROOMS AFTER ops", "ROOMS", .badName),
  BadLine("WHO #ops #dev", "WHO", .syntax),
  BadLine("PING a b", "PING", .syntax),
  // OK PING :x would read as free text.
  BadLine("PING :x", "PING", .syntax),
  // Found by chatfuzz: a TAB would split the echoed word for awk.
  BadLine("PING a\tb", "PING", .badChar),
  BadLine("HELP SAY", "HELP", .syntax),
  // HISTORY <n> is a whole number from 1.
  BadLine("HISTORY #ops 0", "HISTORY", .syntax),
  BadLine("HISTORY #ops 000", "HISTORY", .syntax),
  BadLine("HISTORY #ops 5x", "HISTORY", .syntax),
  BadLine("HISTORY #ops -5", "HISTORY", .syntax),
  BadLine("HISTORY #ops +5", "HISTORY", .syntax),
  BadLine("HISTORY #ops 1.5", "HISTORY", .syntax),
]

private let emptyLines: [BadLine] = [
  BadLine("SAY #ops ", "SAY", .empty),
  BadLine("SAY #ops :", "SAY", .empty),
  BadLine("say #ops    ", "SAY", .empty),
  BadLine("SAY #ops \t", "SAY", .empty),
  BadLine("SAY @bob : ", "SAY", .empty),
  BadLine("SAYAT #ops 18:00 ", "SAYAT", .empty),
  BadLine("SAYAT #ops +1m :", "SAYAT", .empty),
]

private let badNameLines: [BadLine] = [
  // Rooms.
  BadLine("JOIN ops", "JOIN", .badName),
  BadLine("JOIN #", "JOIN", .badName),
  BadLine("JOIN ##ops", "JOIN", .badName),
  BadLine("JOIN #" + String(repeating: "a", count: 33), "JOIN", .badName),
  BadLine("JOIN #ops!", "JOIN", .badName),
  BadLine("JOIN #a/b", "JOIN", .badName),
  BadLine("JOIN #a+b", "JOIN", .badName),
  BadLine("JOIN #öps", "JOIN", .badName),
  BadLine("JOIN #ops\u{1}", "JOIN", .badName),
  BadLine("JOIN @alice", "JOIN", .badName),
  BadLine("PART ops", "PART", .badName),
  BadLine("WHO #a:b", "WHO", .badName),
  BadLine("SAY ops hi", "SAY", .badName),
  BadLine("SAY #" + String(repeating: "x", count: 33) + " hi", "SAY", .badName),
  BadLine("SAYAT # 18:00 hi", "SAYAT", .badName),
  BadLine("HISTORY ops", "HISTORY", .badName),
  BadLine("SCHEDULED ops", "SCHEDULED", .badName),
  // Users after @.
  BadLine("SAY @ hi", "SAY", .badName),
  BadLine("SAY @-bob hi", "SAY", .badName),
  BadLine("SAY @bob! hi", "SAY", .badName),
  BadLine("SAY @bo$b hi", "SAY", .badName),
  BadLine("SAY @$ hi", "SAY", .badName),
  BadLine("SAY @bob/x hi", "SAY", .badName),
  BadLine("SAY @böb hi", "SAY", .badName),
  BadLine("SAY @" + String(repeating: "b", count: 33) + " hi", "SAY", .badName),
  BadLine("SAYAT @@bob 18:00 hi", "SAYAT", .badName),
  BadLine("HISTORY @ 10", "HISTORY", .badName),
  BadLine("SCHEDULED @#ops", "SCHEDULED", .badName),
  // Message ids.
  BadLine("CANCEL a-b", "CANCEL", .badName),
  BadLine("CANCEL 8f3k_", "CANCEL", .badName),
  BadLine("CANCEL é", "CANCEL", .badName),
  BadLine("CANCEL " + String(repeating: "1", count: 33), "CANCEL", .badName),
  BadLine("HISTORY #ops BEFORE a.b", "HISTORY", .badName),
  BadLine("HISTORY #ops 10 AFTER #ops", "HISTORY", .badName),
  // Blocks (chatbroker(7), BLOCK): blank, or more than 100 lines.
  BadLine("BLOCK #ops :\\n\\n  \\n", "BLOCK", .empty),
  BadLine("BLOCK #ops :" + String(repeating: "x\\n", count: 100) + "x", "BLOCK", .tooLong),
  // Reactions (chatbroker(7), REACT): one word, short, nothing the
  // REACTIONS word or a line's text marker uses, no controls.
  BadLine("REACT #ops k3 " + String(repeating: "x", count: 33), "REACT", .badName),
  BadLine("REACT #ops k3 a,b", "REACT", .badName),
  BadLine("REACT #ops k3 a=b", "REACT", .badName),
  BadLine("UNREACT #ops k3 :)", "UNREACT", .badName),
  BadLine("REACT #ops k3 a\u{200B}b", "REACT", .badName),
  BadLine("REACT #ops k3 a\u{202E}b", "REACT", .badName),
]

@Test(arguments: unknownLines + syntaxLines + emptyLines + badNameLines)
func rejectsBadLine(_ bad: BadLine) {
  let result = RequestParser.parse(bad.line)
  guard case .failure(let error) = result else {
    Issue.record("accepted: \(result)")
    return
  }
  #expect(error.code == bad.code)
  #expect(error.verb == bad.verb)
  #expect(!error.text.isEmpty)
}

/// Every character that could steer a terminal: C0 but TAB, DEL, and C1
/// (U+0080-U+009F, in UTF-8 `C2 80` to `C2 9F`).
private let controlScalars: [UInt32] =
  Array(0x00...0x1F).filter { $0 != 0x09 } + [0x7F] + Array(0x80...0x9F)

@Test(arguments: controlScalars)
func refusesControlCharacterInText(_ value: UInt32) {
  let character = String(Character(Unicode.Scalar(value)!))
  let lines = [
    ("SAY", "SAY #ops a\(character)b"),
    ("SAY", "SAY @bob :\(character)"),
    ("SAYAT", "SAYAT #ops +1m x\(character)"),
    ("PING", "PING tok\(character)en"),
  ]
  for (verb, line) in lines {
    let result = RequestParser.parse(line)
    guard case .failure(let error) = result else {
      Issue.record("accepted \(line.debugDescription): \(result)")
      continue
    }
    #expect(error.code == .badChar, "\(line.debugDescription)")
    #expect(error.verb == verb)
    // The error text must not echo the character back.
    #expect(!containsControlCharacter(error.text))
  }
}

/// The check reads eight bytes at a time: put each control character at
/// every position of texts of several lengths, so it lands in every byte of
/// a word and in the tail.
@Test(arguments: controlScalars)
func findsControlCharacterAtEveryPosition(_ value: UInt32) {
  let control = Character(Unicode.Scalar(value)!)
  for length in [1, 7, 8, 9, 15, 16, 17, 40] {
    for position in 0..<length {
      var characters = Array(repeating: Character("x"), count: length)
      characters[position] = control
      #expect(containsControlCharacter(String(characters)), "length \(length) at \(position)")
    }
  }
}

/// Printable text with bytes 80-BF in every position, C2 before 80-9F
/// only as part of a printable character (U+00A0 is C2 A0).
@Test func printableTextPassesAtEveryPosition() {
  let printable: [Character] = ["\u{A0}", "\u{C5}", "\u{100}", "\u{2026}", "\t", "~", " ", "🎉"]
  for character in printable {
    for length in [1, 7, 8, 9, 15, 16, 17, 40] {
      for position in 0..<length {
        var characters = Array(repeating: Character("x"), count: length)
        characters[position] = character
        #expect(!containsControlCharacter(String(characters)), "\(character) at \(position)")
        // U+0085 right after it: its C2 85 lands in every position too,
        // sometimes split across two 8-byte words.
        characters.insert("\u{85}", at: position + 1)
        #expect(containsControlCharacter(String(characters)), "\(character) at \(position)")
      }
    }
  }
}

@Test func controlCharacterCheckSeesOnlyC1AfterC2() {
  #expect(containsControlCharacter("\u{85}"))
  #expect(containsControlCharacter("x\u{9F}"))
  #expect(!containsControlCharacter("\u{A0}"))
  #expect(!containsControlCharacter("\u{C0}\u{C5}\u{105}\u{2085}"))
  #expect(!containsControlCharacter("a\tb"))
  #expect(!containsControlCharacter(""))
}

@Test func unknownVerbTextSuggestsHelpAndDoesNotEchoLongWords() throws {
  guard case .failure(let short) = RequestParser.parse("FOO") else {
    Issue.record("FOO accepted")
    return
  }
  #expect(short.text.contains("\"FOO\""))
  #expect(short.text.contains("HELP"))
  let long = String(repeating: "X", count: 200)
  guard case .failure(let error) = RequestParser.parse(long) else {
    Issue.record("long word accepted")
    return
  }
  #expect(!error.text.contains(long))
}

@Test func syntaxErrorShowsTheSyntax() {
  for verb in Verb.allCases where verb != .rooms && verb != .help && verb != .quit {
    guard case .failure(let error) = RequestParser.parse(verb.rawValue + " a b c d e f") else {
      continue  // SAY and SAYAT take free text.
    }
    if error.code == .syntax {
      #expect(error.text.contains(verb.syntax), "\(verb)")
    }
  }
  guard case .failure(let error) = RequestParser.parse("ROOMS x") else {
    Issue.record("ROOMS x accepted")
    return
  }
  #expect(error.text.contains("ROOMS"))
}

@Test(arguments: Verb.allCases)
func verbLooksUpInAnyCase(_ verb: Verb) {
  #expect(Verb(caseInsensitive: verb.rawValue) == verb)
  #expect(Verb(caseInsensitive: verb.rawValue.lowercased()) == verb)
  let mixed = String(
    verb.rawValue.enumerated().map {
      $0.offset.isMultiple(of: 2) ? $0.element : Character($0.element.lowercased())
    })
  #expect(Verb(caseInsensitive: mixed) == verb)
  #expect(Verb(caseInsensitive: verb.rawValue + "X") == nil)
  #expect(verb.syntax.hasPrefix(verb.rawValue))
  #expect(!verb.summary.isEmpty)
}

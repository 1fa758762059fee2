import LineProtocol
import TestSupport
import Testing

private func text(_ line: [UInt8]) -> String {
  String(decoding: line, as: UTF8.self)
}

/// A broker line split the way chatbroker(7) tells scripts to: the LF ends it,
/// the fixed words come before the first ` :`, the free text after it.
private func split(_ line: [UInt8]) -> (words: [String], text: String?) {
  var string = text(line)
  #expect(string.hasSuffix("\n"))
  #expect(string.filter { $0 == "\n" }.count == 1)
  string.removeLast()
  guard let separator = string.range(of: " :") else {
    return (string.split(separator: " ", omittingEmptySubsequences: false).map(String.init), nil)
  }
  let words = string[..<separator.lowerBound].split(
    separator: " ", omittingEmptySubsequences: false)
  return (words.map(String.init), String(string[separator.upperBound...]))
}

private let ops = RoomName("#ops")!
private let delivered = Timestamp(milliseconds: 1_796_061_372_031)  // 2026-11-30T17:56:12.031Z
private let due = Timestamp(milliseconds: 1_796_061_600_000)  // 2026-11-30T18:00:00.000Z
private let created = Timestamp(milliseconds: 1_796_061_309_877)  // 2026-11-30T17:55:09.877Z

@Test func encodesExactBytes() {
  let cases: [([UInt8], String)] = [
    (
      BrokerLine.hello(
        version: chatbrokerVersion, user: "alice", text: "welcome alice, type HELP for commands"),
      "HELLO 1.6.0 alice :welcome alice, type HELP for commands\n"
    ),
    (BrokerLine.ok(.join, "#ops", "2"), "OK JOIN #ops 2\n"),
    (
      BrokerLine.ok(.say, "8f3k2", delivered.description), "OK SAY 8f3k2 2026-11-30T17:56:12.031Z\n"
    ),
    (BrokerLine.ok(.quit), "OK QUIT\n"),
    (BrokerLine.ok(.ping), "OK PING\n"),
    (BrokerLine.ok(.scheduled, words: ["1"]), "OK SCHEDULED 1\n"),
    (BrokerLine.ok(.help, words: []), "OK HELP\n"),
    (
      BrokerLine.error(verb: "-", code: .tooLong, text: "a request line holds at most 4096 bytes"),
      "ERR - TOOLONG :a request line holds at most 4096 bytes\n"
    ),
    (
      BrokerLine.error(verb: "PART", code: .notJoined, text: "you have not joined #ops"),
      "ERR PART NOTJOINED :you have not joined #ops\n"
    ),
    (
      BrokerLine.message(
        target: "#ops", id: MessageID("8f3k4")!, time: delivered, user: "bob",
        text: "ok, I'm watching the graphs"),
      "MSG #ops 8f3k4 2026-11-30T17:56:12.031Z bob :ok, I'm watching the graphs\n"
    ),
    (
      BrokerLine.message(
        target: "@alice", id: MessageID(value: 0), time: delivered, user: "bob", text: ":x"),
      "MSG @alice 0 2026-11-30T17:56:12.031Z bob ::x\n"
    ),
    (
      BrokerLine.history(
        target: "#ops", id: MessageID("8f3k2")!, time: delivered, user: "alice", text: "a\tb"),
      "HIST #ops 8f3k2 2026-11-30T17:56:12.031Z alice :a\tb\n"
    ),
    (
      BrokerLine.scheduled(
        id: MessageID("8f3k3")!, target: "#ops", due: due, created: created, text: "deploy now"),
      "SCHED 8f3k3 #ops 2026-11-30T18:00:00.000Z 2026-11-30T17:55:09.877Z :deploy now\n"
    ),
    (
      BrokerLine.scheduled(
        id: MessageID("8f3k4")!, target: "#ops", due: due, created: created,
        rule: "weekdays@09:00/Europe/Berlin", text: "stand-up"),
      "SCHED 8f3k4 #ops 2026-11-30T18:00:00.000Z 2026-11-30T17:55:09.877Z "
        + "weekdays@09:00/Europe/Berlin :stand-up\n"
    ),
    (BrokerLine.join(room: ops, user: "bob"), "JOIN #ops bob\n"),
    (BrokerLine.part(room: RoomName("#Ops")!, user: "bob"), "PART #ops bob\n"),
    (BrokerLine.room(ops, members: 3), "ROOM #ops 3\n"),
    (BrokerLine.member(room: ops, user: "carol"), "MEMBER #ops carol\n"),
    (BrokerLine.info("SAY <target> <text>"), "INFO :SAY <target> <text>\n"),
    (BrokerLine.bye("bye alice"), "BYE :bye alice\n"),
  ]
  for (line, expected) in cases {
    #expect(line == Array(expected.utf8), "\(expected.debugDescription)")
  }
}

@Test func requestErrorEncodesItsLine() {
  let error = RequestError(verb: "SAY", code: .empty, text: "the text is empty")
  #expect(error.line == Array("ERR SAY EMPTY :the text is empty\n".utf8))
  guard case .failure(let parsed) = RequestParser.parse("NOPE") else {
    Issue.record("NOPE accepted")
    return
  }
  #expect(text(parsed.line).hasPrefix("ERR - UNKNOWN :"))
}

@Test(arguments: ErrorCode.allCases)
func errorCodeIsOneUpperCaseWord(_ code: ErrorCode) {
  #expect(!code.rawValue.isEmpty)
  #expect(code.rawValue.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) })
  let fields = split(BrokerLine.error(verb: "WHO", code: code, text: "x"))
  #expect(fields.words == ["ERR", "WHO", code.rawValue])
  #expect(fields.text == "x")
}

/// Texts that try to confuse a naive splitter: separators, colons, tabs.
private let awkwardTexts = [
  "hi", ":x", "::", " :", "a :b :c", "  leading spaces", "trailing ", "tab\tseparated",
  "ünïcödé 🎉", ":", "x", "SAY #ops :nested",
]

@Test(arguments: awkwardTexts)
func messageLinesSplitBackIntoTheirFields(_ message: String) {
  let id = MessageID("8f3k4")!
  let msg = split(
    BrokerLine.message(target: "#ops", id: id, time: delivered, user: "bob", text: message))
  #expect(msg.words == ["MSG", "#ops", "8f3k4", "2026-11-30T17:56:12.031Z", "bob"])
  #expect(msg.text == message)

  let hist = split(
    BrokerLine.history(target: "@alice", id: id, time: delivered, user: "bob", text: message))
  #expect(hist.words == ["HIST", "@alice", "8f3k4", "2026-11-30T17:56:12.031Z", "bob"])
  #expect(hist.text == message)

  let sched = split(
    BrokerLine.scheduled(id: id, target: "#ops", due: due, created: created, text: message))
  #expect(
    sched.words == [
      "SCHED", "8f3k4", "#ops", "2026-11-30T18:00:00.000Z", "2026-11-30T17:55:09.877Z",
    ])
  #expect(sched.text == message)
}

/// Random fields from a seeded generator: whatever goes in comes back out.
@Test(arguments: 1...5)
func randomMessageLinesSplitBack(seed: Int) {
  var generator = SeededGenerator(seed: UInt64(seed))
  let characters = Array("abcXYZ09 :\t#@é→🎉")
  for _ in 0..<500 {
    let length = Int.random(in: 1...60, using: &generator)
    let message = String((0..<length).map { _ in characters.randomElement(using: &generator)! })
    let id = MessageID(value: UInt64.random(in: 0...MessageID.maximumValue, using: &generator))
    let time = Timestamp(milliseconds: Int64.random(in: 0...4_102_444_800_000, using: &generator))
    let target = Bool.random(using: &generator) ? "#r\(length)" : "@u\(length)"
    let fields = split(
      BrokerLine.message(target: target, id: id, time: time, user: "carol", text: message))
    #expect(fields.words == ["MSG", target, id.description, time.description, "carol"])
    #expect(fields.text == message, "seed \(seed)")
    #expect(MessageID(fields.words[2]) == id)
  }
}

@Test func okWithIDAndTimeIsTheSameAsWithWords() {
  let id = MessageID(value: 46_656)
  let time = Timestamp(milliseconds: 1_798_131_600_123)
  #expect(
    BrokerLine.ok(.sayAt, id: id, time: time)
      == BrokerLine.ok(.sayAt, id.description, time.description))
  #expect(
    String(decoding: BrokerLine.ok(.say, id: id, time: time), as: UTF8.self)
      == "OK SAY 1000 2026-12-24T17:00:00.123Z\n")
}

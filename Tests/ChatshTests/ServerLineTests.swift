import LineProtocol
import Testing

@testable import ChatClient

@Suite struct ServerLineTests {
  @Test("a MSG line gives its room, id, time, sender and text, colons and all")
  func message() {
    let line = ServerLine(parsing: "MSG #ops 8f3k4 2026-11-30T17:56:12.031Z bob :ok, I'm : here")
    guard case .msg(let message) = line else {
      Issue.record("not a MSG: \(line)")
      return
    }
    #expect(message.target == "#ops")
    #expect(message.id == "8f3k4")
    #expect(message.user == "bob")
    #expect(message.text == "ok, I'm : here")
    #expect(message.time.description == "2026-11-30T17:56:12.031Z")
  }

  @Test(
    "every kind of broker line is read as what it is; an unknown or malformed one as unknown",
    arguments: [
      (
        "HELLO 1.0.0 alice :welcome",
        ServerLine.hello(version: "1.0.0", user: "alice", text: "welcome")
      ),
      (
        "OK SAY 8f3k2 2026-11-30T17:55:01.204Z",
        .ok(verb: "SAY", words: ["8f3k2", "2026-11-30T17:55:01.204Z"])
      ),
      ("OK QUIT", .ok(verb: "QUIT", words: [])),
      ("ERR CANCEL NOSUCHMSG :no such", .err(verb: "CANCEL", code: "NOSUCHMSG", text: "no such")),
      ("ERR - UNKNOWN :what? :x", .err(verb: "-", code: "UNKNOWN", text: "what? :x")),
      ("JOIN #ops bob", .join(room: "#ops", user: "bob")),
      ("PART #ops bob", .part(room: "#ops", user: "bob")),
      ("ROOM #ops 3", .room(name: "#ops", members: 3)),
      ("MEMBER #ops carol", .member(room: "#ops", user: "carol")),
      ("INFO :JOIN <room>", .info("JOIN <room>")),
      ("BYE :bye alice", .bye("bye alice")),
      ("FUTURE thing", .unknown("FUTURE thing")),
      ("MSG #ops x notatime bob :hi", .unknown("MSG #ops x notatime bob :hi")),
    ])
  func lines(text: String, expected: ServerLine) {
    #expect(ServerLine(parsing: text) == expected)
  }

  @Test("a SCHED line gives its id, room, due and created times and text")
  func scheduled() {
    let line = ServerLine(
      parsing: "SCHED 8f3k3 #ops 2026-11-30T18:00:00.000Z 2026-11-30T17:55:09.877Z :deploy now")
    guard case .sched(let item) = line else {
      Issue.record("not a SCHED: \(line)")
      return
    }
    #expect(item.id == "8f3k3")
    #expect(item.due.description == "2026-11-30T18:00:00.000Z")
    #expect(item.created.description == "2026-11-30T17:55:09.877Z")
    #expect(item.text == "deploy now")
  }

  @Test("RFC 3339 UTC times with or without milliseconds are read; other forms are refused")
  func timestamps() {
    #expect(parseTimestamp("1970-01-01T00:00:00.000Z")?.milliseconds == 0)
    #expect(parseTimestamp("1970-01-01T00:00:01Z")?.milliseconds == 1000)
    #expect(parseTimestamp("2026-11-30T18:00:00.5Z")?.description == "2026-11-30T18:00:00.500Z")
    #expect(parseTimestamp("2026-11-30 18:00:00Z") == nil)
    #expect(parseTimestamp("nope") == nil)
  }

  @Test("--json escapes quotes, backslashes and control characters")
  func jsonEscaping() {
    #expect(OutputFormat.jsonString("a\"b\\c\n\t\u{1}é") == "\"a\\\"b\\\\c\\n\\t\\u0001é\"")
  }

  @Test(
    "escape sequences, C1 controls and bidi overrides in a text become U+FFFD; tabs become spaces unless kept"
  )
  func sanitizing() {
    #expect(sanitized("a\u{1B}[31mb\tc\u{9B}d\u{202E}") == "a\u{FFFD}[31mb c\u{FFFD}d\u{FFFD}")
    #expect(sanitized("tab\tkept", keepTabs: true) == "tab\tkept")
  }
}

import LineProtocol
import Testing

@testable import ChatClient

/// chatsh reads broker lines with LineCodec.decode; ServerLine only adds
/// what a client needs on top: a line the codec does not read (a newer
/// broker's) is kept, and still answers a request when it is OK or ERR.
@Suite struct ServerLineTests {
  @Test("a MSG line gives its room, id, time, sender and text, colons and all")
  func message() {
    let line = ServerLine(parsing: "MSG #ops 8f3k4 2026-11-30T17:56:12.031Z bob :ok, I'm : here")
    guard let message = line.message else {
      Issue.record("not a MSG: \(line)")
      return
    }
    #expect(message.target == "#ops")
    #expect(message.id == "8f3k4")
    #expect(message.user == "bob")
    #expect(message.text == "ok, I'm : here")
    #expect(message.timeText == "2026-11-30T17:56:12.031Z")
    #expect(line.historyMessage == nil)
  }

  @Test(
    "a line is what LineCodec.decode reads, or kept as it came; OK and ERR lines are final replies",
    arguments: [
      ("HELLO 1.0.0 alice :welcome", false, nil),
      ("OK SAY 8f3k2 2026-11-30T17:55:01.204Z", true, nil),
      ("OK QUIT", true, nil),
      ("ERR CANCEL NOSUCHMSG :no such", true, "NOSUCHMSG: no such"),
      ("ERR - UNKNOWN :what? :x", true, "UNKNOWN: what? :x"),
      // A code or verb this client does not know: still the reply.
      ("ERR SAY NEWCODE :from a newer broker", true, "NEWCODE: from a newer broker"),
      ("OK NEWVERB 1", true, nil),
      ("JOIN #ops bob", false, nil),
      ("ROOM #ops 3 SHARED", false, nil),
      ("FUTURE thing", false, nil),
      ("MSG #ops x notatime bob :hi", false, nil),
    ] as [(String, Bool, String?)])
  func lines(text: String, isFinal: Bool, refusal: String?) {
    let line = ServerLine(parsing: text)
    if let event = LineCodec.decode(text) {
      #expect(line == .event(event))
    } else {
      #expect(line == .unreadable(text))
    }
    #expect(line.isFinalReply == isFinal)
    #expect(line.refusal.map { "\($0.code): \($0.text)" } == refusal)
  }

  @Test("OK SAY's fields are its id and time, as the broker wrote them")
  func accepted() {
    let line = ServerLine(parsing: "OK SAY 8f3k2 2026-11-30T17:55:01.204Z")
    #expect(line.okFields == ["8f3k2", "2026-11-30T17:55:01.204Z"])
    #expect(ServerLine(parsing: "OK ROOMS 2 MORE").okFields == ["2", "MORE"])
    #expect(ServerLine(parsing: "ERR ROOMS SYNTAX :x").okFields == nil)
  }

  @Test("a SCHED line gives its id, room, due and created times and text")
  func scheduled() {
    let line = ServerLine(
      parsing: "SCHED 8f3k3 #ops 2026-11-30T18:00:00.000Z 2026-11-30T17:55:09.877Z :deploy now")
    guard let item = line.scheduledMessage else {
      Issue.record("not a SCHED: \(line)")
      return
    }
    #expect(item.id == "8f3k3")
    #expect(item.dueText == "2026-11-30T18:00:00.000Z")
    #expect(item.createdText == "2026-11-30T17:55:09.877Z")
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

import Testing

@testable import ProtocolFuzz

/// The fuzzer's own rules, on virtual time: a freeze finding must mean the
/// broker went silent, never that a slow client was still sending.
@Suite("Protocol fuzzer rules")
struct ProtocolFuzzRuleTests {
  @Test("a trickling client still sending long after its wind-down is not taken for a freeze")
  func tricklingIsNotAFreeze() {
    var watch = SilenceWatch(bound: 15)
    watch.windDown(at: 0)
    // Two bytes a second for 40 s, nothing back: its line is not complete.
    for second in 1...40 {
      watch.wrote(at: Double(second))
      #expect(!watch.isOverdue(at: Double(second) + 0.5), "at \(second) s")
    }
    watch.halfClose(at: 40)
    watch.received(at: 41)
    #expect(!watch.isOverdue(at: 55.9))
    #expect(watch.isOverdue(at: 56.1), "silence after its last answer counts from that answer")
  }

  @Test("a reader that half-closed and hears nothing for 15 s is a freeze")
  func silenceAfterHalfCloseIsAFreeze() {
    var watch = SilenceWatch(bound: 15)
    watch.windDown(at: 0)
    watch.halfClose(at: 2)
    // Writes cannot happen after a half-close; a stray call changes nothing.
    watch.wrote(at: 10)
    #expect(!watch.isOverdue(at: 16.9))
    #expect(watch.isOverdue(at: 17.1))
  }

  @Test("a reader winding down that can neither send nor receive for 15 s is a freeze")
  func brokerThatStopsReadingIsAFreeze() {
    var watch = SilenceWatch(bound: 15)
    watch.windDown(at: 5)
    watch.wrote(at: 6)
    #expect(!watch.isOverdue(at: 20.9))
    #expect(watch.isOverdue(at: 21.1))
  }

  @Test("a connection that has not begun to wind down is never overdue")
  func notWindingDown() {
    var watch = SilenceWatch(bound: 15)
    watch.received(at: 1)
    watch.wrote(at: 2)
    #expect(!watch.isOverdue(at: 1_000_000))
  }

  @Test("a trickling client's lines are short enough to send a few bytes at a time")
  func shortLines() {
    var generator = RequestGenerator(random: ProtocolFuzz.SplitMix64(seed: 20_261_201), users: [])
    let lines = (0..<5000).map { _ in generator.shortLine() }
    #expect(lines.allSatisfy { $0.count <= 256 })
    #expect(lines.contains { $0.count > 100 }, "not only the shortest requests")
    #expect(Set(lines).count > 1000, "still varied")
  }

  @Test("a space followed by a combining mark still separates words, in requests and in replies")
  func combiningMarkAfterASpace() {
    // U+0485 after the space: one Character to Swift, two words to the broker.
    let request = Array("SAY ".utf8) + [0xD2, 0x85] + Array("#b del".utf8) + [0x7F]
    #expect(ProtocolModel.replyVerb(for: request, maximumLineBytes: 4096) == "SAY")
    var checker = ReplyChecker()
    checker.sent(request)
    #expect(checker.received(Array("HELLO 1 alice :welcome".utf8)).isEmpty)
    let refusal = "ERR SAY BADNAME :\"\u{485}#b\" is not a target"
    #expect(checker.received(Array(refusal.utf8)).isEmpty)
    // A text that begins with a combining mark, right after " :".
    let message = "MSG #a 1 2026-12-01T06:00:00.000Z bob :\u{301}accent first"
    #expect(LineShape.problem(Array(message.utf8)) == nil)
  }

  @Test(
    "private rooms' lines are known to the checker: ROOM PRIVATE, OK INVITE, OK ACCESS, NOACCESS")
  func privateRoomLines() {
    for line in [
      "ROOM #ops 2 PRIVATE", "ROOM #ops 2 PRIVATE :deploy", "OK INVITE #ops carol",
      "OK ACCESS #ops public", "OK ACCESS #ops invite", "OK ACCESS #ops group=ops",
      "ERR JOIN NOACCESS :#ops is not open to you",
    ] {
      #expect(LineShape.problem(Array(line.utf8)) == nil, "\(line)")
    }
    for line in [
      "ROOM #ops 2 SECRET", "OK ACCESS #ops private", "OK ACCESS #ops group=",
      "OK INVITE #ops", "ERR JOIN NOPE :x",
    ] {
      #expect(LineShape.problem(Array(line.utf8)) != nil, "\(line)")
    }
    #expect(
      ProtocolModel.replyVerb(for: Array("INVITE #a bob".utf8), maximumLineBytes: 4096) == "INVITE")
    #expect(
      ProtocolModel.replyVerb(for: Array("access #a".utf8), maximumLineBytes: 4096) == "ACCESS")
  }

  @Test("the web door's lines are known to the checker: OK WEB and its refusals")
  func webLines() {
    let token = String(repeating: "0f", count: 32)
    for line in [
      "OK WEB \(token) 2026-12-07T18:00:00.000Z http://localhost:8080/#k=\(token)",
      "OK WEB REVOKED 2", "ERR WEB NOACCESS :WEB is served on the Unix socket only",
    ] {
      #expect(LineShape.problem(Array(line.utf8)) == nil, "\(line)")
    }
    for line in [
      "OK WEB", "OK WEB \(token) tomorrow http://localhost:8080/#k=\(token)",
      "OK WEB abc 2026-12-07T18:00:00.000Z http://localhost:8080/#k=abc", "OK WEB REVOKED",
      "OK WEB REVOKED many",
    ] {
      #expect(LineShape.problem(Array(line.utf8)) != nil, "\(line)")
    }
    #expect(ProtocolModel.replyVerb(for: Array("web revoke".utf8), maximumLineBytes: 4096) == "WEB")
  }

  @Test("the generator sends JOIN with an access, INVITE and ACCESS")
  func privateRoomRequests() {
    var generator = RequestGenerator(
      random: ProtocolFuzz.SplitMix64(seed: 20_261_202), users: ["bob"])
    let lines = (0..<5000).map { _ in generator.validRequest().uppercased() }
    #expect(lines.contains { $0.hasPrefix("JOIN ") && $0.contains(" GROUP=") })
    #expect(lines.contains { $0.hasPrefix("JOIN ") && $0.hasSuffix(" INVITE") })
    #expect(lines.contains { $0.hasPrefix("INVITE ") })
    #expect(lines.contains { $0.hasPrefix("ACCESS ") && $0.hasSuffix(" PUBLIC") })
  }
}

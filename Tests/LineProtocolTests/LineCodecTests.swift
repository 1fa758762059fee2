import LineProtocol
import Testing

private let ops = RoomName("#ops")!
private let delivered = Timestamp(milliseconds: 1_796_061_372_031)  // 2026-11-30T17:56:12.031Z
private let due = Timestamp(milliseconds: 1_796_061_600_000)  // 2026-11-30T18:00:00.000Z

/// Every kind of line the broker sends, as an event and as chatbroker(7)
/// writes it.
private let examples: [(BrokerEvent, String)] = [
  (
    .hello(version: "1.3.0", user: "alice", text: "welcome alice, type HELP for commands"),
    "HELLO 1.3.0 alice :welcome alice, type HELP for commands"
  ),
  (.ok(.join, fields: ["#ops", "2"]), "OK JOIN #ops 2"),
  (.ok(.markRead, fields: ["@bob", "k3"]), "OK MARKREAD @bob k3"),
  (.ok(.conversations, fields: ["2"]), "OK CONVERSATIONS 2"),
  (
    .conversation(
      ConversationSummary(
        target: .room(ops), newest: (MessageID("k9")!, delivered), read: MessageID("k3")!,
        unread: 4, mentions: 1)),
    "CONV #ops k9 2026-11-30T17:56:12.031Z k3 4 1"
  ),
  (
    .conversation(
      ConversationSummary(target: .room(ops), newest: nil, read: nil, unread: 0, mentions: 0)),
    "CONV #ops - - - 0 0"
  ),
  (.markRead(target: .user("carol"), id: MessageID("k9")!), "MARKREAD @carol k9"),
  (
    .accepted(.block, id: MessageID("k9")!, time: delivered), "OK BLOCK k9 2026-11-30T17:56:12.031Z"
  ),
  (
    .message(
      target: .room(ops), id: MessageID("k9")!, time: delivered, user: "alice",
      text: "make: ok\nC:\\build done"),
    "MSG #ops k9 2026-11-30T17:56:12.031Z alice BLOCK :make: ok\\nC:\\\\build done"
  ),
  (
    .reacted(target: .room(ops), id: MessageID("k9")!, user: "bob", reaction: "👍", removed: false),
    "REACT #ops k9 bob 👍"
  ),
  (
    .reacted(
      target: .user("bob"), id: MessageID("k9")!, user: "bob", reaction: "+1", removed: true),
    "UNREACT @bob k9 bob +1"
  ),
  (
    .history(
      target: .room(ops), id: MessageID("k9")!, time: delivered, user: "alice", text: "lunch?",
      replyTo: MessageID("k3")!, edited: true,
      reactions: [
        ReactionTally(reaction: "👍", users: ["bob", "carol"]),
        ReactionTally(reaction: "+1", users: ["dave"]),
      ]),
    "HIST #ops k9 2026-11-30T17:56:12.031Z alice REPLY k3 EDITED REACTIONS 👍=bob+carol,+1=dave :lunch?"
  ),
  (.ok(.quit, fields: []), "OK QUIT"),
  (.ok(.rooms, fields: ["1000", "MORE"]), "OK ROOMS 1000 MORE"),
  (
    .accepted(.say, id: MessageID("8f3k2")!, time: delivered),
    "OK SAY 8f3k2 2026-11-30T17:56:12.031Z"
  ),
  (
    .accepted(.sayAt, id: MessageID("8f3k3")!, time: due), "OK SAYAT 8f3k3 2026-11-30T18:00:00.000Z"
  ),
  (
    .error(verb: "PART", code: .notJoined, text: "you have not joined #ops"),
    "ERR PART NOTJOINED :you have not joined #ops"
  ),
  (.error(verb: "-", code: .tooLong, text: "too long"), "ERR - TOOLONG :too long"),
  (
    .message(
      target: .room(ops), id: MessageID("8f3k4")!, time: delivered, user: "bob", text: "hi :)"),
    "MSG #ops 8f3k4 2026-11-30T17:56:12.031Z bob :hi :)"
  ),
  (
    .message(target: .user("bob"), id: MessageID("z")!, time: delivered, user: "bob", text: ":x"),
    "MSG @bob z 2026-11-30T17:56:12.031Z bob ::x"
  ),
  (
    .history(target: .room(ops), id: MessageID("a1")!, time: delivered, user: "carol", text: "old"),
    "HIST #ops a1 2026-11-30T17:56:12.031Z carol :old"
  ),
  (
    .scheduled(
      id: MessageID("q")!, target: .room(ops), due: due, created: delivered, rule: nil,
      text: "standup"),
    "SCHED q #ops 2026-11-30T18:00:00.000Z 2026-11-30T17:56:12.031Z :standup"
  ),
  (
    .scheduled(
      id: MessageID("r")!, target: .user("alice"), due: due, created: delivered,
      rule: "daily@09:00", text: "coffee"),
    "SCHED r @alice 2026-11-30T18:00:00.000Z 2026-11-30T17:56:12.031Z daily@09:00 :coffee"
  ),
  (.joined(room: ops, user: "bob"), "JOIN #ops bob"),
  (.parted(room: ops, user: "bob"), "PART #ops bob"),
  (.room(ops, members: 3), "ROOM #ops 3"),
  (.room(ops, members: 2, shared: true), "ROOM #ops 2 SHARED"),
  (.room(ops, members: 2, topic: "deploys: ask first"), "ROOM #ops 2 :deploys: ask first"),
  (
    .room(ops, members: 1, shared: true, topic: ":colon first"),
    "ROOM #ops 1 SHARED ::colon first"
  ),
  (
    .topic(room: ops, user: "bob", time: delivered, text: "deploy at 18:00"),
    "TOPIC #ops bob 2026-11-30T17:56:12.031Z :deploy at 18:00"
  ),
  (
    .topic(room: ops, user: "bob", time: delivered, text: ""),
    "TOPIC #ops bob 2026-11-30T17:56:12.031Z :"
  ),
  (
    .message(
      target: .room(ops), id: MessageID("b2")!, time: delivered, user: "bob", text: "waves",
      action: true),
    "MSG #ops b2 2026-11-30T17:56:12.031Z bob ACTION :waves"
  ),
  (
    .history(
      target: .user("bob"), id: MessageID("b3")!, time: delivered, user: "alice", text: "shrugs",
      action: true),
    "HIST @bob b3 2026-11-30T17:56:12.031Z alice ACTION :shrugs"
  ),
  (
    .accepted(.action, id: MessageID("b2")!, time: delivered),
    "OK ACTION b2 2026-11-30T17:56:12.031Z"
  ),
  (.member(room: ops, user: "carol"), "MEMBER #ops carol"),
  (.member(room: ops, user: "carol", away: "lunch"), "MEMBER #ops carol :lunch"),
  (.away(user: "bob", text: "on holiday"), "AWAY bob :on holiday"),
  (.invited(room: ops, user: "carol", by: "alice"), "INVITE #ops carol alice"),
  (
    .info("see chatbroker(7) for the whole protocol"),
    "INFO :see chatbroker(7) for the whole protocol"
  ),
  (.bye("bye alice"), "BYE :bye alice"),
]

@Suite("LineCodec: broker events as lines of chatbroker(7) and back")
struct LineCodecTests {
  @Test("every kind of broker line is encoded to the exact bytes chatbroker(7) shows")
  func encodesEveryKind() {
    for (event, line) in examples {
      #expect(String(decoding: LineCodec.encode(event), as: UTF8.self) == line + "\n")
    }
  }

  @Test("decoding what was encoded gives the same event back, for every kind of line")
  func roundTrips() {
    for (event, _) in examples {
      let line = String(decoding: LineCodec.encode(event), as: UTF8.self)
      #expect(LineCodec.decode(line) == event, "\(line)")
    }
  }

  @Test("lines the broker never sends do not decode")
  func rejectsOthers() {
    for line in [
      "", "HELLO", "OK NOSUCHVERB", "ERR SAY NOCODE :x", "MSG #ops 1 notatime bob :x",
      "ROOM #ops 2 SECRET",
    ] {
      #expect(LineCodec.decode(line) == nil, "\(line)")
    }
  }

  @Test("framing errors are answered ERR - TOOLONG and ERR - BADUTF8")
  func framingErrors() throws {
    let long = LineCodec.request(from: .tooLong, maximumLineBytes: 4096)
    #expect(throws: RequestError.self) { try long.get() }
    if case .failure(let error) = long {
      #expect(error.code == .tooLong && error.verb == "-" && error.text.contains("4096"))
    }
    if case .failure(let error) = LineCodec.request(from: .badUTF8, maximumLineBytes: 4096) {
      #expect(error.code == .badUTF8)
    } else {
      Issue.record("a line that is not UTF-8 was read as a request")
    }
    let ping = try LineCodec.request(from: .line("PING"), maximumLineBytes: 4096).get()
    #expect(ping == .ping(token: nil))
  }
}

@Suite("VerbTable: one row per verb drives parsing and HELP")
struct VerbTableTests {
  @Test("the table lists every verb exactly once, in the order HELP shows them")
  func everyVerbOnce() {
    #expect(VerbTable.rows.map(\.verb) == Verb.allCases)
    for verb in Verb.allCases {
      #expect(verb.spec.verb == verb)
      #expect(verb.syntax.hasPrefix(verb.rawValue))
      #expect(verb.spec.takesText == verb.syntax.hasSuffix("<text>") || verb.spec.textIsOptional)
      #expect(verb.spec.textIsOptional == verb.syntax.hasSuffix("[<text>]"))
    }
  }

  @Test("too few words, too many words and missing text are refused as the table says")
  func countsFromTheTable() {
    for verb in Verb.allCases {
      let spec = verb.spec
      if spec.words.lowerBound > 0 {
        let line = ([verb.rawValue] + Array(repeating: "1", count: spec.words.lowerBound - 1))
          .joined(separator: " ")
        guard case .failure(let error) = RequestParser.parse(line) else {
          Issue.record("\(line) was accepted")
          continue
        }
        #expect(error.code == .syntax && error.text.contains(spec.syntax), "\(line)")
      }
      if !spec.takesText {
        let line = ([verb.rawValue] + Array(repeating: "#a", count: spec.words.upperBound + 1))
          .joined(separator: " ")
        guard case .failure(let error) = RequestParser.parse(line) else {
          Issue.record("\(line) was accepted")
          continue
        }
        #expect(error.code == .syntax && error.text.hasPrefix("too many words"), "\(line)")
      }
    }
  }
}

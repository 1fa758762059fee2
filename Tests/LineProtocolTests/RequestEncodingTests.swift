import LineProtocol
import Testing

private let ops = Target.room(RoomName("#ops")!)
private let longestRoom = RoomName("#" + String(repeating: "z", count: RoomName.maximumLength))!
private let longestUser = String(repeating: "u", count: UserName.maximumLength)
/// A user of another host, `user@node`, both at their longest (chatbroker(7) since 1.3).
private let remoteUser = Target("@" + longestUser + "@" + String(repeating: "n", count: 32))!
private let newestID = MessageID(value: MessageID.maximumValue)  // zzzzzzzzzzzz

/// Texts that are easy to get wrong on the way to a line and back: a
/// leading colon (the parser removes exactly one), spaces at either end,
/// TAB, words that look like a request, and UTF-8 of every length.
private let trickyTexts = [
  "hi", ":-)", "::", ": after a colon", "  two spaces before", "trailing  ", "\tindented",
  "a\tb", "a :b", "SAY #ops nested", "x", "héllo wörld → 🎉", "日本語のテキスト",
  "\u{A0}\u{C5}\u{100}\u{2026}", "👩‍👩‍👧‍👦 family", String(repeating: "ü", count: 500),
]

/// Well-formed requests of every verb, each as the parser gives it.
private let requests: [Request] =
  trickyTexts.flatMap { text -> [Request] in
    [
      .say(ops, text: text), .say(.user("bob"), text: text), .say(remoteUser, text: text),
      .notice(ops, text: text), .notice(.user("bob"), text: text),
      .reply(ops, to: newestID, text: text), .reply(remoteUser, to: MessageID("k3")!, text: text),
      .amend(ops, newestID, text: text),
      .sayAt(ops, when: "+1h30m", text: text),
      .sayEvery(.room(longestRoom), rule: "weekdays@09:00/Europe/Berlin", text: text),
      .edit(newestID, text: text),
    ]
  } + [
    .join(longestRoom), .part(RoomName("#a.b_c-9")!), .who(longestRoom),
    .action(.room(longestRoom), text: "waves"), .redact(.user("bob"), MessageID("k3")!),
    .block(ops, text: "make: ok\n\n  all \\ 42 tests passed\n"),
    .block(.user("bob"), text: String(repeating: "line\n", count: 99) + "last"),
    .block(ops, text: #"one line with a \"#),
    .thread(ops, newestID, count: 50), .thread(.user("bob"), MessageID("k3")!, count: 1000),
    .react(ops, newestID, reaction: "👍"), .react(ops, newestID, reaction: "+1", removed: true),
    .react(.user("bob"), MessageID("k3")!, reaction: String(repeating: "x", count: 32)),
    .topic(longestRoom), .away(nil), .away("at lunch: back at 14:00"),
    .setTopic(longestRoom, text: ":a topic: with colons"),
    .setTopic(RoomName("#a")!, text: ""),
    .joinPrivate(longestRoom, .group(String(repeating: "g", count: 32))),
    .joinPrivate(RoomName("#ops")!, .invited), .invite(longestRoom, user: longestUser),
    .access(longestRoom), .setAccess(longestRoom, nil), .setAccess(longestRoom, .group("ops")),
    .sayAt(.user(longestUser), when: "2026-12-24T18:00:00+01:00", text: "merry"),
    .sayAt(ops, when: "@1798131600", text: "x"),
    .sayEvery(ops, rule: "mon,wed@18:00,until:2027-03-01", text: "retro"),
    .history(ops, count: 50, anchor: nil), .history(ops, count: 1, anchor: .before(newestID)),
    .history(.user("bob"), count: Int.max, anchor: .after(MessageID("0")!)),
    .history(remoteUser, count: 1000, anchor: .after(MessageID("z00000000001")!)),
    .search(nil, count: 20, before: nil, words: "deploy failed"),
    .search(ops, count: 100, before: newestID, words: "BEFORE 12 :café"),
    .search(.user("bob"), count: 1, before: MessageID("k3")!, words: "x"),
    .conversations, .markRead(ops, MessageID("8f3k2")!), .markRead(remoteUser, newestID),
    .readMarker(ops), .markReadAt(remoteUser, Timestamp(rfc3339: "2026-12-03T21:14:06.477Z")!),
    .scheduled(nil), .scheduled(.user("bob")), .cancel(MessageID("8f3k3")!),
    .reschedule(MessageID("q")!, when: "18:00"),
    .reschedule(MessageID("q")!, when: "every:15m,count:10"), .rooms(after: nil),
    .skip(MessageID("q")!, occurrence: "2026-12-24T09:00:00.000Z"),
    .replace(
      MessageID("q")!, occurrence: "2026-12-24T09:00:00.000Z", when: "2026-12-23T09:00Z",
      text: ":early: this week"),
    .rooms(after: longestRoom), .ping(token: nil), .ping(token: "x:y"), .ping(token: "ünï"),
    .help, .quit(), .quit(reason: "gone home"), .part(RoomName("#a")!, reason: "lunch: back at 2"),
    .web(revoke: false), .web(revoke: true),
    .joinKeyed(longestRoom, key: String(repeating: "k", count: 32)),
    .mode(longestRoom), .bans(RoomName("#ops")!),
    .setMode(
      RoomName("#ops")!,
      [
        ModeChange(adding: true, letter: .op, argument: longestUser),
        ModeChange(adding: false, letter: .voice, argument: "bob"),
        ModeChange(adding: false, letter: .key),
        ModeChange(adding: true, letter: .limit, argument: "10"),
        ModeChange(adding: true, letter: .topicLock),
        ModeChange(adding: false, letter: .ban, argument: "*!*@*"),
      ]),
    .kick(longestRoom, user: longestUser, reason: ":spam: go"),
    .kick(RoomName("#ops")!, user: "bob", reason: nil),
  ]

private func parsed(_ bytes: [UInt8]) -> Result<Request, RequestError> {
  var framer = LineFramer()
  framer.append(bytes)
  guard let frame = framer.next() else {
    return .failure(RequestError(verb: "-", code: .syntax, text: "no line was framed"))
  }
  return LineCodec.request(from: frame, maximumLineBytes: framer.maximumLineBytes)
}

@Suite("LineCodec: requests encoded as lines that RequestParser reads back")
struct RequestEncodingTests {
  @Test("the examples cover every verb")
  func coversEveryVerb() {
    #expect(Set(requests.map(\.verb)) == Set(Verb.allCases))
  }

  @Test(
    "every well-formed request, framed and parsed again, is the same request", arguments: requests)
  func roundTrips(_ request: Request) throws {
    let line = LineCodec.encode(request)
    #expect(line.last == UInt8(ascii: "\n"))
    #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
    try #expect(parsed(line).get() == request)
    #expect(LineCodec.line(request) + "\n" == String(decoding: line, as: UTF8.self))
  }

  @Test(
    "any line the parser accepts, encoded again, reads as the same request", arguments: goodLines)
  func reencodesParsedLines(_ good: GoodLine) throws {
    let request = try RequestParser.parse(good.line).get()
    try #expect(RequestParser.parse(LineCodec.line(request)).get() == request)
  }

  @Test("the lines are written the one way chatbroker(7) shows them")
  func canonicalLines() {
    let lines: [(Request, String)] = [
      (.say(ops, text: "hello :)"), "SAY #ops :hello :)"),
      (.say(ops, text: ":-)"), "SAY #ops ::-)"),
      (.sayAt(.user("bob"), when: "+10m", text: "tea"), "SAYAT @bob +10m :tea"),
      (
        .sayEvery(ops, rule: "weekdays@09:00/Europe/Berlin", text: "stand-up"),
        "SAYEVERY #ops weekdays@09:00/Europe/Berlin :stand-up"
      ),
      (.history(ops, count: 50, anchor: nil), "HISTORY #ops 50"),
      (
        .history(ops, count: 1000, anchor: .after(MessageID("8f3k2")!)),
        "HISTORY #ops 1000 AFTER 8f3k2"
      ),
      (.history(ops, count: 5, anchor: .before(MessageID("a")!)), "HISTORY #ops 5 BEFORE a"),
      (.markRead(ops, MessageID("8")!), "MARKREAD #ops 8"),
      (.readMarker(ops), "MARKREAD #ops"),
      (
        .markReadAt(ops, Timestamp(rfc3339: "2026-12-03T21:14:06.477Z")!),
        "MARKREAD #ops 2026-12-03T21:14:06.477Z"
      ),
      (.rooms(after: RoomName("#m")!), "ROOMS AFTER #m"),
      (.reschedule(MessageID("q")!, when: "18:00"), "RESCHEDULE q 18:00"),
      (.edit(MessageID("q")!, text: "new"), "EDIT q :new"),
      (.cancel(MessageID("q")!), "CANCEL q"),
      (.scheduled(nil), "SCHEDULED"),
      (.ping(token: "7"), "PING 7"),
      (.web(revoke: false), "WEB"), (.web(revoke: true), "WEB REVOKE"),
      (.join(RoomName("#ops")!), "JOIN #ops"),
    ]
    for (request, line) in lines {
      #expect(LineCodec.line(request) == line)
    }
  }

  @Test("a text of the largest size that fits is one line of 4096 bytes; a byte more is TOOLONG")
  func longestLine() throws {
    for request in [
      Request.say(remoteUser, text: ""), .edit(newestID, text: ""),
      .sayEvery(.room(longestRoom), rule: "weekdays@09:00/Europe/Berlin", text: ""),
    ] {
      let room = LineCodec.textCapacity(of: request)
      func filled(_ count: Int) -> Request {
        // Three-byte characters and ASCII to fill the rest exactly.
        let text =
          String(repeating: "€", count: count / 3) + String(repeating: "e", count: count % 3)
        return switch request {
        case .say(let target, _): .say(target, text: text)
        case .edit(let id, _): .edit(id, text: text)
        case .sayEvery(let target, let rule, _): .sayEvery(target, rule: rule, text: text)
        default: request
        }
      }
      let longest = LineCodec.encode(filled(room))
      #expect(longest.count == 4096 + 1)
      try #expect(parsed(longest).get() == filled(room))
      guard case .failure(let error) = parsed(LineCodec.encode(filled(room + 1))) else {
        Issue.record("a line of 4097 bytes was read")
        continue
      }
      #expect(error.code == .tooLong)
    }
  }

  @Test("the IRC gateway's own requests have no line")
  func ircOnlyRequests() {
    let point = HistoryPoint.message(MessageID("a")!)
    let typing = ClientTags([ClientTags.Tag("+typing", "active")])
    #expect(!Request.tagged(.notice(ops, text: "x"), typing).hasLine)
    #expect(!Request.signal(ops, typing).hasLine)
    #expect(!Request.history(ops, count: 5, anchor: .around(point)).hasLine)
    #expect(requests.allSatisfy { $0.hasLine })
  }
}

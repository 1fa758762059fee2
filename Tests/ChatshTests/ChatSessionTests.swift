import Foundation
import LineProtocol
import Testing

@testable import ChatClient

/// The chat screen's behaviour, fed broker lines without a broker.
@Suite struct ChatSessionTests {
  final class Harness {
    var sent: [String] = []
    var bells = 0
    var now = Timestamp(milliseconds: 1_796_061_600_000)
    let session: ChatSession

    init(me: String = "alice", timeZone: String = "UTC") {
      let model = ChatModel(me: me)
      var box: Harness!
      session = ChatSession(
        model: model, clock: LocalClock(timeZone: TimeZone(identifier: timeZone)!),
        now: { box.now })
      box = self
      // The lines as the broker reads them: what the screen sends is the
      // wire of chatbroker(7), so the tests compare it as text.
      session.send = { [unowned self] in self.sent.append(LineCodec.line($0)) }
      session.bell = { [unowned self] in self.bells += 1 }
    }

    func feed(_ lines: String...) {
      for line in lines { session.handle(ServerLine(parsing: line)) }
    }
  }

  @Test(
    "the screen joins its rooms, loads 50 lines of history each and lists members, rooms and what is scheduled"
  )
  func startJoinsAndLoadsHistory() {
    let harness = Harness()
    harness.session.start(targets: ["#Ops", "@bob"])
    #expect(
      harness.sent == [
        "JOIN #ops", "WHO #ops", "ACCESS #ops", "HISTORY #ops 50", "HISTORY @bob 50",
        "CONVERSATIONS", "SCHEDULED", "ROOMS",
      ])
    harness.feed(
      "OK JOIN #ops 2", "MEMBER #ops alice", "MEMBER #ops bob", "OK WHO #ops 2",
      "OK ACCESS #ops public",
      "MSG #ops 9 2026-11-30T18:00:05.000Z bob :live one",
      "HIST #ops 7 2026-11-30T17:00:00.000Z bob :older",
      "HIST #ops 9 2026-11-30T18:00:05.000Z bob :live one", "OK HISTORY #ops 2",
      "OK HISTORY @bob 0", "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    let ops = harness.session.model.find("#ops")!
    #expect(ops.members == ["alice", "bob"])
    #expect(ops.entries.count == 2)
    #expect(ops.oldestMessageID == "7")
  }

  @Test(
    "/reply answers the last message by someone else, or message ID; Tab offers ids; OK shows it as mine"
  )
  func replyCommand() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 7 2026-11-30T17:00:00.000Z bob :who deploys?",
      "HIST #ops 8 2026-11-30T17:01:00.000Z carol :not me", "OK HISTORY #ops 2",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/reply me, at six")
    #expect(harness.sent.last == "REPLY #ops 8 :me, at six")
    harness.session.submit("/reply 7 me again")
    #expect(harness.sent.last == "REPLY #ops 7 :me again")
    harness.session.submit("/reply 99 is not shown here")
    #expect(harness.sent.last == "REPLY #ops 8 :99 is not shown here", "an unknown id is text")
    #expect(harness.session.completions(for: "", isFirst: false, line: "/reply ") == ["8", "7"])
    harness.feed("OK REPLY a1 2026-11-30T18:00:01.000Z")
    let entries = harness.session.model.find("#ops")!.entries
    guard case .message(let mine) = entries.last else {
      Issue.record("no message shown for the reply")
      return
    }
    #expect(mine.id == "a1" && mine.replyTo == "8" && mine.text == "me, at six")
    harness.feed("MSG #ops 9 2026-11-30T18:00:02.000Z bob REPLY a1 :great")
    guard case .message(let theirs) = harness.session.model.find("#ops")!.entries.last else {
      Issue.record("no message shown for bob's reply")
      return
    }
    #expect(theirs.replyTo == "a1")
  }

  @Test(
    "/thread shows the thread the last reply here belongs to, or message ID's, as a notice; none yet says so"
  )
  func threadCommand() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 7 2026-11-30T17:00:00.000Z bob :who deploys?",
      "HIST #ops 8 2026-11-30T17:01:00.000Z carol REPLY 7 :not me",
      "HIST #ops 9 2026-11-30T17:02:00.000Z dave :lunch?", "OK HISTORY #ops 3",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    func notices() -> [String] {
      harness.session.model.find("#ops")!.entries.compactMap { entry in
        if case .notice(let text, _, _) = entry { return text }
        return nil
      }
    }
    harness.session.submit("/thread")
    #expect(harness.sent.last == "THREAD #ops 7 50", "the thread of the last reply shown")
    harness.feed(
      "HIST #ops 7 2026-11-30T17:00:00.000Z bob :who deploys?",
      "HIST #ops 8 2026-11-30T17:01:00.000Z carol REPLY 7 :not me",
      "HIST #ops 10 2026-11-30T17:03:00.000Z erin REPLY 7 BLOCK :me\\nafter lunch",
      "OK THREAD #ops 7 2 MORE")
    let shown = notices().last ?? ""
    #expect(shown.hasPrefix("2 replies to:\n"), "\(shown)")
    #expect(shown.contains("bob: who deploys?"))
    #expect(shown.contains("  ↳ ") && shown.contains("carol: not me"))
    #expect(shown.contains("erin: me ↵ after lunch"), "a block on one line: \(shown)")
    #expect(!shown.contains("lunch?"), "dave's line answers nothing")
    #expect(shown.hasSuffix("(more replies follow: chatsh thread -n N shows more)"))
    #expect(
      !harness.session.model.find("#ops")!.entries.contains { entry in
        if case .message(let message) = entry { return message.id == "10" }
        return false
      }, "a thread's lines are no new messages of the conversation")

    harness.session.submit("/thread 9")
    #expect(harness.sent.last == "THREAD #ops 9 50")
    harness.feed("HIST #ops 9 2026-11-30T17:02:00.000Z dave :lunch?", "OK THREAD #ops 9 0")
    #expect(notices().last?.hasPrefix("no replies yet to:\n") == true, "\(notices())")
    harness.session.submit("/thread 77")
    harness.feed("ERR THREAD NOSUCHMSG :no message 77 in the history of #ops")
    #expect(notices().last?.contains("thread of 77: no message 77") == true, "\(notices())")
    #expect(
      harness.session.completions(for: "", isFirst: false, line: "/thread ") == ["9", "8", "7"])
  }

  @Test("/amend changes my last line here, or line ID; an AMEND line changes someone's in place")
  func amendCommand() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 7 2026-11-30T17:00:00.000Z alice :deploy at 1800",
      "HIST #ops 8 2026-11-30T17:01:00.000Z bob :ok", "OK HISTORY #ops 2",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/amend deploy at 18:00")
    #expect(harness.sent.last == "AMEND #ops 7 :deploy at 18:00")
    #expect(harness.session.completions(for: "", isFirst: false, line: "/amend ") == ["7"])
    harness.feed("OK AMEND #ops 7")
    func shown(_ id: String) -> ChatMessage? {
      for case .message(let message) in harness.session.model.find("#ops")!.entries
      where message.id == id {
        return message
      }
      return nil
    }
    #expect(shown("7")?.text == "deploy at 18:00" && shown("7")?.isEdited == true)
    harness.session.submit("/fix 8 not mine")
    #expect(harness.sent.last == "AMEND #ops 7 :8 not mine", "bob's id is no id of mine: text")
    harness.feed("AMEND #ops 8 bob :ok, watching")
    #expect(shown("8")?.text == "ok, watching" && shown("8")?.isEdited == true)
  }

  @Test(
    "/react puts a reaction on the last line by someone else, or line ID; OK, REACT and UNREACT change the counts, never unread"
  )
  func reactCommand() {
    let harness = Harness()
    harness.session.start(targets: ["#ops", "#dev"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 7 2026-11-30T17:00:00.000Z bob REACTIONS 👍=carol+dave,lol=carol :deploy at 1800",
      "HIST #ops 8 2026-11-30T17:01:00.000Z alice :ok", "OK HISTORY #ops 2",
      "OK JOIN #dev 1", "OK WHO #dev 0", "OK ACCESS #dev public",
      "HIST #dev 3 2026-11-30T17:00:00.000Z bob :build is red", "OK HISTORY #dev 1",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    func reactions(_ room: String, _ id: String) -> [ReactionTally]? {
      for case .message(let message) in harness.session.model.find(room)!.entries
      where message.id == id {
        return message.reactions
      }
      return nil
    }
    #expect(
      reactions("#ops", "7")
        == [
          ReactionTally(reaction: "👍", users: ["carol", "dave"]),
          ReactionTally(reaction: "lol", users: ["carol"]),
        ])
    harness.session.submit("/react 👍")
    #expect(harness.sent.last == "REACT #ops 7 👍", "bob's line, not my own last one")
    harness.feed("OK REACT #ops 7 👍")
    #expect(reactions("#ops", "7")?.first?.users == ["carol", "dave", "alice"])
    harness.session.submit("/react 8 +1")
    #expect(harness.sent.last == "REACT #ops 8 +1")
    harness.feed("ERR REACT NOSUCHMSG :no message 8 in the history of #ops")
    #expect(
      harness.session.model.current.entries.last?.noticeText
        == "could not put +1 on 8: no message 8 in the history of #ops")
    harness.session.submit("/unreact 👍")
    #expect(harness.sent.last == "UNREACT #ops 7 👍", "the line that has my 👍")
    harness.feed("OK UNREACT #ops 7 👍")
    #expect(reactions("#ops", "7")?.first?.users == ["carol", "dave"])
    let sentBefore = harness.sent.count
    harness.session.submit("/react two words here")
    harness.session.submit("/react a,b")
    #expect(harness.sent.count == sentBefore, "no request for what is no reaction")
    #expect(
      harness.session.model.current.entries.last?.noticeText?.hasPrefix("a,b is no reaction")
        == true)
    #expect(
      Set(harness.session.completions(for: "", isFirst: false, line: "/react "))
        == Set(["8", "7"] + ChatSession.quickReactions))
    #expect(
      harness.session.completions(for: "", isFirst: false, line: "/react 7 ")
        == ChatSession.quickReactions)

    // Someone reacts in a room not shown: the count changes, nothing is unread, nothing rings.
    harness.feed("REACT #dev 3 carol 👀", "REACT #dev 3 dave 👀", "UNREACT #dev 3 carol 👀")
    harness.feed("REACT #dev 3 alice 🔥")
    #expect(
      reactions("#dev", "3")
        == [
          ReactionTally(reaction: "👀", users: ["dave"]),
          ReactionTally(reaction: "🔥", users: ["alice"]),
        ])
    #expect(harness.session.model.find("#dev")!.unread == 0 && harness.bells == 0)
    harness.feed("UNREACT #dev 3 dave 👀")
    #expect(reactions("#dev", "3") == [ReactionTally(reaction: "🔥", users: ["alice"])])
    #expect(harness.session.model.find("#dev")!.unread == 0 && harness.bells == 0)
    _ = harness.session.model.switchTo("#dev")
    #expect(harness.session.completions(for: "", isFirst: false, line: "/unreact ") == ["3", "🔥"])
    #expect(
      OutputFormat.json(
        ServerLine(
          parsing: "HIST #ops 7 2026-11-30T17:00:00.000Z bob REACTIONS 👍=carol+dave,lol=carol :x"
        ).historyMessage!
      )
      .hasSuffix(#","reactions":{"👍":["carol","dave"],"lol":["carol"]}}"#))
  }

  @Test(
    "a typed line shows as mine once the broker says OK; // sends a leading slash; an ERR shows inline"
  )
  func sayAddsOwnMessageOnOK() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("hello :)")
    harness.session.submit("//slash")
    #expect(harness.sent.suffix(2) == ["SAY #ops :hello :)", "SAY #ops :/slash"])
    harness.feed("OK SAY a1 2026-11-30T18:00:01.000Z", "ERR SAY BADCHAR :no")
    let entries = harness.session.model.find("#ops")!.entries
    #expect(entries.count == 2)
    if case .message(let message) = entries[0] {
      #expect(message.user == "alice" && message.text == "hello :)" && message.id == "a1")
    }
    if case .notice(let text, _, let isError) = entries[1] {
      #expect(isError && text.contains("/slash") && text.contains("no"))
    }
  }

  @Test("/at 20:00 and /later 10m are sent as UTC instants of the user's own zone")
  func atResolvesLocalClockTimeInTheUsersZone() {
    let harness = Harness(timeZone: "Europe/Berlin")
    harness.session.start(targets: ["#ops"])
    harness.session.submit("/at 20:00 deploy now")
    // 20:00 in Berlin (UTC+1 in November) is 19:00Z.
    #expect(harness.sent.last == "SAYAT #ops 2026-11-30T19:00:00.000Z :deploy now")
    harness.session.submit("/later 10m tea")
    #expect(harness.sent.last == "SAYAT #ops 2026-11-30T18:10:00.000Z :tea")
  }

  @Test("/at takes local dates: tomorrow 09:00, a weekday, YYYY-MM-DD HH:MM, in the user's zone")
  func atTakesLocalDates() {
    // Monday 2026-11-30 19:00 in Berlin (18:00Z).
    let harness = Harness(timeZone: "Europe/Berlin")
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/at tomorrow 09:00 stand-up")
    #expect(harness.sent.last == "SAYAT #ops 2026-12-01T08:00:00.000Z :stand-up")
    harness.session.submit("/at 2026-12-24 18:00 party")
    #expect(harness.sent.last == "SAYAT #ops 2026-12-24T17:00:00.000Z :party")
    harness.session.submit("/at mon 09:00 week starts")
    #expect(harness.sent.last == "SAYAT #ops 2026-12-07T08:00:00.000Z :week starts")
    harness.session.submit("/at Monday 20:00 still today")
    #expect(harness.sent.last == "SAYAT #ops 2026-11-30T19:00:00.000Z :still today")
    let before = harness.sent.count
    harness.session.submit("/at today 10:00 too late")
    harness.session.submit("/at tomorrow noon x")
    #expect(harness.sent.count == before)
    let notices = harness.session.model.find("#ops")!.entries.compactMap { entry -> String? in
      if case .notice(let text, _, true) = entry { return text }
      return nil
    }
    #expect(notices.contains { $0.contains("in the past") && $0.contains("19:00") })
    #expect(notices.contains { $0.contains("comes a time such as 09:00") })
  }

  @Test("a broker error's UTC times are shown on the user's clock")
  func errorTimesAreLocal() {
    let harness = Harness(timeZone: "Europe/Berlin")
    #expect(
      harness.session.localTimes("due 2026-11-30T20:00:00.000Z is taken.")
        == "due 21:00 is taken.")
  }

  @Test("/msg to a user that does not exist reports the error and opens nothing")
  func msgToNoSuchUserOpensNothing() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/msg @nosuchuser hello")
    #expect(harness.sent.last == "SAY @nosuchuser :hello")
    harness.feed("ERR SAY NOSUCHUSER :there is no user nosuchuser")
    #expect(harness.session.model.find("@nosuchuser") == nil)
    #expect(harness.session.model.current.name == "#ops")
    harness.session.submit("/msg @bob hi")
    harness.feed("OK SAY b1 2026-11-30T18:00:01.000Z")
    #expect(harness.session.model.current.name == "@bob")
    #expect(harness.sent.last == "HISTORY @bob 50")
  }

  @Test(
    "after a reconnect: rejoin, fetch what was missed after the newest id, resend only what did not arrive"
  )
  func reconnectFetchesMissedAndResends() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 5 2026-11-30T17:00:00.000Z bob :old", "OK HISTORY #ops 1",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("arrived before the crash")
    harness.session.submit("never arrived")
    harness.session.connectionLost()
    harness.session.submit("typed while away")
    harness.sent = []
    harness.feed("HELLO 1.1.0 alice :welcome")
    #expect(
      harness.sent == [
        "JOIN #ops", "WHO #ops", "ACCESS #ops", "HISTORY #ops 1000 AFTER 5", "HISTORY #ops 1",
        "SCHEDULED", "CONVERSATIONS",
      ])
    // A reply of the old connection must not be taken for the new JOIN's:
    // the new one's replies come in order.
    harness.feed(
      "OK JOIN #ops 2", "OK WHO #ops 0", "OK ACCESS #ops public",
      "MSG #ops 9 2026-11-30T18:00:09.000Z bob :live",
      "HIST #ops 6 2026-11-30T17:59:00.000Z alice :arrived before the crash",
      "HIST #ops 7 2026-11-30T17:59:30.000Z bob :missed", "OK HISTORY #ops 2")
    #expect(harness.sent.suffix(2) == ["SAY #ops :never arrived", "SAY #ops :typed while away"])
    let texts = harness.session.model.find("#ops")!.entries.compactMap { entry -> String? in
      if case .message(let message) = entry { return message.text }
      return nil
    }
    #expect(texts == ["old", "arrived before the crash", "missed", "live"])
  }

  @Test(
    "after a reconnect, the lines shown get what changed while away: new text, reactions, lines taken back"
  )
  func reconnectRefreshesShownLines() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 5 2026-11-30T17:00:00.000Z bob :deploy at 1800",
      "HIST #ops 6 2026-11-30T17:01:00.000Z carol :oops, wrong room",
      "HIST #ops 7 2026-11-30T17:02:00.000Z dave :ship it?", "OK HISTORY #ops 3",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.connectionLost()
    harness.sent = []
    harness.feed("HELLO 1.6.0 alice :welcome")
    #expect(harness.sent.contains("HISTORY #ops 3"), "\(harness.sent)")
    harness.feed(
      "OK JOIN #ops 2", "OK WHO #ops 0", "OK ACCESS #ops public",
      "HIST #ops 8 2026-11-30T17:59:00.000Z bob :missed", "OK HISTORY #ops 1",
      "HIST #ops 6 2026-11-30T17:01:00.000Z carol REDACTED :",
      "HIST #ops 7 2026-11-30T17:02:00.000Z dave REACTIONS 👍=bob :ship it?",
      "HIST #ops 8 2026-11-30T17:59:00.000Z bob EDITED :missed, and changed",
      "OK HISTORY #ops 3")
    let shown = harness.session.model.find("#ops")!.entries.compactMap { entry -> ChatMessage? in
      if case .message(let message) = entry { return message }
      return nil
    }
    #expect(shown.map(\.id) == ["5", "7", "8"], "carol's line was taken back while away")
    #expect(shown.first?.text == "deploy at 1800" && shown.first?.isEdited == false)
    #expect(
      shown[1].reactions.map(\.reaction) == ["👍"] && shown[1].reactions.first?.users == ["bob"])
    #expect(shown[2].text == "missed, and changed" && shown[2].isEdited)
  }

  @Test(
    "catch-up on start: my conversations from the broker, unread counts, the new line, MARKREAD once seen"
  )
  func catchUpOnStart() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: [], remembered: ["@dave"])
    #expect(harness.sent == ["CONVERSATIONS", "SCHEDULED", "ROOMS"])
    harness.sent = []
    harness.feed(
      "CONV #retro 8 2026-11-30T17:59:00.000Z 5 2 1",
      "CONV #zen 3 2026-11-30T10:00:00.000Z 3 0 0",
      "CONV @carol 9 2026-11-30T17:58:30.000Z - 1 1",
      "CONV @dave 2 2026-11-29T10:00:00.000Z 2 0 0",
      "CONV @erin 1 2026-11-28T10:00:00.000Z 1 0 0",
      "OK CONVERSATIONS 5", "OK SCHEDULED 0", "OK ROOMS 0")
    let model = harness.session.model
    // Rooms, direct conversations with something unread, and those remembered;
    // the one with the newest message is shown.
    #expect(model.conversations.map(\.name) == ["#retro", "#zen", "@carol", "@dave"])
    #expect(model.current.name == "#retro")
    #expect(
      model.otherUnread.map { "\($0.name) \($0.unread)\($0.mentioned ? "!" : "")" } == ["@carol 1!"]
    )
    #expect(harness.sent.contains("HISTORY #retro 50"))
    harness.feed(
      "OK JOIN #retro 2", "OK WHO #retro 0", "OK ACCESS #retro public",
      "HIST #retro 5 2026-11-30T17:00:00.000Z carol :what went well?",
      "HIST #retro 7 2026-11-30T17:58:00.000Z bob :mine is not unread",
      "HIST #retro 8 2026-11-30T17:59:00.000Z carol :bob: you fixed the build",
      "OK HISTORY #retro 3")
    let retro = model.find("#retro")!
    #expect(retro.newLineAfter == "5")
    let renderer = TranscriptRenderer(
      me: "bob", width: 60, now: harness.now, clock: harness.session.clock)
    let rows = renderer.render(retro.entries, newAfter: retro.newLineAfter).map(\.text)
    let newLine = rows.firstIndex { $0.contains(" new ") }
    let first = rows.firstIndex { $0.contains("what went well") }
    #expect(newLine != nil && first != nil && newLine! > first!)
    harness.sent = []
    harness.session.seenBottom(of: retro)
    harness.session.seenBottom(of: retro)
    #expect(harness.sent == ["MARKREAD #retro 8"])
    // Replies come in request order: the other conversations' first.
    harness.feed(
      "OK JOIN #zen 1", "OK WHO #zen 0", "OK ACCESS #zen public", "OK HISTORY #zen 0",
      "HIST @carol 9 2026-11-30T17:58:30.000Z carol :psst", "OK HISTORY @carol 1",
      "OK HISTORY @dave 0", "OK MARKREAD #retro 8")
    #expect(retro.readMarker == "8")
    // Another session of mine read @carol: its count goes.
    harness.feed("MARKREAD @carol 9")
    #expect(model.otherUnread.isEmpty)
  }

  @Test("a conversation named on the command line gets its new line too")
  func newLineForTargetsNamed() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: ["#retro"])
    harness.feed(
      "OK JOIN #retro 1", "OK WHO #retro 0", "OK ACCESS #retro public",
      "HIST #retro 5 2026-11-30T17:00:00.000Z carol :seen",
      "HIST #retro 8 2026-11-30T17:59:00.000Z carol :not seen", "OK HISTORY #retro 2",
      "CONV #retro 8 2026-11-30T17:59:00.000Z 5 1 0", "OK CONVERSATIONS 1")
    #expect(harness.session.model.find("#retro")?.newLineAfter == "5")
  }

  @Test("the bell rings for direct messages and mentions, bare name: too, never for my own lines")
  func bellForWhatIsForMe() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.feed("MSG #ops 1 2026-11-30T18:00:00.000Z carol :bob: look")
    #expect(harness.bells == 1)
    harness.feed("MSG @carol 2 2026-11-30T18:00:01.000Z carol :psst")
    #expect(harness.bells == 2)
    harness.feed("MSG #ops 3 2026-11-30T18:00:02.000Z bob :@bob talking to myself")
    harness.feed("MSG #ops 4 2026-11-30T18:00:03.000Z carol :nothing for bob")
    #expect(harness.bells == 2)
    harness.feed("MSG #other 5 2026-11-30T18:00:04.000Z bob :mine elsewhere")
    #expect(harness.session.model.find("#other")?.unread == 0)
  }

  @Test("/scheduled shows a table of what is pending (id, due time, text) and counts it as pending")
  func scheduledTableAndPendingCount() {
    let harness = Harness()
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/scheduled")
    harness.feed(
      "SCHED x1 #ops 2026-11-30T19:00:00.000Z 2026-11-30T17:00:00.000Z :deploy now",
      "OK SCHEDULED 1")
    #expect(harness.session.model.pending == ["x1"])
    guard let table = harness.session.model.home.entries.last?.noticeText else {
      Issue.record("no table")
      return
    }
    #expect(table.contains("x1") && table.contains("19:00") && table.contains("deploy now"))
  }

  @Test("a mention in another room rings once and counts unread; a plain line there does not ring")
  func mentionRingsAndCountsUnread() {
    let harness = Harness()
    harness.session.start(targets: ["#ops", "#dev"])
    harness.feed("MSG #dev 5 2026-11-30T18:00:00.000Z bob :@alice look")
    #expect(harness.bells == 1)
    let dev = harness.session.model.find("#dev")!
    #expect(dev.unread == 1 && dev.mentioned)
    harness.feed("MSG #ops 6 2026-11-30T18:00:00.000Z bob :no mention")
    #expect(harness.bells == 1)
    #expect(harness.session.model.find("#ops")!.unread == 0)
  }

  @Test("an unknown command, a bad room name or a bad time is answered inline and sends nothing")
  func unknownCommandsAndUsageAreInline() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    let before = harness.sent.count
    harness.session.submit("/frob")
    harness.session.submit("/join ops")
    harness.session.submit("/at whenever x")
    #expect(harness.sent.count == before)
    let errors = harness.session.model.find("#ops")!.entries.filter {
      if case .notice(_, _, true) = $0 { return true }
      return false
    }
    #expect(errors.count == 3)
  }

  @Test("Tab completes commands, my rooms and the members of the room")
  func completionCandidates() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 2", "MEMBER #ops bob", "MEMBER #ops alice", "OK WHO #ops 2",
      "OK ACCESS #ops public")
    #expect(harness.session.completions(for: "/j", isFirst: true).contains("/join"))
    #expect(harness.session.completions(for: "#", isFirst: false) == ["#ops"])
    #expect(harness.session.completions(for: "@b", isFirst: false) == ["@bob"])
    #expect(harness.session.completions(for: "b", isFirst: true) == ["bob"])
  }

  @Test(
    "a direct message that opens its conversation on the screen loads its history and is marked read once seen"
  )
  func directMessageArrivingIsMarkedRead() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    harness.feed("MSG @cat 2 2026-11-30T18:00:00.000Z cat :are you there?")
    let cat = harness.session.model.find("@cat")!
    #expect(harness.session.model.current === cat)
    #expect(harness.sent == ["HISTORY @cat 50"])
    harness.feed(
      "HIST @cat 1 2026-11-30T17:00:00.000Z cat :hello",
      "HIST @cat 2 2026-11-30T18:00:00.000Z cat :are you there?", "OK HISTORY @cat 2")
    harness.sent = []
    // The screen shows it to its bottom: the marker moves (chatbroker(7), MARKREAD).
    harness.session.seenBottom(of: cat)
    #expect(harness.sent == ["MARKREAD @cat 2"])
    #expect(cat.entries.count == 2)
  }

  @Test("`── new ──` goes above the first unread line when my own lines follow it")
  func newLineSkipsMyOwnLines() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: ["#ops", "#dev"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK JOIN #dev 1", "OK WHO #dev 0",
      "OK ACCESS #dev public",
      "OK HISTORY #ops 0",
      "HIST #dev 1 2026-11-30T17:00:00.000Z carol :seen before", "OK HISTORY #dev 1",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    // While #ops is shown: carol twice, and me (from another session) between.
    harness.feed(
      "MSG #dev 2 2026-11-30T17:10:00.000Z carol :first unread",
      "MSG #dev 3 2026-11-30T17:11:00.000Z bob :mine, from my phone",
      "MSG #dev 4 2026-11-30T17:12:00.000Z carol :second unread")
    let dev = harness.session.model.find("#dev")!
    #expect(dev.unread == 2)
    #expect(harness.session.model.switchTo("#dev"))
    #expect(dev.newLineAfter == "1")
  }

  @Test("/reschedule takes a day and a time as /at does; /at's error names those forms")
  func rescheduleTakesDayAndTime() {
    // Monday 2026-11-30 19:00 in Berlin (18:00Z).
    let harness = Harness(timeZone: "Europe/Berlin")
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/reschedule 3w5e tomorrow 09:30")
    #expect(harness.sent.last == "RESCHEDULE 3w5e 2026-12-01T08:30:00.000Z")
    harness.session.submit("/reschedule 3w5e 2026-12-02 09:30")
    #expect(harness.sent.last == "RESCHEDULE 3w5e 2026-12-02T08:30:00.000Z")
    harness.session.submit("/reschedule 3w5e 18:30")
    #expect(harness.sent.last == "RESCHEDULE 3w5e 2026-12-01T17:30:00.000Z")
    let before = harness.sent.count
    harness.session.submit("/reschedule 3w5e yesterday 10:00")
    harness.session.submit("/at yesterday 10:00 too late")
    #expect(harness.sent.count == before)
    let errors = harness.session.model.find("#ops")!.entries.compactMap { entry -> String? in
      if case .notice(let text, _, true) = entry { return text }
      return nil
    }
    #expect(errors.count == 2)
    #expect(errors.allSatisfy { $0.contains("tomorrow 09:30") })
  }

  @Test(
    "the pending count is asked for again, once at a time: a cancel in another session is counted")
  func pendingCountIsRefreshed() {
    let harness = Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0",
      "SCHED x1 #ops 2026-11-30T19:00:00.000Z 2026-11-30T17:00:00.000Z :deploy now",
      "SCHED x2 #ops 2026-11-30T20:00:00.000Z 2026-11-30T17:00:00.000Z :tea", "OK SCHEDULED 2",
      "OK ROOMS 0")
    #expect(harness.session.model.pending == ["x1", "x2"])
    harness.sent = []
    harness.session.refreshPending()
    harness.session.refreshPending()
    #expect(harness.sent == ["SCHEDULED"])
    // x2 was cancelled in another session, which gets no event for it.
    harness.feed(
      "SCHED x1 #ops 2026-11-30T19:00:00.000Z 2026-11-30T17:00:00.000Z :deploy now",
      "OK SCHEDULED 1")
    #expect(harness.session.model.pending == ["x1"])
    harness.session.refreshPending()
    #expect(harness.sent == ["SCHEDULED", "SCHEDULED"])
  }

  @Test(
    "started alone, the screen shows the conversation with the newest message, its counts as the broker says"
  )
  func startShowsTheMostRecentConversation() {
    let harness = Harness(me: "bob")
    harness.session.start(targets: [])
    harness.feed(
      "CONV #alpha 3 2026-11-30T10:00:00.000Z 3 0 0",
      "CONV #beta 8 2026-11-30T17:59:00.000Z 5 2 0",
      "CONV @cat 9 2026-11-30T12:00:00.000Z - 1 1", "OK CONVERSATIONS 3")
    let model = harness.session.model
    #expect(model.current.name == "#beta")
    #expect(model.find("#beta")?.newLineAfter == "5")
    #expect(model.find("#beta")?.unread == 0)
    #expect(model.otherUnread.map(\.name) == ["@cat"])
    #expect(model.windowList(fitting: 80) == "1:#alpha [2:#beta] 3:@cat 1!")
    // Named on the command line, the first named is shown instead.
    let named = Harness(me: "bob")
    named.session.start(targets: ["#alpha"])
    named.feed(
      "OK JOIN #alpha 1", "OK WHO #alpha 0", "OK ACCESS #alpha public", "OK HISTORY #alpha 0",
      "CONV #alpha 3 2026-11-30T10:00:00.000Z 3 0 0",
      "CONV #beta 8 2026-11-30T17:59:00.000Z 5 2 0", "OK CONVERSATIONS 2")
    #expect(named.session.model.current.name == "#alpha")
    #expect(named.session.model.find("#beta")?.unread == 2)
  }

  @Test(
    "the window list numbers every conversation, then only those with activity when it is too wide")
  func windowListFitsTheLine() {
    let model = ChatModel(me: "bob")
    for name in ["#ops", "#team-platform", "@cat", "#random"] { model.open(name) }
    #expect(model.windowList(fitting: 80) == "[1:#ops] 2:#team-platform 3:@cat 4:#random")
    model.find("@cat")!.unread = 2
    model.find("@cat")!.mentioned = true
    model.find("#random")!.unread = 14
    #expect(model.windowList(fitting: 80) == "[1:#ops] 2:#team-platform 3:@cat 2! 4:#random 14")
    #expect(model.windowList(fitting: 30) == "Act: 3:@cat 2! 4:#random 14")
    #expect(model.windowList(fitting: 16) == "Act: 3!,4")
    model.switchTo(index: 2)
    #expect(model.windowList(fitting: 80) == "1:#ops 2:#team-platform [3:@cat] 4:#random 14")
    // One conversation and nothing new: nothing to list.
    let alone = ChatModel(me: "bob")
    alone.open("#ops")
    #expect(alone.windowList(fitting: 80) == "")
  }

  @Test(
    "/join #room group=GROUP or invite creates it private; /invite lets a user in; /rooms marks it")
  func privateRooms() {
    let harness = Harness()
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    harness.session.submit("/join #ops group=ops")
    #expect(harness.sent.first == "JOIN #ops group=ops")
    #expect(harness.session.model.find("#ops")?.isPrivate == true, "the top line says (private)")
    harness.feed("OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops group=ops", "OK HISTORY #ops 0")
    #expect(harness.session.model.find("#ops")?.isPrivate == true, "as ACCESS says")
    harness.sent = []
    harness.session.submit("/invite carol")
    harness.session.submit("/invite #plan @bob")
    harness.session.submit("/join #x private")
    #expect(harness.sent == ["INVITE #ops carol", "INVITE #plan bob"])
    harness.feed("OK INVITE #ops carol", "ERR INVITE NOACCESS :#plan is not open to you")
    harness.sent = []
    harness.session.submit("/rooms")
    harness.session.model.find("#ops")?.isPrivate = false
    harness.feed("ROOM #ops 1 PRIVATE :deploy", "ROOM #pub 3", "OK ROOMS 2")
    #expect(harness.session.model.find("#ops")?.isPrivate == true, "as ROOMS says")
    let notices = harness.session.model.find("#ops")!.entries.compactMap { entry -> String? in
      if case .notice(let text, _, _) = entry { return text }
      return nil
    }
    #expect(notices.contains("carol may now read and join #ops"))
    #expect(
      notices.contains { $0.contains("could not invite bob to #plan: #plan is not open to you") })
    #expect(notices.contains { $0.hasPrefix("usage: /join #room [group=GROUP|invite]") })
    #expect(notices.contains("#ops  1 person  (private)  deploy\n#pub  3 people"))
  }

  @Test(
    "joining a room someone else made private asks ACCESS and says so; a broker before 1.4 is not asked again"
  )
  func joiningAPrivateRoomAsksItsAccess() {
    let harness = Harness()
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    harness.session.submit("/join #plan")
    #expect(harness.sent == ["JOIN #plan", "WHO #plan", "ACCESS #plan", "HISTORY #plan 50"])
    harness.feed("OK JOIN #plan 2", "OK WHO #plan 0", "OK ACCESS #plan invite")
    #expect(harness.session.model.find("#plan")?.isPrivate == true, "the top line says (private)")
    harness.feed("OK HISTORY #plan 0")
    harness.sent = []
    harness.session.submit("/join #old")
    harness.feed(
      "OK JOIN #old 1", "OK WHO #old 0", "ERR ACCESS UNKNOWN :no such request", "OK HISTORY #old 0")
    #expect(harness.session.model.find("#old")?.isPrivate == false)
    #expect(
      !harness.session.model.find("#old")!.entries.contains {
        if case .notice(_, _, true) = $0 { return true }
        return false
      }, "no error shown")
    harness.sent = []
    harness.session.submit("/join #older")
    #expect(harness.sent == ["JOIN #older", "WHO #older", "HISTORY #older 50"])
  }

  @Test(
    "/mode shows and changes a room's modes, /kick removes someone; MODE and KICK lines are shown")
  func moderation() {
    let harness = Harness()
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.session.submit("/join #ops")
    harness.feed("OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0")
    harness.sent = []
    harness.session.submit("/mode")
    harness.session.submit("/mode +o-v bob carol")
    harness.session.submit("/mode #ops +b")
    harness.session.submit("/kick bob spamming again")
    harness.session.submit("/mode +x")
    #expect(
      harness.sent == [
        "MODE #ops", "MODE #ops +o-v bob carol", "MODE #ops +b", "KICK #ops bob :spamming again",
      ])
    harness.feed(
      "OK MODE #ops +nt", "OK MODE #ops +o-v bob carol",
      "BAN #ops spam!*@* alice 2026-11-30T17:00:00.000Z", "OK MODE #ops +b 1",
      "ERR KICK NOTOPERATOR :you are not an operator of #ops",
      "MODE #ops carol +m", "KICK #ops dave carol :bye")
    let notices = harness.session.model.find("#ops")!.entries.compactMap { entry -> String? in
      if case .notice(let text, _, _) = entry { return text }
      return nil
    }
    #expect(notices.contains("#ops: +nt"))
    #expect(notices.contains("#ops: +o-v bob carol"))
    #expect(notices.contains("#ops bans spam!*@* (by alice)"))
    #expect(
      notices.contains { $0.contains("could not remove bob from #ops: you are not an operator") })
    #expect(notices.contains { $0.hasPrefix("x is not a mode") })
    #expect(notices.contains("carol set +m"))
    #expect(notices.contains("dave was removed by carol: bye"))
  }
}

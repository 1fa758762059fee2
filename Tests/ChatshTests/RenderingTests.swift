import Foundation
import LineProtocol
import TestSupport
import Testing

@testable import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// 2026-11-30T18:00:00Z, a Monday.
private let monday18 = Timestamp(milliseconds: 1_796_061_600_000)
private let utc = LocalClock(timeZone: TimeZone(identifier: "UTC")!)

private func message(_ user: String, _ text: String, at time: Timestamp, id: String = "")
  -> ChatMessage
{
  ChatMessage(
    target: "#ops", id: id.isEmpty ? "\(time.milliseconds)\(user)" : id, time: time,
    user: user, text: text)
}

@Suite struct RenderingTests {
  init() {
    setlocale(LC_CTYPE, "C.UTF-8")
  }

  @Test("message times read just now, minutes, hours, yesterday, a weekday, then a date")
  func relativeTimes() {
    let minute: Int64 = 60_000
    #expect(utc.relative(monday18, now: monday18 + 30_000) == "just now")
    #expect(utc.relative(monday18, now: monday18 + 2 * minute) == "2m")
    #expect(utc.relative(monday18, now: monday18 + 185 * minute) == "3h")
    #expect(
      utc.relative(monday18 + 4 * minute, now: monday18 + 24 * 60 * minute) == "yesterday 18:04")
    #expect(utc.relative(monday18, now: monday18 + 3 * 24 * 60 * minute) == "Mon 18:00")
    #expect(utc.relative(monday18, now: monday18 + 30 * 24 * 60 * minute) == "30 Nov 18:00")
  }

  @Test("relative times count days in the user's own zone")
  func relativeTimesFollowTheZone() {
    let tokyo = LocalClock(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
    // 18:00Z is 03:00 on Tuesday in Tokyo; 10 hours later is still Tuesday there.
    #expect(tokyo.relative(monday18, now: monday18 + 10 * 3_600_000) == "10h")
    #expect(utc.relative(monday18, now: monday18 + 10 * 3_600_000) == "yesterday 18:00")
  }

  @Test(
    "day separators say Today, Yesterday, the weekday and date, and the year when it is another")
  func dayTitles() {
    #expect(utc.dayTitle(monday18, now: monday18) == "Today")
    #expect(utc.dayTitle(monday18, now: monday18 + 86_400_000) == "Yesterday")
    #expect(utc.dayTitle(monday18, now: monday18 + 3 * 86_400_000) == "Monday 30 November")
    #expect(utc.dayTitle(monday18, now: monday18 + 40 * 86_400_000) == "Monday 30 November 2026")
  }

  @Test(
    "a reply starts a run under a dim quote of what it answers, cut to the width and cleaned; or names its id"
  )
  func replyQuote() {
    var renderer = TranscriptRenderer(me: "alice", width: 40, now: monday18 + 60_000, clock: utc)
    renderer.fullName = { _ in nil }
    var answer = message("bob", "on it", at: monday18 + 2000)
    answer.replyTo = "7"
    var mine = message("alice", "thanks", at: monday18 + 3000)
    mine.replyTo = "8"
    var lost = message("bob", "what was that?", at: monday18 + 4000)
    lost.replyTo = "gone1"
    let rows = renderer.render([
      .message(
        message(
          "bob", "who deploys \u{1B}[31mtoday, after the long meeting?", at: monday18, id: "7")),
      .message(message("bob", "hm", at: monday18 + 1000, id: "8")),
      .message(answer), .message(mine), .message(lost),
    ])
    let texts = rows.map(\.text)
    let quote = texts.firstIndex { $0.contains("↱") } ?? 0
    #expect(texts[quote] == "      ↱ bob: who deploys \u{FFFD}[31mtoday, a…", "\(texts)")
    #expect(
      rows[quote].segments.allSatisfy { $0.style == .dim || $0.text.allSatisfy { $0 == " " } })
    #expect(texts[quote + 1] == " (BO) bob · just now", "a reply starts a run")
    #expect(texts[quote + 2] == "      on it")
    #expect(texts[quote + 3].hasSuffix("↱ bob: hm") && texts[quote + 3].count == 39, "mine: right")
    #expect(texts.contains("      ↱ a reply to gone1"))
  }

  @Test("a changed line ends with a dim (edited), mine and others'")
  func editedMark() {
    var renderer = TranscriptRenderer(me: "alice", width: 40, now: monday18 + 60_000, clock: utc)
    renderer.fullName = { _ in nil }
    var theirs = message("bob", "deploy at 18:00", at: monday18)
    theirs.isEdited = true
    var mine = message("alice", "ok", at: monday18 + 1000)
    mine.isEdited = true
    let rows = renderer.render([.message(theirs), .message(mine)])
    let texts = rows.map(\.text)
    #expect(texts.contains("      deploy at 18:00 (edited)"), "\(texts)")
    #expect(texts.contains { $0.hasSuffix("ok (edited)") && $0.count == 39 }, "\(texts)")
    let edited = rows.first { $0.text.hasSuffix("18:00 (edited)") }?.segments.last
    #expect(edited?.style == .dim && edited?.text.hasSuffix("(edited)") == true)
  }

  @Test(
    "reactions are counted on a dim line under the message, on the right under mine, cleaned and cut to the width"
  )
  func reactionCounts() {
    var renderer = TranscriptRenderer(me: "alice", width: 40, now: monday18 + 60_000, clock: utc)
    renderer.fullName = { _ in nil }
    var theirs = message("bob", "deploy at 18:00", at: monday18)
    theirs.reactions = [
      ReactionTally(reaction: "👍", users: ["carol", "dave"]),
      ReactionTally(reaction: "lol", users: ["alice"]),
    ]
    var mine = message("alice", "ok", at: monday18 + 1000)
    mine.reactions = [ReactionTally(reaction: "🎉", users: ["bob"])]
    var crowded = message("carol", "vote", at: monday18 + 2000)
    crowded.reactions = (1...12).map { ReactionTally(reaction: "r\($0)", users: ["bob"]) }
    crowded.reactions.append(ReactionTally(reaction: "\u{1B}[2J\u{202E}", users: ["mallory"]))
    let rows = renderer.render([.message(theirs), .message(mine), .message(crowded)])
    let texts = rows.map(\.text)
    let text = texts.firstIndex(of: "      deploy at 18:00")
    #expect(text.map { texts[$0 + 1] } == "      👍 2  lol 1", "\(texts)")
    #expect(text.map { rows[$0 + 1].segments.allSatisfy { $0.style == .dim } } == true)
    let party = texts.firstIndex { $0.hasSuffix("🎉 1") }
    #expect(party.map { texts[$0 - 1].hasSuffix("ok") } == true, "under mine: \(texts)")
    #expect(party.map { rows[$0].width } == 39, "on the right")
    let cut = texts.first { $0.hasPrefix("      r1 1  r2 1") }
    #expect(cut?.hasSuffix("…") == true && cut.map { TextWidth.of($0) } == 39, "\(texts)")
    var hostile = crowded
    hostile.reactions = [ReactionTally(reaction: "\u{1B}[2J\u{202E}", users: ["mallory"])]
    let cleaned = renderer.render([.message(hostile)]).map(\.text)
    #expect(cleaned.contains("      \u{FFFD}[2J\u{FFFD} 1"), "\(cleaned)")
    #expect(!cleaned.joined().contains("\u{1B}"))
  }

  @Test(
    "the transcript: a day line, the sender with initials once per run of lines, my own lines on the right"
  )
  func transcriptLayout() {
    var renderer = TranscriptRenderer(
      me: "alice", width: 40, now: monday18 + 86_400_000 + 60_000, clock: utc)
    // Whether the host has a user bob, and what its GECOS says, must not matter.
    renderer.fullName = { _ in nil }
    let rows = renderer.render([
      .message(message("bob", "deploy starts", at: monday18)),
      .message(message("bob", "watch the graphs @alice", at: monday18 + 1000)),
      .message(message("alice", "on it", at: monday18 + 2000)),
      .message(message("bob", "thanks", at: monday18 + 86_400_000)),
    ]).map(\.text)
    #expect(rows[0].contains(" Yesterday "))
    #expect(rows[0].contains("───"))
    #expect(rows[1] == " (BO) bob · yesterday 18:00")
    #expect(rows[2] == "      deploy starts")
    #expect(rows[3] == "      watch the graphs @alice")
    // Own messages end at the right edge, with their own header.
    #expect(rows[4].hasSuffix("you · yesterday 18:00"))
    #expect(rows[5].hasSuffix("on it") && rows[5].count == 39)
    #expect(rows[6].contains(" Today "))
    #expect(rows[7] == " (BO) bob · 1m")
    #expect(rows[8] == "      thanks")
  }

  @Test(
    "`── new ──` is drawn above the first line from someone else, never above my lines or notices")
  func newLineOnlyAboveOthersLines() {
    var renderer = TranscriptRenderer(me: "alice", width: 40, now: monday18 + 60_000, clock: utc)
    renderer.fullName = { _ in nil }
    let read = Entry.message(message("bob", "read before", at: monday18, id: "1"))
    let mine = Entry.message(message("alice", "my own line", at: monday18 + 1000, id: "2"))
    let notice = Entry.notice("reconnected", time: monday18 + 2000, isError: false)
    let unread = Entry.message(message("bob", "unread one", at: monday18 + 3000, id: "3"))
    func above(_ entries: [Entry], newAfter: String) -> String? {
      let rows = renderer.render(entries, newAfter: newAfter).map(\.text)
      guard let index = rows.firstIndex(where: { $0.contains("── new ──") }) else { return nil }
      return rows.indices.contains(index + 1) ? rows[index + 1] : "(the end)"
    }
    // After the marker: my line and a notice, then bob's unread one.
    #expect(above([read, mine, notice, unread], newAfter: "1")?.contains("(BO) bob") == true)
    // No marker (""): above bob's first line, not above mine before it.
    #expect(above([mine, notice, unread], newAfter: "")?.contains("(BO) bob") == true)
    // Only my line and notices after the marker: no new line at all.
    #expect(above([read, mine, notice], newAfter: "1") == nil)
    #expect(above([mine, notice], newAfter: "") == nil)
  }

  @Test(
    "a notice table wraps each text under its column, and narrow, gives a long lead its own row")
  func noticeTableHangingIndent() {
    let table = NoticeTable(
      before: ["Commands:"],
      items: [
        .init(lead: "/ids", text: "show message ids (for /delete ID), or hide them again"),
        .init(lead: "/join #room [group=GROUP|invite]", text: "join a room and show it"),
      ])
    func texts(_ width: Int) -> [String] {
      table.rows(width: width, style: .notice).map { $0.map(\.text).joined() }
    }
    // 78 columns (an 80-column screen): each text beside its lead, at 34.
    #expect(
      texts(78) == [
        "Commands:",
        "/ids" + String(repeating: " ", count: 30) + "show message ids (for /delete ID), or hide",
        String(repeating: " ", count: 34) + "them again",
        "/join #room [group=GROUP|invite]  join a room and show it",
      ])
    // 48 columns: the texts keep 24, the long lead has its own row.
    #expect(
      texts(48) == [
        "Commands:",
        "/ids" + String(repeating: " ", count: 20) + "show message ids (for",
        String(repeating: " ", count: 24) + "/delete ID), or hide",
        String(repeating: " ", count: 24) + "them again",
        "/join #room [group=GROUP|invite]",
        String(repeating: " ", count: 24) + "join a room and show it",
      ])
    #expect(
      table.text.split(separator: "\n").last
        == "/join #room [group=GROUP|invite]  join a room and show it")
  }

  @Test("a message in another minute than the one above shows its clock time")
  func clockTimeWhenTheMinuteChanges() {
    var renderer = TranscriptRenderer(me: "alice", width: 40, now: monday18 + 600_000, clock: utc)
    renderer.fullName = { _ in nil }
    let rows = renderer.render([
      .message(message("bob", "one", at: monday18)),
      .message(message("bob", "same minute", at: monday18 + 20_000)),
      .message(message("bob", "two minutes on", at: monday18 + 125_000)),
      .message(message("alice", "mine", at: monday18 + 130_000)),
      .message(message("alice", "mine later", at: monday18 + 190_000)),
    ]).map(\.text)
    #expect(rows[2] == "      one")
    #expect(rows[3] == "      same minute")
    #expect(rows[4] == " 18:02 two minutes on")
    #expect(rows[6].hasSuffix("mine") && !rows[6].contains("18:"))
    #expect(rows[7].hasSuffix("18:03  mine later"))
  }

  @Test("mentions, links and room names in a text get their own styles")
  func mentionsAndLinksAreHighlighted() {
    let renderer = TranscriptRenderer(me: "alice", width: 60, now: monday18, clock: utc)
    let rows = renderer.render([
      .message(message("bob", "@alice see https://x.example/d in #ops, @carol", at: monday18))
    ])
    let styles = Dictionary(
      rows[2].segments.map { ($0.text, $0.style) }, uniquingKeysWith: { first, _ in first })
    // The whole message mentions me: "@alice" and the words after it are
    // drawn as one mention.
    #expect(styles["@alice see "] == .mention)
    #expect(styles["https://x.example/d"] == .link)
    #expect(styles["#ops"] == .room)
    #expect(styles["@carol"] == .room)
    let plain = renderer.render([.message(message("bob", "see #ops", at: monday18))])
    #expect(plain[2].segments.first { $0.text.contains("see") }?.style == .plain)
    #expect(StyledText.mentions("hey @Alice!", me: "alice"))
    #expect(!StyledText.mentions("mail alice@example.org", me: "alice"))
  }

  @Test("wide and combining characters take the columns they show in, and wrap by columns")
  func wideCharactersWrapByColumns() {
    #expect(TextWidth.of("日本語") == 6)
    #expect(TextWidth.of("e\u{301}") == 1)
    #expect(TextWidth.of("🎉") == 2)
    let lines = StyledText("日本語のテキスト", style: .plain).wrapped(width: 5)
    #expect(lines.map { String($0.map(\.0)) } == ["日本", "語の", "テキ", "スト"])
  }

  @Test("long lines wrap between words")
  func wordWrap() {
    let lines = StyledText("the quick brown fox jumps", style: .plain).wrapped(width: 10)
    #expect(lines.map { String($0.map(\.0)) } == ["the quick", "brown fox", "jumps"])
  }

  @Test("control characters in a text never reach the screen")
  func controlCharactersNeverReachTheScreen() {
    let renderer = TranscriptRenderer(me: "alice", width: 60, now: monday18, clock: utc)
    let rows = renderer.render([.message(message("bob", "a\u{1B}]0;pwned\u{7}b", at: monday18))])
    for row in rows {
      #expect(!row.text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }
  }

  @Test("initials come from a full name when the password database has one")
  func initialsFromFullNames() {
    #expect(UserStyle.initials(of: "Carol Cooper") == "CC")
    #expect(UserStyle.initials(of: "Carol Ann Cooper") == "CC")
    #expect(UserStyle.initials(of: "cbcarol") == "CB")
    #expect(UserStyle.displayName(for: "root") == nil)  // GECOS "root" says nothing more
    #expect(UserStyle.displayName(for: "no-such-user-here") == nil)
  }

  @Test("initials come from the login name, and each user keeps one colour")
  func initialsAndColours() {
    #expect(UserStyle.initials(of: "bob") == "BO")
    #expect(UserStyle.initials(of: "john.doe") == "JD")
    #expect(UserStyle.initials(of: "x") == "X")
    // A real user's come from the name the system gives, if it gives one.
    let system = UserStyle.displayName(for: "bob")
    #expect(UserStyle.initials(for: "bob") == UserStyle.initials(of: system ?? "bob"))
    #expect(UserStyle.colorIndex(for: "bob") == UserStyle.colorIndex(for: "bob"))
    #expect(UserStyle.colorIndex(for: "bob") < UserStyle.colorCount)
  }
}

/// Names from the password database: a real user with a GECOS full name.
@Suite("names from GECOS", .enabled(if: getuid() == 0, "needs root to create a Unix user"))
struct FullNameTests {
  @Test("a user whose GECOS says Carol Cooper shows as (CC) Carol Cooper (cbcarol)")
  func gecosFullName() throws {
    if getpwnam("cbcarol") == nil {
      let made = try runCommand(
        ["/usr/sbin/useradd"] + [
          "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", "--comment",
          "Carol Cooper,Room 2,,", "cbcarol",
        ])
      #expect(getpwnam("cbcarol") != nil, "\(made.errors)")
    }
    #expect(UserStyle.displayName(for: "cbcarol") == "Carol Cooper")
    #expect(UserStyle.initials(for: "cbcarol") == "CC")
    let renderer = TranscriptRenderer(me: "alice", width: 60, now: monday18, clock: utc)
    let rows = renderer.render([.message(message("cbcarol", "hello", at: monday18))])
    #expect(rows.map(\.text).contains(" (CC) Carol Cooper (cbcarol) · just now"))
  }
}

import Foundation
import LineProtocol
import TestSupport
import Testing

@testable import ChatClient

/// chatsh's side of series and changes: /every, /reschedule, /edit, say
/// --every, and SCHED lines with a rule (chatsh(1), chatbroker(7)).
@Suite("chatsh: series, /reschedule and /edit")
struct SeriesCommandTests {
  typealias Harness = ChatSessionTests.Harness

  /// The texts of the notices in the conversation shown.
  static func notices(_ harness: Harness) -> [String] {
    harness.session.model.current.entries.compactMap(\.noticeText)
  }

  static func joined(_ zone: String = "America/New_York") -> Harness {
    let harness = Harness(timeZone: zone)
    harness.session.start(targets: ["#team"])
    harness.feed(
      "OK JOIN #team 1", "OK WHO #team 0", "OK ACCESS #team public", "OK HISTORY #team 0",
      "OK CONVERSATIONS 0",
      "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    return harness
  }

  @Test("a series' SCHED line carries its rule; a single message's has none")
  func parseSched() {
    let series = ServerLine(
      parsing: "SCHED 7 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "weekdays@09:00/America/New_York :stand-up")
    guard let item = series.scheduledMessage else {
      Issue.record("not a SCHED line: \(series)")
      return
    }
    #expect(item.rule == "weekdays@09:00/America/New_York" && item.text == "stand-up")
    #expect(
      OutputFormat.plain(item).split(separator: "\t").last == "weekdays@09:00/America/New_York")
    #expect(OutputFormat.json(item).hasSuffix(",\"rule\":\"weekdays@09:00/America/New_York\"}"))
    let single = ServerLine(
      parsing: "SCHED 8 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z :a\tb")
    guard let one = single.scheduledMessage else {
      Issue.record("not a SCHED line: \(single)")
      return
    }
    #expect(one.rule == nil)
    // A TAB in the text is escaped (chatsh(1)): the fields stay four.
    #expect(OutputFormat.plain(one) == "8\t2026-12-01T14:00:00.000Z\t#team\ta\\tb")
  }

  @Test("/every reads the rule on the user's clock and sends it in full")
  func every() {
    let harness = Self.joined()
    harness.session.submit("/every weekdays@09:00 stand-up in 5")
    harness.session.submit("/every mon@18:00/Europe/Berlin,count:3 x")
    harness.session.submit("/every sometimes x")
    #expect(
      harness.sent == [
        "SAYEVERY #team weekdays@09:00/America/New_York :stand-up in 5",
        "SAYEVERY #team mon@18:00/Europe/Berlin,count:3 :x",
      ])
    #expect(Self.notices(harness).last?.contains("a rule is daily@09:00") == true)
    harness.feed("OK SAYEVERY 7 2026-12-01T14:00:00.000Z weekdays@09:00/America/New_York")
    #expect(harness.session.model.pending == ["7"])
    #expect(
      Self.notices(harness).last?.hasPrefix("series 7: weekdays at 09:00 (America/New_York), first")
        == true)
  }

  @Test("A calendar expression's rule is said in words; a rule with none is cut with …")
  func ruleInWords() {
    let harness = Self.joined()
    harness.session.submit("/every Mon..Fri *-*-* 09:00 stand-up")
    harness.feed(
      "OK SAYEVERY 8 2026-12-01T14:00:00.000Z rrule:FREQ=DAILY;BYSECOND=0;BYMINUTE=0;BYHOUR=9;"
        + "BYDAY=MO,TU,WE,TH,FR;DTSTART=20261130T000000/America/New_York")
    #expect(
      Self.notices(harness).last?.hasPrefix("series 8: weekdays at 09:00 (America/New_York), first")
        == true, "\(Self.notices(harness).last ?? "")")
    harness.session.submit("/scheduled")
    harness.feed(
      "SCHED 8 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "rrule:FREQ=DAILY;BYSECOND=0;BYMINUTE=0;BYHOUR=9;BYDAY=MO,TU,WE,TH,FR;"
        + "DTSTART=20261130T000000/America/New_York :stand-up",
      "SCHED 9 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "rrule:FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2;BYHOUR=9;COUNT=12 :retro",
      "OK SCHEDULED 2")
    let table = Self.notices(harness).last ?? ""
    #expect(table.contains("weekdays at 09:00 (America/New_York)"), "\(table)")
    #expect(table.contains("rrule:FREQ=MONTHLY;BYDA… "), "\(table)")
    #expect(!table.contains("BYSECOND") && !table.contains("BYSETPOS"), "\(table)")
  }

  @Test("/reschedule resolves a <when> here and a rule in full; /edit sends the text")
  func rescheduleAndEdit() {
    let harness = Self.joined()
    // now is 2026-11-30T18:00:00Z, 13:00 in New York.
    harness.session.submit("/reschedule 7 +10m")
    harness.session.submit("/reschedule 7 20:30")
    harness.session.submit("/reschedule 7 daily@10:00")
    harness.session.submit("/edit 7 new: text")
    harness.session.submit("/edit 7")
    #expect(
      harness.sent == [
        "RESCHEDULE 7 2026-11-30T18:10:00.000Z", "RESCHEDULE 7 2026-12-01T01:30:00.000Z",
        "RESCHEDULE 7 daily@10:00/America/New_York", "EDIT 7 :new: text",
      ])
    harness.feed(
      "ERR RESCHEDULE DELIVERED :message 7 was already delivered",
      "SCHED 7 #team 2026-12-01T01:30:00.000Z 2026-11-30T17:00:00.000Z :x",
      "OK RESCHEDULE 7 2026-12-01T01:30:00.000Z")
    let notices = Self.notices(harness)
    #expect(notices.contains("could not reschedule 7: message 7 was already delivered"))
    #expect(notices.last?.hasPrefix("rescheduled 7: due ") == true)
  }

  @Test("a change made in another session is shown, and kept out of a SCHEDULED reply")
  func changeEvents() {
    let harness = Self.joined()
    let event = "SCHED 9 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z :moved"
    harness.feed(event)
    #expect(harness.session.model.pending == ["9"])
    #expect(Self.notices(harness).last?.hasPrefix("9 was changed in another session") == true)
    harness.session.submit("/scheduled")
    harness.feed(
      event,
      "SCHED 10 #team 2026-12-02T14:00:00.000Z 2026-11-30T17:00:00.000Z daily@09:00/UTC :x",
      "OK SCHEDULED 1")
    let table = Self.notices(harness).last ?? ""
    #expect(table.contains("REPEATS") && table.contains("daily at 09:00 (UTC)"), "\(table)")
    #expect(!table.contains("moved"), "the event is not part of the reply")
    #expect(harness.session.model.pending == ["10"])
  }

  @Test("/pause says paused, /resume when it is next due, and /scheduled shows a paused series")
  func pauseAndResume() {
    let harness = Self.joined()
    harness.session.submit("/pause 7")
    harness.feed(
      "SCHED 7 #team 2026-12-04T14:00:00.000Z 2026-11-30T17:00:00.000Z"
        + " daily@09:00/America/New_York,paused :stand-up",
      "OK RESCHEDULE 7 2026-12-04T14:00:00.000Z")
    #expect(Self.notices(harness).last == "paused 7: nothing is sent until /resume 7")
    harness.session.submit("/scheduled")
    harness.feed(
      "SCHED 7 #team 2026-12-04T14:00:00.000Z 2026-11-30T17:00:00.000Z"
        + " daily@09:00/America/New_York,paused :stand-up",
      "OK SCHEDULED 1")
    let row = Self.notices(harness).last?.split(separator: "\n").last ?? ""
    #expect(row.hasPrefix("7   paused "), "\(row)")
    #expect(
      row.contains("daily at 09:00 (America/New_York) ") && !row.contains(",paused"), "\(row)")
    harness.session.submit("/resume 7")
    harness.feed(
      "SCHED 7 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z"
        + " daily@09:00/America/New_York :stand-up",
      "OK RESCHEDULE 7 2026-12-01T14:00:00.000Z")
    #expect(Self.notices(harness).last?.hasPrefix("resumed 7: next due ") == true)
    #expect(Self.notices(harness).last?.hasSuffix(": stand-up") == true)
    #expect(!Self.notices(harness).contains { $0.hasPrefix("rescheduled") })
  }

  @Test("Tab after /cancel, /reschedule and /edit offers the pending ids")
  func completesIDs() {
    let harness = Self.joined()
    harness.session.model.pending = ["7", "12"]
    for line in ["/cancel ", "/reschedule 1", "/edit "] {
      #expect(
        harness.session.completions(
          for: String(line.split(separator: " ").dropFirst().first ?? ""), isFirst: false,
          line: line)
          == ["12", "7"], "\(line)")
    }
    #expect(harness.session.completions(for: "", isFirst: false, line: "/edit 7 ") != ["12", "7"])
  }

  @Test("say --every takes a rule and the text; not with --at, nor without text")
  func options() throws {
    let parsed = try OptionParser.parse(["say", "--every", "weekdays@09:00", "#team", "stand-up"])
    #expect(
      parsed.command == .sayEvery(target: "#team", rule: "weekdays@09:00", text: ["stand-up"]))
    for bad in [
      ["say", "--every", "daily@09:00", "--at", "18:00", "#team", "x"],
      ["say", "--every", "daily@09:00", "#team"], ["history", "--every", "x", "#team"],
    ] {
      #expect(throws: UsageError.self) { try OptionParser.parse(bad) }
    }
  }

  @Test("chatsh say --every on a real broker: the id, first due and rule; scheduled lists it")
  func scriptMode() throws {
    let broker = try BrokerProcess().start()
    let started = try broker.chatsh(
      "say", "--every", "weekdays@09:00,count:5", "#team", "stand-up",
      environment: ["TZ": "Europe/Berlin"])
    #expect(started.status == 0, "\(started.errors)")
    let fields = started.output.trimmingCharacters(in: .newlines).split(separator: "\t")
    #expect(fields.count == 3 && fields.last == "weekdays@09:00/Europe/Berlin,count:5")
    let listed = try broker.chatsh("scheduled")
    let row = listed.output.trimmingCharacters(in: .newlines).split(separator: "\t")
    #expect(row.count == 5 && row[0] == fields.first && row[4] == fields.last, "\(listed.output)")
    let bad = try broker.chatsh("say", "--every", "weekdays@25:00", "#team", "x")
    #expect(bad.status == 64 && bad.errors.contains("a rule is daily@09:00"))
    #expect(try broker.chatsh("cancel", String(fields[0])).status == 0)
    #expect(try broker.chatsh("scheduled").output.isEmpty)
  }
}

/// chatsh's /skip, /reschedule now and the rule forms Tab offers
/// (chatsh(1), chatbroker(7) "Series").
@Suite("chatsh: /skip, /reschedule now and rule completion")
struct SeriesManagementCommandTests {
  @Test("/skip and /reschedule ID now send the broker's words; a bad id gets the usage")
  func skipAndNow() {
    let harness = SeriesCommandTests.joined()
    harness.session.submit("/skip 7")
    harness.session.submit("/reschedule 7 NOW")
    harness.session.submit("/every monthly:last-fri@17:00 wrap-up")
    harness.session.submit("/skip")
    harness.session.submit("/every Mon..Fri *-*-* 09:00 stand-up")
    harness.session.submit("/pause 7")
    harness.session.submit("/resume 7")
    harness.session.submit("/reschedule 7 Sat,Sun 10:30")
    #expect(
      harness.sent == [
        "RESCHEDULE 7 skip", "RESCHEDULE 7 now",
        "SAYEVERY #team monthly:last-fri@17:00/America/New_York :wrap-up",
        "SAYEVERY #team rrule:FREQ=DAILY;BYSECOND=0;BYMINUTE=0;BYHOUR=9;BYDAY=MO,TU,WE,TH,FR;"
          + "DTSTART=20261130T000000/America/New_York :stand-up",
        "RESCHEDULE 7 pause", "RESCHEDULE 7 resume",
        "RESCHEDULE 7 rrule:FREQ=DAILY;BYSECOND=0;BYMINUTE=30;BYHOUR=10;BYDAY=SA,SU;"
          + "DTSTART=20261130T000000/America/New_York",
      ])
    #expect(
      SeriesCommandTests.notices(harness).contains { $0.hasPrefix("usage: /skip ID") })
  }

  @Test("Tab offers the pending ids after /skip, and the rule forms after /every")
  func completion() {
    let harness = SeriesCommandTests.joined()
    harness.session.model.pending = ["7", "12"]
    for command in ["/skip ", "/pause ", "/resume "] {
      #expect(harness.session.completions(for: "", isFirst: false, line: command) == ["12", "7"])
    }
    let rules = harness.session.completions(for: "mo", isFirst: false, line: "/every mo")
    #expect(rules.contains("monthly:last-fri@17:00") && rules.contains("every:2w:tue@09:00"))
    #expect(
      harness.session.completions(for: "", isFirst: false, line: "/reschedule 7 ").prefix(2)
        == ["now", "skip"])
    #expect(
      !harness.session.completions(for: "", isFirst: false, line: "/every daily@09:00 ").contains(
        "every:15m"))
  }

  @Test("/skip ID WHEN names the occurrence on the user's clock and sends it in UTC")
  func skipOneOccurrence() {
    let harness = SeriesCommandTests.joined()
    harness.session.submit("/skip 7 2026-12-24 09:00")
    harness.session.submit("/skip 7 2026-12-01T09:00-05:00")
    harness.session.submit("/skip 7 someday 09:00")
    #expect(SeriesCommandTests.notices(harness).last?.hasPrefix("usage: /skip ID WHEN") == true)
    // The occurrence is looked up among the next ones, then skipped.
    #expect(harness.sent == ["SCHEDULED 7 NEXT 100", "SCHEDULED 7 NEXT 100"])
    for due in ["2026-12-24T14:00:00.000Z", "2026-12-01T14:00:00.000Z"] {
      harness.feed(
        "SCHED 7 #team \(due) 2026-11-30T17:00:00.000Z daily@09:00/America/New_York :stand-up",
        "OK SCHEDULED 1")
    }
    #expect(
      harness.sent.suffix(2) == [
        "SKIP 7 2026-12-24T14:00:00.000Z", "SKIP 7 2026-12-01T14:00:00.000Z",
      ])
    #expect(
      harness.session.completions(for: "to", isFirst: false, line: "/skip 7 to").prefix(2)
        == ["today", "tomorrow"])
    #expect(
      harness.session.completions(for: "", isFirst: false, line: "/skip 7 ").contains("friday"))
    harness.feed(
      "SCHED 7 #team 2026-12-02T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "daily@09:00/America/New_York :stand-up",
      "OK SKIP 7 2026-12-02T14:00:00.000Z",
      "SCHED 7 #team 2026-12-02T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "daily@09:00/America/New_York :stand-up",
      "OK SKIP 7 2026-12-02T14:00:00.000Z")
    #expect(
      SeriesCommandTests.notices(harness).last?.hasPrefix("skipped one occurrence of 7: due ")
        == true, "\(SeriesCommandTests.notices(harness))")
  }

  @Test("an occurrence named to the minute or second is found among the next; none says which are")
  func occurrenceByLocalTime() {
    let harness = SeriesCommandTests.joined("UTC")
    // every:1m started at 19:03:25.175: occurrences at hh:mm:25.175.
    let next = (4...7).map { "2026-12-03T19:0\($0):25.175Z" }
    func answer() {
      for line in next.map({ "SCHED 7 #team \($0) 2026-12-03T19:03:25.175Z every:1m/UTC :tick" })
        + ["OK SCHEDULED 4"]
      {
        harness.session.handle(ServerLine(parsing: line))
      }
    }
    for words in ["19:06", "19:06:25", "2026-12-03 19:06", "2026-12-03 19:06:25"] {
      harness.sent = []
      harness.session.submit("/skip 7 \(words)")
      answer()
      #expect(harness.sent.last == "SKIP 7 2026-12-03T19:06:25.175Z", "\(words)")
      harness.feed("OK SKIP 7")
    }
    harness.sent = []
    harness.session.submit("/replace 7 19:07 +1h later")
    answer()
    #expect(harness.sent.last?.hasPrefix("REPLACE 7 2026-12-03T19:07:25.175Z ") == true)
    harness.feed("OK REPLACE 9")
    harness.session.submit("/skip 7 19:06:30")
    answer()
    #expect(
      SeriesCommandTests.notices(harness).last
        == "7 has no occurrence at 19:06:30; the next are at Thu 3 Dec 19:04:25,"
        + " Thu 3 Dec 19:05:25, Thu 3 Dec 19:06:25, … (/scheduled 7 lists them)")
    harness.sent = []
    harness.session.submit("/scheduled 7")
    #expect(harness.sent == ["SCHEDULED 7 NEXT 10"])
    answer()
    let shown = SeriesCommandTests.notices(harness).last ?? ""
    #expect(shown.hasPrefix("next times of 7 (every:1m/UTC), #team: tick\n"), "\(shown)")
    #expect(shown.hasSuffix("\n  Thu 3 Dec 19:07:25"), "\(shown)")
  }

  @Test("SERIES on MSG and HIST lines: kept on the message, \"series\" in --json")
  func seriesOnMessages() {
    let live = ServerLine(
      parsing: "MSG #team 9 2026-12-01T14:00:00.000Z bob SERIES 7 :stand-up"
    ).message
    #expect(live?.series == "7" && live?.text == "stand-up" && live?.isAction == false)
    #expect(live.map(OutputFormat.json)?.hasSuffix(",\"series\":\"7\"}") == true)
    let past = ServerLine(
      parsing: "HIST #team 9 2026-12-01T14:00:00.000Z bob ACTION SERIES 7 :waves"
    ).historyMessage
    #expect(past?.series == "7" && past?.isAction == true)
    let typed = ServerLine(parsing: "MSG #team 10 2026-12-01T14:00:00.000Z bob :by hand").message
    #expect(typed?.series == nil)
    #expect(typed.map(OutputFormat.json)?.contains("series") == false)
    // Words a later version may add after these are skipped: the message
    // is still shown (chatbroker(7), MSG).
    let later = ServerLine(
      parsing: "MSG #team 9 2026-12-01T14:00:00.000Z bob SERIES 7 LATER x :stand-up"
    ).message
    #expect(later?.series == "7" && later?.text == "stand-up")
    #expect(
      ServerLine(parsing: "MSG #team 9 2026-12-01T14:00:00.000Z bob NEWWORD :x").message?.text
        == "x")
  }

  @Test("chatsh's clock reads TZ=:Zone as the broker does, not as UTC")
  func colonZone() {
    let clock = LocalClock(zone: LocalZone(environment: ["TZ": ":Europe/Berlin"]))
    #expect(clock.timeZone.identifier == "Europe/Berlin" && clock.zoneName == "Europe/Berlin")
    #expect(LocalClock(zone: LocalZone(environment: ["TZ": "UTC"])).zoneName == "UTC")
  }

  @Test("/replace ID WHEN NEWWHEN text sends REPLACE in UTC and names the new message")
  func replaceOneOccurrence() {
    let harness = SeriesCommandTests.joined()
    // now is 13:00 in New York.
    harness.session.submit("/replace 7 2026-12-01T09:00-05:00 08:30 stand-up, early")
    harness.session.submit("/replace 7 soon 08:30 x")
    harness.session.submit("/replace 7 08:30")
    #expect(SeriesCommandTests.notices(harness).last?.hasPrefix("usage: /replace ID WHEN") == true)
    #expect(harness.sent == ["SCHEDULED 7 NEXT 100"])
    harness.feed(
      "SCHED 7 #team 2026-12-01T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "daily@09:00/America/New_York :stand-up",
      "OK SCHEDULED 1")
    #expect(
      harness.sent.last
        == "REPLACE 7 2026-12-01T14:00:00.000Z 2026-12-01T13:30:00.000Z :stand-up, early")
    harness.feed(
      "SCHED 7 #team 2026-12-02T14:00:00.000Z 2026-11-30T17:00:00.000Z "
        + "daily@09:00/America/New_York :stand-up",
      "SCHED 9 #team 2026-12-01T13:30:00.000Z 2026-11-30T18:00:00.000Z :stand-up, early",
      "OK REPLACE 9 2026-12-01T13:30:00.000Z")
    #expect(
      SeriesCommandTests.notices(harness).last?.hasPrefix("replaced one occurrence of 7 by 9: due ")
        == true, "\(SeriesCommandTests.notices(harness))")
    #expect(harness.session.model.pending.contains("9"))
    #expect(harness.session.completions(for: "", isFirst: false, line: "/replace ").contains("9"))
  }
}

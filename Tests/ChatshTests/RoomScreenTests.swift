import Foundation
import LineProtocol
import TestSupport
import Testing

/// chatsh(1) in a room: the topic on the top line, set with `/topic` and
/// told when someone else changes it (chatbroker(7), `TOPIC`); actions
/// sent with `/me` and shown as `* user text` (chatbroker(7), `ACTION`).
@Suite("chatsh: topics, actions, taking a message back, away and reactions")
struct RoomScreenTests {
  /// chatsh showing `target`, once its top line is drawn.
  func chatScreen(_ broker: BrokerProcess, _ target: String) throws -> Tmux {
    let terminal = try Tmux([
      "/usr/bin/env", "LANG=C.UTF-8", "TZ=UTC", "XDG_STATE_HOME=" + broker.directory + "/xdg",
      BuiltProducts.path("chatsh"), "--socket", broker.socketPath, target,
    ])
    do {
      try terminal.waitFor { $0.hasPrefix(" " + target) && $0.contains("[") }
    } catch {
      terminal.close()
      throw error
    }
    return terminal
  }

  @Test("chatsh shows the topic on the top line and sets it with /topic", UnixUsers.required)
  func chatshTopLine() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let terminal = try chatScreen(broker, "#ops")
    defer { terminal.close() }
    try terminal.enter("/topic release on friday")
    try terminal.waitFor { $0.hasPrefix(" #ops: release on friday") }
    try terminal.waitFor("you set the topic: release on friday")
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #ops").first?.hasSuffix(":release on friday") == true)
    #expect(try bob.request("TOPIC #ops :moved to monday").last == "OK TOPIC #ops")
    try terminal.waitFor("cbtest1 set the topic: moved to monday")
    try terminal.waitFor { $0.hasPrefix(" #ops: moved to monday") }
    try terminal.enter("/topic -delete")
    try terminal.waitFor("you cleared the topic")
    try terminal.waitFor { !$0.hasPrefix(" #ops:") }
  }

  @Test(
    "/join #room invite creates a private room: the top line and /rooms say (private), and an outsider cannot see it",
    UnixUsers.required)
  func privateRoom() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let terminal = try chatScreen(broker, "#lobby")
    defer { terminal.close() }
    try terminal.enter("/join #plan invite")
    try terminal.waitFor { $0.hasPrefix(" #plan (private)") }
    try terminal.enter("/rooms")
    try terminal.waitFor { $0.contains("#plan  1 person  (private)") }
    let outsider = try broker.connect(as: "cbtest1")
    #expect(try outsider.request("ROOMS") == ["ROOM #lobby 1", "OK ROOMS 1"])
    try terminal.enter("/invite cbtest1")
    try terminal.waitFor("cbtest1 may now read and join #plan")
    #expect(try outsider.expect("INVITE ").hasPrefix("INVITE #plan cbtest1 "), "told (since 1.6)")
    #expect(try outsider.request("JOIN #plan") == ["OK JOIN #plan 2"])
  }

  @Test(
    "joining a room someone else made private says (private) on the top line at once",
    UnixUsers.required)
  func joiningAPrivateRoom() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let creator = try broker.connect(as: "cbtest1")
    #expect(try creator.request("JOIN #plan invite") == ["OK JOIN #plan 1"])
    #expect(try creator.request("INVITE #plan root") == ["OK INVITE #plan root"])
    let terminal = try chatScreen(broker, "#lobby")
    defer { terminal.close() }
    try terminal.enter("/join #plan")
    try terminal.waitFor { $0.hasPrefix(" #plan (private) · cbtest1 root") }
  }

  @Test(
    "at 50 columns a top line too wide for the terminal ends with …, the window list whole",
    UnixUsers.required)
  func topLineCutWithEllipsis() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let terminal = try Tmux(
      [
        "/usr/bin/env", "LANG=C.UTF-8", "TZ=UTC", "XDG_STATE_HOME=" + broker.directory + "/xdg",
        BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "#lobby", "#team",
      ], width: 50)
    defer { terminal.close() }
    try terminal.waitFor { $0.contains("[1:#lobby] 2:#team") }
    try terminal.press("M-2")
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #team").last == "OK JOIN #team 2")
    #expect(try bob.request("TOPIC #team :日本語 plans").last == "OK TOPIC #team")
    // " #team: 日本語 plans · cbtest1 root" is 35 columns; 30 are left
    // of the window list.
    try terminal.waitFor { $0.hasPrefix(" #team: 日本語 plans · cbtest") }
    let top = try #require(terminal.screen().split(separator: "\n").first.map(String.init))
    #expect(top.hasPrefix(" #team: 日本語 plans · cbtest… 1:#lobby [2:#team]"), "\(top)")
  }

  @Test(
    "/me sends an action, and actions from others show as * user text",
    UnixUsers.required)
  func actions() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let terminal = try chatScreen(broker, "#ops")
    defer { terminal.close() }
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #ops").last == "OK JOIN #ops 2")
    try terminal.enter("/me waves")
    let line = try bob.expect("MSG #ops ")
    #expect(line.hasSuffix(" root ACTION :waves"), "sent as an action, not as text: \(line)")
    try terminal.waitFor { $0.contains("* root waves") }
    #expect(try bob.request("ACTION #ops :waves back").first?.hasPrefix("OK ACTION ") == true)
    try terminal.waitFor { $0.contains("* cbtest1 waves back") }
    #expect(!terminal.screen().contains("/me"), "no action is shown as text starting with /me")
  }

  @Test(
    "/delete takes your last message back, and one taken back elsewhere leaves the screen",
    UnixUsers.required)
  func takingBack() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let terminal = try chatScreen(broker, "#ops")
    defer { terminal.close() }
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #ops").last == "OK JOIN #ops 2")
    try terminal.enter("wrong room, sorry")
    let line = try bob.expect("MSG #ops ")
    try terminal.enter("/delete")
    try terminal.waitFor("take back your last message here, “wrong room, sorry”?")
    try terminal.enter("y")
    #expect(try bob.expect("REDACT ") == "REDACT #ops \(line.words[2]) root")
    try terminal.waitFor("you took a message back")
    // Left only in the question that named it.
    #expect(terminal.screen().components(separatedBy: "wrong room, sorry").count == 2)
    let said = try #require(bob.request("SAY #ops :a typo here").last)
    try terminal.waitFor("a typo here")
    #expect(
      try bob.request("REDACT #ops \(said.words[2])").last == "OK REDACT #ops \(said.words[2])")
    try terminal.waitFor("cbtest1 took a message back")
    #expect(!terminal.screen().contains("a typo here"))
  }

  @Test(
    "writing to someone away says so, once, and on the top line; /away sets your own",
    UnixUsers.required)
  func away() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("AWAY :on holiday until monday") == ["OK AWAY"])
    let terminal = try chatScreen(broker, "@cbtest1")
    defer { terminal.close() }
    try terminal.enter("are you there?")
    try terminal.waitFor("cbtest1 is away: on holiday until monday")
    try terminal.waitFor { $0.hasPrefix(" @cbtest1 (away: on holiday until monday)") }
    try terminal.enter("/away in a meeting")
    try terminal.waitFor("you are away: in a meeting")
    #expect(try bob.request("SAY @root :hi").contains("AWAY root :in a meeting"))
  }
}

/// chatsh(1) and series: an occurrence is marked on the screen, and
/// `/skip ID WHEN` names the occurrence on the user's clock, read from
/// `TZ=:Zone` as the broker reads it (chatbroker(7), `SKIP`, `MSG`).
@Suite("chatsh: the series mark and /skip ID WHEN")
struct SeriesScreenTests {
  @Test("an occurrence shows ↻; /skip ID 'YYYY-MM-DD HH:MM' in TZ=:Europe/Berlin skips that one")
  func markAndSkip() throws {
    let broker = try BrokerProcess().start(environment: ["TZ": "UTC"])
    let terminal = try Tmux([
      "/usr/bin/env", "LANG=C.UTF-8", "TZ=:Europe/Berlin",
      "XDG_STATE_HOME=" + broker.directory + "/xdg",
      BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "#ops",
    ])
    defer { terminal.close() }
    try terminal.waitFor { $0.hasPrefix(" #ops") && $0.contains("[") }
    try terminal.enter("/every daily@09:00 stand-up")
    try terminal.waitFor("daily at 09:00 (Europe/Berlin)")
    let root = try broker.connect()
    let series = try #require(root.dataLines("SCHEDULED").first?.words[1])
    let next = try root.dataLines("SCHEDULED \(series) NEXT 2").map { $0.words[3] }
    #expect(try root.request("RESCHEDULE \(series) now").last?.hasPrefix("OK RESCHEDULE") == true)
    try terminal.waitFor { $0.contains("↻ stand-up") }

    // The second coming one, on the Berlin clock: 09:00 whatever UTC says.
    let formatter = DateFormatter()
    formatter.timeZone = TimeZone(identifier: "Europe/Berlin")
    formatter.dateFormat = "yyyy-MM-dd HH:mm"
    let after = try #require(Timestamp(rfc3339: next[1]))
    let local = formatter.string(
      from: Date(timeIntervalSince1970: Double(after.milliseconds) / 1000))
    #expect(local.hasSuffix(" 09:00"))
    try terminal.enter("/skip \(series) \(local)")
    try terminal.waitFor("skipped one occurrence of \(series)")
    // Root's other sessions got chatsh's changes as events (SCHED, and
    // MARKREAD as it reads): taken before the reply.
    _ = try root.request("PING")
    let left = try root.dataLines("SCHEDULED \(series) NEXT 3").filter { $0.hasPrefix("SCHED ") }
      .map { $0.words[3] }
    #expect(!left.contains(next[1]) && left.count == 3, "\(left) still has \(next[1])")
  }

  @Test(
    "every:1m from mid-minute: /skip ID HH:MM, /replace ID HH:MM:SS, /scheduled ID lists times")
  func occurrenceByClockTime() throws {
    let broker = try BrokerProcess().start(environment: ["TZ": "UTC"])
    let terminal = try Tmux([
      "/usr/bin/env", "LANG=C.UTF-8", "TZ=:Europe/Berlin",
      "XDG_STATE_HOME=" + broker.directory + "/xdg",
      BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "#ops",
    ])
    defer { terminal.close() }
    try terminal.waitFor { $0.hasPrefix(" #ops") && $0.contains("[") }
    try terminal.enter("/every every:1m tick")
    try terminal.waitFor("series ")
    let root = try broker.connect()
    let series = try #require(root.dataLines("SCHEDULED").first?.words[1])
    let next = try root.dataLines("SCHEDULED \(series) NEXT 4").map { $0.words[3] }
    let times = try next.map { try #require(Timestamp(rfc3339: $0)) }
    // On the Berlin clock, as people read the screen.
    func local(_ time: Timestamp, _ format: String) -> String {
      let formatter = DateFormatter()
      formatter.timeZone = TimeZone(identifier: "Europe/Berlin")
      formatter.dateFormat = format
      return formatter.string(from: Date(timeIntervalSince1970: Double(time.milliseconds) / 1000))
    }

    try terminal.enter("/scheduled \(series)")
    try terminal.waitFor("next times of \(series)")
    let second = OccurrenceNameSecond.of(times[2])
    #expect(
      terminal.screen().contains(
        local(times[2], "HH:mm") + (second == 0 ? "" : ":" + local(times[2], "ss"))),
      "\(terminal.screen())")

    // Two minutes on: named to the minute, found at its second.
    try terminal.enter("/skip \(series) \(local(times[2], "HH:mm"))")
    try terminal.waitFor("skipped one occurrence of \(series)")
    try terminal.enter("/replace \(series) \(local(times[3], "HH:mm:ss")) +2h moved on")
    try terminal.waitFor("replaced one occurrence of \(series)")
    _ = try root.request("PING")
    let left = try root.dataLines("SCHEDULED \(series) NEXT 4").filter { $0.hasPrefix("SCHED ") }
      .map { $0.words[3] }
    #expect(!left.contains(next[2]) && !left.contains(next[3]), "\(left) still has \(next[2...3])")
  }
}

/// The second within the minute of an instant.
private enum OccurrenceNameSecond {
  static func of(_ time: Timestamp) -> Int { Int(time.milliseconds % 60_000 / 1000) }
}

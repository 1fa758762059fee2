import Foundation
import LineProtocol
import TestSupport
import Testing

/// `SKIP`, `REPLACE` and `SERIES <id>` on `MSG` and `HIST` on the real
/// binary, across a restart, and what chatsh makes of them (chatbroker(7),
/// `SKIP`, `REPLACE`, `MSG`; chatsh(1), ENVIRONMENT).
@Suite("Series: SKIP, REPLACE and SERIES on the real binary")
struct SeriesExceptionTests {
  @Test(
    "a skipped occurrence stays skipped after a restart; a replacement comes as the series'",
    UnixUsers.required)
  func skipReplaceRestart() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start(environment: ["TZ": ":Europe/Berlin"])
    let author = try broker.connect(as: "cbtest1")
    let reader = try broker.connect(as: "cbtest2")
    _ = try reader.request("JOIN #team")
    let started = try #require(author.request("SAYEVERY #team daily@09:00 :stand-up").last)
    let id = started.words[2]
    let next = try author.dataLines("SCHEDULED \(id) NEXT 3").map { $0.words[3] }
    #expect(next.count == 3)
    let skipped = try author.request("SKIP \(id) \(next[1])")
    #expect(skipped.last == "OK SKIP \(id) \(next[0])", "\(skipped)")
    let replaced = try author.request("REPLACE \(id) \(next[0]) +1h :stand-up, once only")
    let final = try #require(replaced.last)
    #expect(final.hasPrefix("OK REPLACE "), "\(replaced)")
    let replacement = final.words[2]
    #expect(replaced.count == 3 && replaced[1].hasPrefix("SCHED \(replacement) #team "))

    try broker.restart()
    let again = try broker.connect(as: "cbtest1")
    let listed = try again.dataLines("SCHEDULED \(id) NEXT 2")
    #expect(listed.map { $0.words[1] } == [replacement, id], "\(listed)")
    #expect(listed.last?.words[3] == next[2], "the skipped one stays out after a restart")
    let watcher = try broker.connect(as: "cbtest2")
    _ = try watcher.request("JOIN #team")
    #expect(
      try again.request("RESCHEDULE \(replacement) now").last?.hasPrefix("OK RESCHEDULE") == true)
    let delivered = try watcher.expect("MSG #team ", timeout: 5)
    #expect(
      delivered.words.dropFirst(5).elementsEqual(["SERIES", id])
        && delivered.freeText == "stand-up, once only", "\(delivered)")
    #expect(try again.request("RESCHEDULE \(id) now").last?.hasPrefix("OK RESCHEDULE") == true)
    let occurrence = try watcher.expect("MSG #team ", timeout: 5)
    #expect(
      occurrence.words.dropFirst(5).elementsEqual(["SERIES", id])
        && occurrence.freeText == "stand-up")

    try broker.restart()
    let history = try broker.connect(as: "cbtest2").dataLines("HISTORY #team")
    #expect(
      history.count == 2
        && history.allSatisfy { $0.words.dropFirst(5).elementsEqual(["SERIES", id]) })
    let json = try broker.chatsh("history", "--json", "#team")
    #expect(json.status == 0, "\(json.errors)")
    #expect(
      json.output.split(separator: "\n").allSatisfy { $0.hasSuffix(",\"series\":\"\(id)\"}") },
      "\(json.output)")
  }

  @Test("SKIP and REPLACE answered OK survive kill -9 of a broker that syncs")
  func survivesKill() throws {
    let broker = try BrokerProcess().start([])
    let author = try broker.connect()
    let id = try #require(author.request("SAYEVERY #team weekdays@09:00/UTC :stand-up").last)
      .words[2]
    let next = try author.dataLines("SCHEDULED \(id) NEXT 3").map { $0.words[3] }
    #expect(try author.request("SKIP \(id) \(next[0])").last == "OK SKIP \(id) \(next[1])")
    let replaced = try #require(author.request("REPLACE \(id) \(next[2]) \(next[2]) :moved").last)
    #expect(replaced.hasPrefix("OK REPLACE "), "\(replaced)")
    try broker.restart(crash: true)
    let listed = try broker.connect().dataLines("SCHEDULED \(id) NEXT 2")
    #expect(
      listed.map { "\($0.words[1]) \($0.words[3]) \($0.freeText ?? "")" } == [
        "\(id) \(next[1]) stand-up", "\(replaced.words[2]) \(next[2]) moved",
      ])
  }

  @Test("chatsh reads TZ=:America/New_York as the broker does: say --at 09:00 is 14:00Z")
  func chatshReadsColonZone() throws {
    let broker = try BrokerProcess().start(environment: ["TZ": "UTC"])
    let said = try broker.chatsh(
      "say", "--at", "09:00", "#team", "x", environment: ["TZ": ":America/New_York"])
    #expect(said.status == 0, "\(said.errors)")
    // 09:00 in New York, whatever the season: 14:00Z in winter, 13:00Z in summer.
    let offset = TimeZone(identifier: "America/New_York")!.secondsFromGMT() / 3600
    let due = said.output.split(separator: "\t").last.map { String($0.dropFirst(10)) }
    #expect(
      due?.hasPrefix(String(format: "T%02d:00:00.000Z", (9 - offset) % 24)) == true,
      "\(said.output)")
    let every = try broker.chatsh(
      "say", "--every", "daily@09:00", "#team", "y", environment: ["TZ": ":America/New_York"])
    #expect(every.output.hasSuffix("\tdaily@09:00/America/New_York\n"), "\(every.output)")
  }
}

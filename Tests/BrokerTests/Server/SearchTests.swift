import Foundation
import Glibc
import TestSupport
import Testing

/// `SEARCH` through the real broker between real Unix users (chatbroker(7),
/// `SEARCH`): each finds what they may read, rooms and their own direct
/// conversations, never someone else's; a line taken back is not found,
/// and a restart rebuilds the index from the journal.
@Suite("Searching history")
struct SearchTests {
  @Test(
    "two users find their own lines and rooms', not a third one's; across a restart",
    UnixUsers.required)
  func searchBetweenUsers() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let root = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")
    let carol = try broker.connect(as: "cbtest2")
    let room = try #require(root.request("SAY #ops :Deploy FAILED at the Café").last).words[2]
    let toBob = try #require(root.request("SAY @cbtest1 :deploy plan for bob").last).words[2]
    let toCarol = try #require(root.request("SAY @cbtest2 :deploy plan for carol").last).words[2]
    _ = try bob.expect("MSG @root \(toBob) ")
    _ = try carol.expect("MSG @root \(toCarol) ")
    let found = try bob.request("SEARCH * DEPLOY")
    #expect(found.count == 3, "\(found)")
    #expect(
      found[0].hasPrefix("HIST @root \(toBob) ") && found[0].hasSuffix(" root :deploy plan for bob")
    )
    #expect(found[1].hasPrefix("HIST #ops \(room) "))
    #expect(found.last == "OK SEARCH * 2")
    #expect(try carol.request("SEARCH * plan bob") == ["OK SEARCH * 0"])
    #expect(try carol.request("SEARCH * plan").first?.contains(toCarol) == true)
    #expect(try bob.request("SEARCH @cbtest2 plan") == ["OK SEARCH @cbtest2 0"])
    #expect(try bob.request("SEARCH * 1 cafe failed").last == "OK SEARCH * 1")
    #expect(try root.request("REDACT #ops \(room)") == ["OK REDACT #ops \(room)"])
    #expect(try bob.request("SEARCH * cafe") == ["OK SEARCH * 0"])
    try broker.restart()
    let again = try broker.connect(as: "cbtest1")
    let replayed = try again.request("SEARCH * deploy")
    #expect(replayed.count == 2 && replayed.first?.contains(toBob) == true, "\(replayed)")
  }

  @Test("SEARCH writes a series' occurrence with SERIES <id>, the line HISTORY writes for it")
  func seriesOccurrence() throws {
    let broker = try BrokerProcess().start([])
    let author = try broker.connect()
    let id = try #require(author.request("SAYEVERY #team daily@09:00/UTC :standup in room 2").last)
      .words[2]
    #expect(try author.request("RESCHEDULE \(id) now").last?.hasPrefix("OK RESCHEDULE") == true)
    try waitUntil(timeout: 10, "the occurrence in #team's history") {
      try author.dataLines("HISTORY #team").count == 1
    }
    let history = try author.dataLines("HISTORY #team")
    #expect(history.first?.words.dropFirst(5).elementsEqual(["SERIES", id]) == true, "\(history)")
    #expect(try author.dataLines("SEARCH #team standup") == history)
    #expect(try author.dataLines("SEARCH * standup") == history)
  }

  @Test(
    "a broker with 50,000 worded messages in its journal serves at once and searches once its index is built"
  )
  func indexBuiltAfterStartUp() throws {
    let broker = try BrokerProcess()
    var lines = [#"{"type":"journal","version":1,"next_id":"50001"}"#]
    for number in 1...50_000 {
      lines.append(
        ##"{"type":"message","id":"\##(number)","to":"#r\##(number % 5)","from":"alice","##
          + ##""at":"2026-11-30T17:00:00.000Z","text":"build \##(number) went green, deploy next"}"##
      )
    }
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: broker.journalPath, atomically: false, encoding: .utf8)
    try broker.start()
    let client = try broker.connect()
    #expect(try client.request("PING soon").last == "OK PING soon")
    // Each answer is either the whole page or LIMIT saying how many
    // messages are still to be indexed; the index is done in seconds.
    var answer: [String] = []
    try waitUntil(timeout: 30, "SEARCH to answer from the whole index") {
      answer = try client.request("SEARCH * 3 deploy 49999")
      if answer.first?.hasPrefix("ERR SEARCH LIMIT :the search index is still being built") == true
      {
        return false
      }
      return true
    }
    #expect(answer.count == 2 && answer.first?.hasPrefix("HIST #r4 49999 ") == true, "\(answer)")
    try broker.waitForLog("search index built")
  }
}

import Foundation
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
}

import Foundation
import TestSupport
import Testing

/// Room topics through the real broker (chatbroker(7), `TOPIC`), between
/// two real Unix users, and across a restart (chatbroker(8), `topic`).
@Suite("Topics")
struct TopicTests {
  @Test(
    "a member sets the topic, the room sees it, a joiner and ROOMS show it, and it survives a restart",
    UnixUsers.required)
  func topicBetweenUsers() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let alice = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")
    #expect(try alice.request("JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(
      try bob.request("TOPIC #ops :not mine").first
        == "ERR TOPIC NOTJOINED :join #ops to set its topic")
    let reply = try alice.request("TOPIC #ops :deploy at 18:00")
    #expect(reply.count == 2 && reply.last == "OK TOPIC #ops")
    let line = try #require(reply.first)
    #expect(line.hasPrefix("TOPIC #ops root ") && line.hasSuffix(" :deploy at 18:00"))
    #expect(try bob.request("JOIN #ops") == [line, "OK JOIN #ops 2"])
    _ = try alice.readLine()  // JOIN #ops cbtest1

    // Crossing the line limit loses the line, not the topic.
    let long = "TOPIC #ops :" + String(repeating: "x", count: 5000)
    #expect(try bob.request(long).first?.hasPrefix("ERR - TOOLONG") == true)
    #expect(try bob.request("ROOMS") == ["ROOM #ops 2 :deploy at 18:00", "OK ROOMS 1"])

    try broker.restart()
    let carol = try broker.connect(as: "cbtest1")
    #expect(try carol.request("TOPIC #ops") == [line, "OK TOPIC #ops"])
    #expect(broker.journal.contains(##""type":"topic","room":"#ops","user":"root""##))
  }
}

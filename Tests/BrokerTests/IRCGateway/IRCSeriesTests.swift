import Foundation
import IRCProtocol
import LineProtocol
import Posix
import TestSupport
import Testing

@testable import Broker

/// Series on IRC (chatbroker(7), "IRC"): an occurrence carries
/// `chatbroker/series=<id>` to clients with message-tags, live and in a
/// history, and `sched|bot skip <id> <when>` leaves out one occurrence.
@Suite("IRC gateway: series tags and sched|bot skip")
struct IRCSeriesTests {
  @Test("an occurrence is tagged chatbroker/series for message-tags clients, live and in history")
  func seriesTag() {
    let irc = IRCHarness()
    let author = irc.engine.connect("carol")
    let tagged = irc.connect("alice", caps: ["message-tags", "batch", "draft/chathistory"])
    let plain = irc.connect("bob")
    for id in [tagged, plain] { irc.send(id, "JOIN #ops") }
    for id in [tagged, plain] { _ = irc.take(id) }
    irc.engine.send(author, "SAYEVERY #ops daily@18:30 :stand-up")
    irc.engine.advance(to: "2026-11-30T17:30:00.000Z")
    #expect(
      irc.take(tagged) == [
        "@chatbroker/series=1;msgid=2 :carol!carol@host.test PRIVMSG #ops :stand-up"
      ])
    #expect(irc.take(plain) == [":carol!carol@host.test PRIVMSG #ops :stand-up"])
    let history = irc.send(tagged, "CHATHISTORY LATEST #ops * 10")
    #expect(
      history.contains { $0.contains("chatbroker/series=1;msgid=2 ") && $0.hasSuffix(":stand-up") },
      "\(history)")
    // A line said by hand has no such tag.
    irc.engine.send(author, "SAY #ops by hand")
    #expect(irc.take(tagged) == ["@msgid=3 :carol!carol@host.test PRIVMSG #ops :by hand"])
  }

  @Test("sched|bot replace <id> <when> <newwhen> <text> puts a message in that occurrence's place")
  func serviceReplaces() {
    let irc = IRCHarness()
    let alice = irc.connect("alice")
    _ = irc.send(alice, "PRIVMSG sched|bot :every daily@09:00/UTC #ops stand-up")
    let replaced = irc.send(
      alice, "PRIVMSG sched|bot :replace 1 2026-12-01T09:00Z 2026-12-01T08:30Z stand-up, early")
    #expect(
      replaced.last
        == ":sched|bot!service@host.test NOTICE alice :2 takes that occurrence's place: due "
        + "Tue 1 Dec 2026 09:30 +01:00", "\(replaced)")
    let refused = irc.send(alice, "PRIVMSG sched|bot :replace 1 2026-12-05T09:30Z +1h x")
    #expect(refused.last?.contains(" :REPLACE BADTIME: ") == true, "\(refused)")
    #expect(
      irc.send(alice, "PRIVMSG sched|bot :replace 1 08:00 09:00").contains {
        $0.contains(" :replace <id> <when> <newwhen> <text>")
      }, "too few words: the help")
  }

  @Test(
    "sched|bot skip <id> <when> on the real broker leaves out that occurrence", UnixUsers.required)
  func serviceSkipsOneOccurrence() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start(environment: ["TZ": ":Australia/Sydney"])
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest1"))
    try irc.send("NICK x\r\nUSER x 0 * :x\r\n")
    try irc.expect(":\(Host.name) 422 cbtest1 ")
    try irc.send("PRIVMSG sched|bot :every daily@10:00 #lab stand-up\r\n")
    let started = try irc.expect(":sched|bot!service@")
    #expect(started.contains(" :series "), "\(started)")
    let id = try #require(started.split(separator: " ").dropFirst(4).first.map(String.init))
    let line = try broker.connect(as: "cbtest1")
    let next = try line.dataLines("SCHEDULED \(id) NEXT 2").map { $0.words[3] }
    try irc.send("PRIVMSG sched|bot :skip \(id) \(next[0])\r\n")
    _ = try irc.expect(":sched|bot!service@")  // the series' new state
    let answer = try irc.expect(":sched|bot!service@")
    #expect(answer.contains(" :\(id) skips that occurrence; next due "), "\(answer)")
    #expect(try line.dataLines("SCHEDULED \(id) NEXT 1").first?.words[3] == next[1])
    try irc.send("PRIVMSG sched|bot :skip \(id) 2020-01-01T00:00Z\r\n")
    let past = try irc.expect(":sched|bot!service@")
    #expect(past.contains(" :SKIP PAST: "), "\(past)")
  }
}

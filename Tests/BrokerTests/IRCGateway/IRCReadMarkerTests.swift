import TestSupport
import Testing

@testable import Broker

/// IRCv3 `draft/read-marker` on the IRC gateway (chatbroker(7), "IRC"): the
/// same read markers as the line protocol's `MARKREAD`, named by time.
@Suite("IRC gateway: draft/read-marker on virtual time")
struct IRCReadMarkerTests {
  /// bob wrote m1 to m3 in #ops at 17:01 to 17:03; alice is on IRC with
  /// the capability, and on the line protocol in a second session.
  private static func scene() -> (
    irc: IRCHarness, alice: ConnectionID, line: ConnectionID, ids: [String]
  ) {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    var ids: [String] = []
    for number in 1...3 {
      irc.engine.clock.set("2026-11-30T17:0\(number):00.000Z")
      ids.append(okID(irc.engine.send(bob, "SAY #ops m\(number)")))
    }
    let alice = irc.connect("alice", caps: ["draft/read-marker"])
    return (irc, alice, irc.engine.connect("alice"), ids)
  }

  @Test("JOIN sends the room's marker before the end of the names, * when there is none")
  func markerOnJoin() {
    let (irc, alice, line, ids) = Self.scene()
    let lines = irc.send(alice, "JOIN #ops")
    let marker = lines.firstIndex(of: ":host.test MARKREAD #ops *")
    let endOfNames = lines.firstIndex { $0.contains(" 366 ") }
    #expect(marker != nil && endOfNames != nil && marker! < endOfNames!, "\(lines)")

    irc.engine.send(line, "MARKREAD #ops \(ids[1])")
    irc.send(alice, "PART #ops")
    #expect(
      irc.send(alice, "JOIN #ops").contains(
        ":host.test MARKREAD #ops timestamp=2026-11-30T17:02:00.000Z"))
  }

  @Test("MARKREAD with a time moves the marker to the newest message by then, forward only")
  func setByTime() {
    let (irc, alice, line, ids) = Self.scene()
    #expect(
      irc.send(alice, "MARKREAD #ops timestamp=2026-11-30T17:02:30.000Z") == [
        ":host.test MARKREAD #ops timestamp=2026-11-30T17:02:00.000Z"
      ])
    #expect(irc.engine.output.take(line) == ["MARKREAD #ops \(ids[1])"], "the other session")
    #expect(
      irc.send(alice, "MARKREAD #ops timestamp=2026-11-30T17:01:00.000Z") == [
        ":host.test MARKREAD #ops timestamp=2026-11-30T17:02:00.000Z"
      ], "an older time answers the marker that stays")
    #expect(irc.engine.output.take(line) == [])
    #expect(
      irc.engine.send(line, "MARKREAD #ops \(ids[0])") == ["OK MARKREAD #ops \(ids[1])"],
      "the same marker as the line protocol's")

    irc.engine.send(line, "MARKREAD #ops \(ids[2])")
    #expect(
      irc.take(alice) == [":host.test MARKREAD #ops timestamp=2026-11-30T17:03:00.000Z"],
      "a marker moved on the line protocol reaches the IRC session")
    #expect(
      irc.send(alice, "MARKREAD #ops") == [
        ":host.test MARKREAD #ops timestamp=2026-11-30T17:03:00.000Z"
      ])
  }

  @Test("a direct conversation's marker is named by the other nick")
  func directByNick() {
    let (irc, alice, _, _) = Self.scene()
    let carol = irc.engine.connect("carol")
    irc.engine.clock.set("2026-11-30T17:05:00.000Z")
    irc.engine.send(carol, "SAY @alice hi")
    _ = irc.take(alice)
    #expect(irc.send(alice, "MARKREAD carol") == [":host.test MARKREAD carol *"])
    #expect(
      irc.send(alice, "MARKREAD carol timestamp=2026-11-30T17:06:00.000Z") == [
        ":host.test MARKREAD carol timestamp=2026-11-30T17:05:00.000Z"
      ])
  }

  @Test(
    "MARKREAD refuses what the specification refuses, and needs the capability",
    arguments: [
      ("MARKREAD", "FAIL MARKREAD NEED_MORE_PARAMS :Missing parameters"),
      ("MARKREAD #no!", "FAIL MARKREAD INVALID_PARAMS #no! :No such room or nick"),
      (
        "MARKREAD #ops *",
        "FAIL MARKREAD INVALID_PARAMS #ops :* is not a time: use timestamp=<YYYY-MM-DDThh:mm:ss.sssZ>"
      ),
      (
        "MARKREAD nobody timestamp=2026-11-30T17:06:00.000Z",
        "FAIL MARKREAD INVALID_PARAMS :there is no user named \"nobody\" on this host"
      ),
    ])
  func refusals(command: String, answer: String) {
    let (irc, alice, _, _) = Self.scene()
    #expect(irc.send(alice, command) == [":host.test " + answer])
    let plain = irc.connect("bob")
    #expect(
      irc.send(plain, "MARKREAD #ops")
        == [":host.test 421 bob MARKREAD :Negotiate draft/read-marker first"])
  }
}

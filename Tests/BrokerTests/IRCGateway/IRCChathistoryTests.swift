import TestSupport
import Testing

@testable import Broker

/// `CHATHISTORY` as chatbroker(7), "IRC", describes it: six lines m1 to m6 in
/// #ops, m<n> sent at 17:0<n>:00.000Z; `{n}` in a command is m<n>'s msgid.
@Suite("IRC gateway: CHATHISTORY subcommands and references on virtual time")
struct IRCChathistoryTests {
  /// A client with the history capabilities, and the ids of m1 to m6.
  private static func sixLines() -> (IRCHarness, ConnectionID, [String], ConnectionID) {
    let irc = IRCHarness()
    let bob = irc.engine.connect("bob")
    irc.engine.send(bob, "JOIN #ops")
    var ids: [String] = []
    for number in 1...6 {
      irc.engine.clock.set("2026-11-30T17:0\(number):00.000Z")
      ids.append(okID(irc.engine.send(bob, "SAY #ops m\(number)")))
    }
    let alice = irc.connect(
      "alice", caps: ["batch", "server-time", "message-tags", "draft/chathistory"])
    irc.send(alice, "JOIN #ops")
    return (irc, alice, ids, bob)
  }

  private static func filled(_ command: String, _ ids: [String]) -> String {
    var command = command
    for (index, id) in ids.enumerated() { command = command.replacing("{\(index + 1)}", with: id) }
    return command
  }

  @Test(
    "each subcommand answers the right lines, oldest first, in one batch",
    arguments: [
      ("LATEST #ops * 3", ["m4", "m5", "m6"]),
      ("LATEST #ops msgid={2} 2", ["m5", "m6"]),
      ("LATEST #ops msgid={4} 10", ["m5", "m6"]),
      ("LATEST #ops msgid={6} 10", []),
      ("LATEST #ops timestamp=2026-11-30T17:02:00.000Z 10", ["m3", "m4", "m5", "m6"]),
      ("BEFORE #ops msgid={4} 2", ["m2", "m3"]),
      ("BEFORE #ops timestamp=2026-11-30T17:03:30.000Z 10", ["m1", "m2", "m3"]),
      ("AFTER #ops msgid={1} 2", ["m2", "m3"]),
      ("AFTER #ops timestamp=2026-11-30T17:04:00.000Z 10", ["m5", "m6"]),
      ("AFTER #ops timestamp=2026-11-30T18:00:00.000Z 10", []),
      ("AROUND #ops msgid={4} 4", ["m2", "m3", "m4", "m5"]),
      ("AROUND #ops timestamp=2026-11-30T17:01:00.000Z 3", ["m1", "m2", "m3"]),
      ("AROUND #ops msgid={6} 4", ["m4", "m5", "m6"]),
      ("BETWEEN #ops msgid={1} msgid={6} 2", ["m2", "m3"]),
      ("BETWEEN #ops msgid={6} msgid={1} 2", ["m4", "m5"]),
      ("BETWEEN #ops msgid={1} msgid={6} 100", ["m2", "m3", "m4", "m5"]),
      (
        "BETWEEN #ops timestamp=2026-11-30T17:01:30.000Z timestamp=2026-11-30T17:04:30.000Z 10",
        ["m2", "m3", "m4"]
      ),
      ("between #OPS msgid={3} msgid={3} 10", []),
    ])
  func answers(command: String, texts: [String]) {
    let (irc, alice, ids, _) = Self.sixLines()
    let lines = irc.send(alice, "CHATHISTORY " + Self.filled(command, ids))
    let name = command.split(separator: " ")[1]
    #expect(lines.first == ":host.test BATCH +h1 chathistory \(name)")
    #expect(lines.last == ":host.test BATCH -h1")
    let messages = lines.dropFirst().dropLast()
    #expect(messages.allSatisfy { $0.hasPrefix("@batch=h1;time=2026-11-30T17:0") })
    #expect(messages.map { $0.components(separatedBy: "PRIVMSG #ops :").last ?? "" } == texts)
  }

  @Test(
    "bad input is refused with the spec's FAIL code and no batch",
    arguments: [
      ("FROB #ops * 10", "INVALID_PARAMS FROB #ops"),
      ("BEFORE #ops * 10", "INVALID_PARAMS BEFORE #ops"),
      ("AFTER #ops msgid=no-such-form! 10", "INVALID_PARAMS AFTER #ops"),
      ("AFTER #ops timestamp=yesterday 10", "INVALID_PARAMS AFTER #ops"),
      ("AFTER #ops timestamp=2026-11-30T17:04:00Z 10", "INVALID_PARAMS AFTER #ops"),
      ("LATEST #ops * none", "INVALID_PARAMS LATEST #ops"),
      ("LATEST #ops * 0", "INVALID_PARAMS LATEST #ops"),
      ("BETWEEN #ops * msgid={1} 10", "INVALID_PARAMS BETWEEN #ops"),
      ("AROUND #no!room msgid={1} 10", "INVALID_TARGET AROUND #no!room"),
      ("BETWEEN #ops msgid={1} 10", "NEED_MORE_PARAMS BETWEEN #ops"),
      ("AROUND #ops 10", "NEED_MORE_PARAMS AROUND #ops"),
    ])
  func refuses(command: String, failure: String) {
    let (irc, alice, ids, _) = Self.sixLines()
    let lines = irc.send(alice, "CHATHISTORY " + Self.filled(command, ids))
    #expect(lines.count == 1)
    #expect(lines.first?.hasPrefix(":host.test FAIL CHATHISTORY \(failure) :") == true)
  }

  @Test("a msgid from another conversation closes the batch and fails with MESSAGE_ERROR")
  func unknownMessage() {
    let (irc, alice, _, bob) = Self.sixLines()
    irc.engine.send(bob, "JOIN #dev")
    let elsewhere = okID(irc.engine.send(bob, "SAY #dev not in ops"))
    for subcommand in ["LATEST", "BEFORE", "AFTER", "AROUND"] {
      let lines = irc.send(alice, "CHATHISTORY \(subcommand) #ops msgid=\(elsewhere) 10")
      #expect(
        lines.count == 3
          && lines[1].hasSuffix(" BATCH -\(lines[0].split(separator: " ")[2].dropFirst())"))
      #expect(lines.last?.hasPrefix(":host.test FAIL CHATHISTORY MESSAGE_ERROR :") == true)
    }
  }

  @Test("a client without batch gets the same lines without BATCH and without batch tags")
  func withoutBatch() {
    let (irc, _, ids, _) = Self.sixLines()
    let carol = irc.connect("carol", caps: ["draft/chathistory"])
    irc.send(carol, "JOIN #ops")
    #expect(
      irc.send(carol, "CHATHISTORY BEFORE #ops msgid=\(ids[2]) 5") == [
        ":bob!bob@host.test PRIVMSG #ops :m1", ":bob!bob@host.test PRIVMSG #ops :m2",
      ])
    let hour = "timestamp=2026-11-30T17:00:00.000Z timestamp=2026-11-30T18:00:00.000Z"
    #expect(
      irc.send(carol, "CHATHISTORY TARGETS \(hour) 5") == [
        ":host.test CHATHISTORY TARGETS #ops 2026-11-30T17:06:00.000Z"
      ])
  }

  @Test("a limit above the advertised CHATHISTORY=1000 is answered, not refused")
  func limitAboveMaximum() {
    let (irc, alice, _, _) = Self.sixLines()
    let lines = irc.send(alice, "CHATHISTORY LATEST #ops * 5000")
    #expect(lines.count == 8)
  }

  @Test(
    "TARGETS lists the rooms the user is in and their direct conversations active in the window")
  func targets() {
    let (irc, alice, _, bob) = Self.sixLines()
    irc.engine.clock.set("2026-11-30T17:07:00.000Z")
    irc.engine.send(bob, "SAY @alice psst")
    irc.engine.clock.set("2026-11-30T17:08:00.000Z")
    irc.engine.send(bob, "JOIN #dev")
    irc.engine.send(bob, "SAY #dev alice is not here")
    _ = irc.take(alice)
    let hour = "timestamp=2026-11-30T17:00:00.000Z timestamp=2026-11-30T18:00:00.000Z"
    let all = [
      ":host.test BATCH +h1 draft/chathistory-targets",
      "@batch=h1 :host.test CHATHISTORY TARGETS #ops 2026-11-30T17:06:00.000Z",
      "@batch=h1 :host.test CHATHISTORY TARGETS bob 2026-11-30T17:07:00.000Z",
      ":host.test BATCH -h1",
    ]
    #expect(irc.send(alice, "CHATHISTORY TARGETS \(hour) 10") == all)
    let reversed = "timestamp=2026-11-30T18:00:00.000Z timestamp=2026-11-30T17:00:00.000Z"
    #expect(
      irc.send(alice, "CHATHISTORY TARGETS \(reversed) 10")
        == all.map { $0.replacing("h1", with: "h2") })
    #expect(
      irc.send(alice, "CHATHISTORY TARGETS \(hour) 1") == [
        ":host.test BATCH +h3 draft/chathistory-targets",
        "@batch=h3 :host.test CHATHISTORY TARGETS #ops 2026-11-30T17:06:00.000Z",
        ":host.test BATCH -h3",
      ])
    let early = "timestamp=2026-11-30T17:00:00.000Z timestamp=2026-11-30T17:03:00.000Z"
    #expect(
      irc.send(alice, "CHATHISTORY TARGETS \(early) 10") == [
        ":host.test BATCH +h4 draft/chathistory-targets",
        "@batch=h4 :host.test CHATHISTORY TARGETS #ops 2026-11-30T17:02:00.000Z",
        ":host.test BATCH -h4",
      ], "both times are exclusive")
  }

  @Test(
    "TARGETS refuses anything but two timestamps and a limit",
    arguments: [
      ("TARGETS msgid={1} timestamp=2026-11-30T18:00:00.000Z 10", "INVALID_PARAMS TARGETS"),
      ("TARGETS * timestamp=2026-11-30T18:00:00.000Z 10", "INVALID_PARAMS TARGETS"),
      (
        "TARGETS timestamp=2026-11-30T17:00:00.000Z timestamp=2026-11-30T18:00:00.000Z 0",
        "INVALID_PARAMS TARGETS"
      ),
      ("TARGETS timestamp=2026-11-30T17:00:00.000Z 10", "NEED_MORE_PARAMS TARGETS"),
    ])
  func targetsRefused(command: String, failure: String) {
    let (irc, alice, ids, _) = Self.sixLines()
    let lines = irc.send(alice, "CHATHISTORY " + Self.filled(command, ids))
    #expect(lines.count == 1)
    #expect(lines.first?.hasPrefix(":host.test FAIL CHATHISTORY \(failure) ") == true)
  }
}

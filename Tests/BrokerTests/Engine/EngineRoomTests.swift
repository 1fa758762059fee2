import Broker
import LineProtocol
import TestSupport
import Testing

@Suite("Engine: rooms, members and events")
struct EngineRoomTests {
  @Test("HELLO names the user the shell says the kernel reported")
  func hello() {
    let harness = EngineHarness()
    harness.engine.connect(ConnectionID(7), user: "alice")
    #expect(
      harness.output.take(ConnectionID(7)) == [
        "HELLO 1.6.0 alice :welcome alice, type HELP for commands"
      ])
  }

  @Test("JOIN creates the room, counts distinct users and tells the others")
  func join() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let aliceAgain = harness.connect("alice")
    let bob = harness.connect("bob")
    #expect(harness.send(alice, "JOIN #Ops") == ["OK JOIN #ops 1"])
    #expect(harness.send(alice, "join #ops") == ["OK JOIN #ops 1"], "joining twice is no error")
    #expect(harness.send(aliceAgain, "JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(harness.output.take(alice) == [], "alice was there already: no JOIN event")
    #expect(harness.send(bob, "JOIN #ops") == ["OK JOIN #ops 2"])
    #expect(harness.output.take(alice) == ["JOIN #ops bob"])
    #expect(harness.output.take(aliceAgain) == ["JOIN #ops bob"])
    #expect(
      harness.journal.records.count == 4,
      "one room record, its creator's +o (chatbroker(7), \"Moderation\"), one member record per user, once each"
    )
  }

  @Test("PART tells the others only when the user's last session leaves")
  func part() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let aliceAgain = harness.connect("alice")
    let bob = harness.connect("bob")
    for connection in [alice, aliceAgain, bob] { harness.send(connection, "JOIN #ops") }
    _ = (harness.output.take(bob), harness.output.take(alice), harness.output.take(aliceAgain))
    #expect(harness.send(alice, "PART #ops") == ["OK PART #ops"])
    #expect(harness.output.take(bob) == [])
    harness.engine.disconnect(aliceAgain)
    #expect(harness.output.take(bob) == ["PART #ops alice"])
    // Closing a session is no PART: #ops is still one of alice's rooms, and
    // a PART from a session not in it drops it (chatbroker(7), "Your rooms and read markers").
    #expect(harness.send(alice, "PART #ops") == ["OK PART #ops"])
    #expect(harness.output.take(bob) == [], "alice had left already")
    #expect(harness.send(alice, "PART #ops") == ["ERR PART NOTJOINED :you have not joined #ops"])
  }

  @Test("ROOMS and WHO list by name with distinct users")
  func roomsAndWho() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(bob, "JOIN #zeta")
    harness.send(bob, "JOIN #alpha")
    harness.send(alice, "JOIN #alpha")
    harness.send(harness.connect("alice"), "JOIN #alpha")
    #expect(harness.send(alice, "ROOMS") == ["ROOM #alpha 2", "ROOM #zeta 1", "OK ROOMS 2"])
    #expect(
      harness.send(alice, "WHO #alpha") == [
        "MEMBER #alpha alice", "MEMBER #alpha bob", "OK WHO #alpha 2",
      ])
    #expect(harness.send(alice, "WHO #nowhere") == ["OK WHO #nowhere 0"])
  }

  @Test("QUIT answers OK, says BYE and closes; the others see PART")
  func quit() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(alice, "JOIN #a")
    harness.send(bob, "JOIN #a")
    #expect(harness.output.take(alice) == ["JOIN #a bob"])
    #expect(harness.send(alice, "QUIT") == ["OK QUIT", "BYE :bye alice"])
    #expect(harness.output.closed == [alice])
    #expect(harness.output.take(bob) == ["PART #a alice"])
    #expect(harness.send(alice, "PING") == [], "a closed session answers nothing")
  }

  @Test("the session limit refuses the next connection with ERR - LIMIT")
  func sessionLimit() {
    var limits = Limits()
    limits.sessionsPerUser = 2
    let harness = EngineHarness(limits: limits)
    harness.connect("alice")
    harness.connect("alice")
    let third = ConnectionID(99)
    #expect(harness.engine.connect(third, user: "alice") == false)
    #expect(harness.output.take(third).first?.hasPrefix("ERR - LIMIT :") == true)
    #expect(harness.output.closed.contains(third))
    #expect(harness.engine.connect(ConnectionID(100), user: "bob"), "other users are not limited")
  }

  @Test("framing errors are answered with the verb '-' and the session goes on")
  func framingErrors() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    harness.feed(.tooLong, from: alice)
    harness.feed(.badUTF8, from: alice)
    let lines = harness.output.take(alice)
    #expect(
      lines.map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == [
        "ERR - TOOLONG", "ERR - BADUTF8",
      ])
    #expect(harness.send(alice, "PING") == ["OK PING"])
  }

  @Test("HELP lists every verb with its syntax, then OK HELP")
  func help() {
    let harness = EngineHarness()
    let lines = harness.send(harness.connect("alice"), "HELP")
    #expect(lines.last == "OK HELP")
    for verb in Verb.allCases {
      #expect(lines.contains { $0.hasPrefix("INFO :\(verb.syntax)") }, "\(verb)")
    }
  }

  @Test("PING echoes its token")
  func ping() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    #expect(harness.send(alice, "PING") == ["OK PING"])
    #expect(harness.send(alice, "ping abc") == ["OK PING abc"])
  }
}

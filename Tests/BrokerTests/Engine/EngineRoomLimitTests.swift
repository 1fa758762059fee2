import Broker
import LineProtocol
import TestSupport
import Testing

/// The room limits and the forgetting of unused rooms of chatbroker(7),
/// on virtual time.
@Suite("Engine: room limits, forgotten rooms and ROOMS pages")
struct EngineRoomLimitTests {
  private func limits(rooms: Int = 10_000, perMinute: Int = 60) -> Limits {
    var limits = Limits()
    limits.rooms = rooms
    limits.newRoomsPerUserPerMinute = perMinute
    return limits
  }

  @Test("a request that would make a room past --max-rooms gets LIMIT naming the limit")
  func roomsInAll() {
    let harness = EngineHarness(limits: limits(rooms: 3))
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    for name in ["#a", "#b", "#c"] {
      #expect(harness.send(alice, "JOIN \(name)") == ["OK JOIN \(name) 1"])
    }
    let refusal =
      "LIMIT :there are already 3 rooms, the most the broker keeps; "
      + "use an existing room, or wait until an empty one is forgotten"
    #expect(harness.send(bob, "JOIN #d") == ["ERR JOIN \(refusal)"])
    #expect(harness.send(bob, "SAY #d hi") == ["ERR SAY \(refusal)"])
    #expect(harness.send(bob, "SAYAT #d +1h hi") == ["ERR SAYAT \(refusal)"])
    #expect(harness.send(bob, "JOIN #a") == ["OK JOIN #a 2"], "existing rooms stay open")
    #expect(harness.send(bob, "SAY #b hi").first?.hasPrefix("OK SAY ") == true)
    #expect(harness.send(bob, "SAY @alice hi").first?.hasPrefix("OK SAY ") == true)
    #expect(harness.send(bob, "ROOMS").last == "OK ROOMS 3", "nothing was created")
    #expect(
      harness.journal.records.count == 3 + 3 + 3 + 1 + 2,
      "three rooms, each with alice its operator and hers, #a bob's too, two messages")

    // Once an unused room is forgotten, there is a place again.
    #expect(harness.send(alice, "PART #c").last == "OK PART #c")
    #expect(harness.send(bob, "JOIN #d") == ["OK JOIN #d 1"])
  }

  @Test("a user past --new-rooms-per-minute gets LIMIT; the allowance refills, others keep theirs")
  func roomsPerMinute() {
    let harness = EngineHarness(limits: limits(perMinute: 4))
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    for number in 1...4 {
      #expect(harness.send(alice, "SAY #r\(number) hi").first?.hasPrefix("OK SAY ") == true)
    }
    #expect(
      harness.send(alice, "JOIN #r5") == [
        "ERR JOIN LIMIT :you may create at most 4 new rooms per minute; try again in 15 s"
      ])
    #expect(harness.send(alice, "JOIN #r1") == ["OK JOIN #r1 1"], "joining is not creating")
    #expect(harness.send(bob, "JOIN #b1") == ["OK JOIN #b1 1"], "bob has his own allowance")

    harness.clock.set("2026-11-30T17:00:10.000Z")
    #expect(
      harness.send(alice, "SAYAT #r5 +1h hi") == [
        "ERR SAYAT LIMIT :you may create at most 4 new rooms per minute; try again in 5 s"
      ])
    harness.clock.set("2026-11-30T17:00:15.000Z")
    #expect(harness.send(alice, "JOIN #r5") == ["OK JOIN #r5 1"], "one room every 15 s")
    #expect(harness.send(alice, "JOIN #r6").first?.hasPrefix("ERR JOIN LIMIT :") == true)

    harness.clock.set("2026-11-30T17:05:00.000Z")
    for number in 6...9 {
      #expect(harness.send(alice, "JOIN #r\(number)") == ["OK JOIN #r\(number) 1"])
    }
    #expect(
      harness.send(alice, "JOIN #r10").first?.hasPrefix("ERR JOIN LIMIT :") == true,
      "a long pause refills one minute's worth, not more")
  }

  @Test("a room is forgotten when its last member parts, unless it has history or pending lines")
  func unusedRoomsAreForgotten() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    let bob = harness.connect("bob")
    for name in ["#empty", "#talk", "#later"] { harness.send(alice, "JOIN \(name)") }
    harness.send(bob, "JOIN #empty")
    harness.send(alice, "SAY #talk hello")
    let pending = okID(harness.send(alice, "SAYAT #later +1h soon"))

    harness.send(alice, "PART #empty")
    #expect(harness.send(alice, "ROOMS").contains("ROOM #empty 1"), "bob is still in it")
    harness.engine.disconnect(bob)
    #expect(harness.send(alice, "ROOMS").contains("ROOM #empty 0"), "it is still bob's room")
    harness.send(harness.connect("bob"), "PART #empty")
    for name in ["#talk", "#later"] { harness.send(alice, "PART \(name)") }
    #expect(harness.send(alice, "ROOMS") == ["ROOM #later 0", "ROOM #talk 0", "OK ROOMS 2"])
    #expect(harness.engine.roomCount == 2)

    // The pending line kept #later; cancelled, nothing keeps it.
    #expect(harness.send(alice, "CANCEL \(pending)") == ["OK CANCEL \(pending)"])
    #expect(harness.send(alice, "ROOMS") == ["ROOM #talk 0", "OK ROOMS 1"])

    // Delivered, a pending line becomes history, which keeps the room.
    harness.send(alice, "SAYAT #due +1m done")
    harness.advance(to: "2026-11-30T17:01:00.000Z")
    #expect(harness.send(alice, "ROOMS") == ["ROOM #due 0", "ROOM #talk 0", "OK ROOMS 2"])
  }

  @Test("a restart and a compaction keep only the rooms worth keeping")
  func replayForgetsUnusedRooms() {
    let harness = EngineHarness()
    let alice = harness.connect("alice")
    for name in ["#joined", "#talk", "#later", "#cancelled"] { harness.send(alice, "JOIN \(name)") }
    harness.send(alice, "SAY #talk hello")
    harness.send(alice, "SAYAT #later +1h soon")
    harness.send(alice, "CANCEL \(okID(harness.send(alice, "SAYAT #cancelled +1h never")))")
    // Joined rooms stay alice's until she parts them (chatbroker(7), "Your rooms and read markers").
    for name in ["#joined", "#talk", "#later", "#cancelled"] { harness.send(alice, "PART \(name)") }

    let restarted = harness.restarted()
    let viewer = restarted.connect("bob")
    #expect(restarted.send(viewer, "ROOMS") == ["ROOM #later 0", "ROOM #talk 0", "OK ROOMS 2"])

    // Compaction replays the journal into a scratch engine and writes its
    // snapshot, without finishing the replay.
    let scratch = Engine(clock: harness.clock, users: harness.users, journal: MemoryJournal())
    for record in harness.journal.records { scratch.replay(record) }
    var compacted: [String] = []
    scratch.snapshot().forEachRecord { record in
      if case .room(let name, _) = record { compacted.append(name.description) }
    }
    #expect(compacted == ["#later", "#talk"])
  }

  @Test("ROOMS answers 1000 rooms at a time, marks the rest with MORE and pages with AFTER")
  func roomsPages() {
    let harness = EngineHarness(limits: limits(perMinute: 10_000))
    let alice = harness.connect("alice")
    let names = (0..<2500).map { String(format: "#r%04d", $0) }
    for name in names { harness.send(alice, "JOIN \(name)") }

    var listed: [String] = []
    var request = "ROOMS"
    var finals: [String] = []
    while true {
      let reply = harness.send(alice, request)
      let rooms = reply.dropLast()
      #expect(rooms.count <= Engine.roomsPerReply)
      listed += rooms.map { $0.words[1] }
      finals.append(reply.last ?? "")
      guard reply.last?.hasSuffix(" MORE") == true, let last = listed.last else { break }
      request = "ROOMS AFTER \(last)"
    }
    #expect(finals == ["OK ROOMS 1000 MORE", "OK ROOMS 1000 MORE", "OK ROOMS 500"])
    #expect(listed == names, "every room once, by name")
    #expect(harness.send(alice, "ROOMS AFTER #r2498") == ["ROOM #r2499 1", "OK ROOMS 1"])
    #expect(harness.send(alice, "ROOMS AFTER #r1").first == "ROOM #r1000 1", "after, by name")
    #expect(harness.send(alice, "ROOMS AFTER #a") == harness.send(alice, "ROOMS"))
    #expect(harness.send(alice, "ROOMS AFTER #zzz") == ["OK ROOMS 0"])
  }
}

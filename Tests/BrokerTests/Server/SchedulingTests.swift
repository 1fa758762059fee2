import LineProtocol
import TestSupport
import Testing

/// Scheduled lines on the real binary: delivered by the broker itself at the
/// due instant, to whoever is there.
@Suite("Scheduling")
struct SchedulingTests {
  @Test("a line scheduled for a room arrives at its due instant, at most 50 ms late (real time)")
  func roomOnTimeRealTime() throws {
    let broker = try BrokerProcess().start()
    let reader = try broker.connect()
    #expect(try reader.request("JOIN #sched") == ["OK JOIN #sched 1"])
    try expectOnTime(broker: broker, reader: reader, target: "#sched", seenAs: "#sched")
  }

  @Test("a direct line scheduled for another session arrives at its due instant (real time)")
  func directToOwnSessionOnTimeRealTime() throws {
    let broker = try BrokerProcess().start()
    let reader = try broker.connect()
    let user = reader.greeting.words[2]
    try expectOnTime(broker: broker, reader: reader, target: "@\(user)", seenAs: "@\(user)")
  }

  @Test(
    "a direct line scheduled for another user arrives at its due instant (real time)",
    UnixUsers.required)
  func directToUserOnTimeRealTime() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let reader = try broker.connect(as: "cbtest1")
    try expectOnTime(broker: broker, reader: reader, target: "@cbtest1", seenAs: "@root")
  }

  /// The author (root) schedules `+2s` and leaves; the idle reader must get
  /// the MSG no earlier than the due instant and within 50 ms after it.
  private func expectOnTime(
    broker: BrokerProcess, reader: LineClient, target: String, seenAs: String
  ) throws {
    let author = try broker.connect()
    let reply = try #require(author.request("SAYAT \(target) +2s :on the dot").last)
    #expect(reply.words.count == 4 && reply.words[0...1] == ["OK", "SAYAT"], "\(reply)")
    let id = reply.words[2]
    let due = try #require(Timestamp(rfc3339: reply.words[3])).milliseconds
    #expect(try author.request("QUIT") == ["OK QUIT"])
    _ = try author.readToEnd()

    let line = try reader.expect("MSG ", timeout: 5)
    let received = wallClockMilliseconds()
    #expect(received >= Double(due), "received \(received - Double(due)) ms before due")
    #expect(received <= Double(due) + 50, "received \(received - Double(due)) ms after due")
    #expect(line.words.count == 5 && line.freeText == "on the dot", "\(line)")
    #expect(line.words[1] == seenAs && line.words[2] == id && line.words[4] == "root")
    let delivered = try #require(Timestamp(rfc3339: line.words[3])).milliseconds
    #expect(delivered >= due && delivered <= due + 50, "MSG time \(line.words[3])")
  }

  @Test("SCHEDULED and CANCEL see only the caller's own pending lines", UnixUsers.required)
  func ownPendingOnly() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let alice = try broker.connect(as: "cbtest1")
    let bob = try broker.connect(as: "cbtest2")

    let later = try #require(alice.request("SAYAT @cbtest2 +2h :later").last)
    let sooner = try #require(alice.request("SAYAT #ops +1h :sooner").last)
    #expect(later.words[0...1] == ["OK", "SAYAT"] && sooner.words[0...1] == ["OK", "SAYAT"])
    let (laterID, laterDue) = (later.words[2], later.words[3])
    let (soonerID, soonerDue) = (sooner.words[2], sooner.words[3])

    let listed = try alice.request("SCHEDULED")
    #expect(listed.count == 3 && listed.last == "OK SCHEDULED 2", "\(listed)")
    #expect(listed.first?.words.prefix(4) == ["SCHED", soonerID, "#ops", soonerDue])
    #expect(listed.first?.freeText == "sooner")
    #expect(listed.dropFirst().first?.words.prefix(4) == ["SCHED", laterID, "@cbtest2", laterDue])
    #expect(try alice.request("SCHEDULED @cbtest2").last == "OK SCHEDULED 1")

    // Bob sees nothing of it, and cannot tell alice's id from no id at all.
    #expect(try bob.request("SCHEDULED") == ["OK SCHEDULED 0"])
    #expect(try bob.request("SCHEDULED @cbtest1") == ["OK SCHEDULED 0"])
    for id in [laterID, "zz999"] {
      let refused = try bob.request("CANCEL \(id)")
      #expect(refused.count == 1 && refused[0].hasPrefix("ERR CANCEL NOSUCHMSG :"), "\(refused)")
    }

    #expect(try alice.request("CANCEL \(laterID)") == ["OK CANCEL \(laterID)"])
    let again = try alice.request("CANCEL \(laterID)")
    #expect(again.count == 1 && again[0].hasPrefix("ERR CANCEL NOSUCHMSG :"))
    #expect(try alice.request("SCHEDULED").last == "OK SCHEDULED 1")
  }
}

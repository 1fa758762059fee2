import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// Catching up after being away, against the real binary (as two Unix users)
/// (chatbroker(7), "Your rooms and read markers").
@Suite("Catch-up: CONVERSATIONS and MARKREAD on the real binary")
struct CatchUpTests {
  @Test(
    "carol's direct message and mention show when bob is back; MARKREAD clears them, for good",
    UnixUsers.required)
  func catchUp() throws {
    try UnixUsers.ensure()
    let (bobName, carolName) = (UnixUsers.names[0], UnixUsers.names[1])
    // Syncing, as a real broker runs: what was answered is on disk.
    let broker = try BrokerProcess().start([])
    defer { _ = try? broker.stop() }

    let away = try broker.connect(as: bobName)
    #expect(try away.request("JOIN #retro") == ["OK JOIN #retro 1"])
    let own = try #require(away.request("SAY #retro my own line").last).words[2]
    #expect(try away.request("QUIT").first == "OK QUIT")

    let carol = try broker.connect(as: carolName)
    #expect(try carol.request("JOIN #retro") == ["OK JOIN #retro 1"], "bob has no session in it")
    var said: [(id: String, time: String)] = []
    for request in [
      "SAY #retro :what went well?", "SAY #retro :@\(bobName) you fixed the build",
      "SAY @\(bobName) :lunch?",
    ] {
      let reply = try #require(carol.request(request).last)
      #expect(reply.hasPrefix("OK SAY "), "\(reply)")
      said.append((reply.words[2], reply.words[3]))
    }

    let bob = try broker.connect(as: bobName)
    let other = try broker.connect(as: bobName)
    let room = "CONV #retro \(said[1].id) \(said[1].time)"
    let direct = "CONV @\(carolName) \(said[2].id) \(said[2].time)"
    #expect(
      try bob.request("CONVERSATIONS") == [
        "\(room) - 2 1", "\(direct) - 1 1", "OK CONVERSATIONS 2",
      ], "bob's own line is not unread")
    #expect(try bob.request("WHO #retro") == ["MEMBER #retro \(carolName)", "OK WHO #retro 1"])
    #expect(
      try bob.request("MARKREAD #retro \(said[1].id)") == ["OK MARKREAD #retro \(said[1].id)"])
    #expect(
      try bob.request("MARKREAD @\(carolName) \(said[2].id)") == [
        "OK MARKREAD @\(carolName) \(said[2].id)"
      ])
    #expect(
      try bob.request("MARKREAD #retro \(own)") == ["OK MARKREAD #retro \(said[1].id)"],
      "the marker only moves forward")
    #expect(try other.readLine() == "MARKREAD #retro \(said[1].id)")
    #expect(try other.readLine() == "MARKREAD @\(carolName) \(said[2].id)")
    let caughtUp = [
      "\(room) \(said[1].id) 0 0", "\(direct) \(said[2].id) 0 0", "OK CONVERSATIONS 2",
    ]
    #expect(try other.request("CONVERSATIONS") == caughtUp)
    #expect(
      try carol.request("CONVERSATIONS") == [
        "\(room) - 1 0", "CONV @\(bobName) \(said[2].id) \(said[2].time) - 0 0",
        "OK CONVERSATIONS 2",
      ], "carol has bob's line unread, her own are not")

    #expect(try broker.stop() == 0)
    try broker.start([])
    let back = try broker.connect(as: bobName)
    #expect(try back.request("CONVERSATIONS") == caughtUp)
  }

  @Test("your rooms and markers come through a compaction of the real journal and a restart")
  func compaction() throws {
    let broker = try BrokerProcess()
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    // 60,000 lines of alice's in #busy, one more that mentions the user;
    // #busy is the user's, read up to the 59,950th.
    try JournalFile.write(messages: 60_000, room: "#busy", to: broker.stateDirectory)
    let room = RoomName("#busy")!
    let start = Timestamp(milliseconds: 1_790_000_000_000)
    let records: [JournalRecord] = [
      .member(user: user, room: room, at: start),
      .message(
        StoredMessage(
          id: MessageID(value: 60_001), time: start + 60_000, author: "alice",
          text: "@\(user) look"), target: .room(room)),
      .read(user: user, target: .room(room), id: MessageID(value: 59_950), at: start + 60_001),
    ]
    let journal = try #require(FileHandle(forWritingAtPath: broker.journalPath))
    try journal.seekToEnd()
    try journal.write(contentsOf: Data(records.flatMap(\.jsonLine)))
    try journal.close()

    let options = [
      "--no-sync", "--history-per-conversation", "100", "--compact-min-size", "4194304",
    ]
    try broker.start(options)
    defer { _ = try? broker.stop() }
    try broker.waitForLog("journal compacted", timeout: 30)
    let newest = "\(MessageID(value: 60_001)) \(start + 60_000)"
    let expected = [
      "CONV #busy \(newest) \(MessageID(value: 59_950)) 51 1", "OK CONVERSATIONS 1",
    ]
    #expect(try broker.connect().request("CONVERSATIONS") == expected)
    #expect(try broker.stop() == 0)
    try broker.start(options)
    #expect(try broker.connect().request("CONVERSATIONS") == expected)
  }
}

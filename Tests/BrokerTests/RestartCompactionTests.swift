import Broker
import Foundation
import LineProtocol
import Testing

/// The compaction threshold follows what is live, also across restarts:
/// chatbroker(8), DESCRIPTION. A journal found over the 4 MiB floor at
/// start-up may be mostly dead records, so it is compacted once soon after.
@Suite("Compaction after a restart")
struct RestartCompactionTests {
  @Test("a journal that grew between restarts is compacted soon after start and replays the same")
  func grownJournalIsCompacted() throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    // 30,000 messages of 200 bytes to one room (about 8 MB), as a long run
    // stopped before its next compaction would leave them, and one message of
    // root's still scheduled. With 100 kept per conversation, little is live.
    let start = Timestamp(rfc3339: "2026-11-30T08:00:00.000Z")!
    let room = RoomName("#busy")!
    var records: [JournalRecord] = [
      .header(nextID: MessageID(value: 1)), .room(room, created: start),
    ]
    let text = String(repeating: "d", count: 200)
    for number in 1...30_000 {
      let message = StoredMessage(
        id: MessageID(value: UInt64(number)),
        time: Timestamp(milliseconds: start.milliseconds + Int64(number)), author: "alice",
        text: "\(number) \(text)")
      records.append(.message(message, target: .room(room)))
    }
    records.append(
      .schedule(
        PendingMessage(
          id: MessageID(value: 30_001), target: .room(room), author: "root", created: start,
          due: Timestamp(milliseconds: start.milliseconds + 400 * 86_400_000),
          text: "still pending")))
    let bytes = records.flatMap(\.jsonLine)
    #expect(bytes.count > 2 * (4 << 20) - (1 << 20), "well over the floor")
    #expect(FileManager.default.createFile(atPath: broker.journalPath, contents: Data(bytes)))

    let options = ["--no-sync", "--history-per-conversation", "100", "--horizon-days", "500"]
    try broker.start(options)
    try broker.waitForLog("journal compacted", timeout: 30)
    let size = try #require(
      FileManager.default.attributesOfItem(atPath: broker.journalPath)[.size] as? Int)
    #expect(size < 1 << 20, "compacted to what is kept (\(size) bytes)")
    let client = try broker.connect()
    let history = try client.request("HISTORY #busy 1000")
    let scheduled = try client.request("SCHEDULED")
    #expect(history.count == 101, "the newest 100, then OK")
    #expect(history.first?.hasSuffix(" alice :29901 \(text)") == true, "\(history.first ?? "")")
    #expect(scheduled.count == 2 && scheduled[0].hasSuffix(":still pending"), "\(scheduled)")

    #expect(try broker.stop() == 0)
    try broker.start(options)
    let again = try broker.connect()
    #expect(try again.request("HISTORY #busy 1000") == history)
    #expect(try again.request("SCHEDULED") == scheduled)
    let said = try again.request("SAY #busy new").last ?? ""
    #expect(said.hasPrefix("OK SAY "), "\(said)")
    #expect(!history.joined().contains(" \(said.words[2]) "), "ids are never reused")
  }
}

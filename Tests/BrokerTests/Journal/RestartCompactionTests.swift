import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// The compaction threshold follows what is live, also across restarts:
/// chatbroker(8), DESCRIPTION. A journal found over `--compact-min-size` at
/// start-up may be mostly dead records, so it is compacted once soon after.
@Suite("Compaction after a restart")
struct RestartCompactionTests {
  @Test("a journal that grew between restarts is compacted soon after start and replays the same")
  func grownJournalIsCompacted() throws {
    let broker = try BrokerProcess()
    // 60,000 messages to one room (about 6.5 MB), as a long run stopped
    // before its next compaction would leave them, and one message of
    // root's still scheduled. With 100 kept per conversation, little is live.
    try JournalFile.write(messages: 60_000, room: "#busy", to: broker.stateDirectory)
    let created = Timestamp(milliseconds: 1_790_000_000_000)
    let pending = JournalRecord.schedule(
      PendingMessage(
        id: MessageID(value: 60_001), target: .room(RoomName("#busy")!), author: "root",
        created: created, due: created + 400 * 86_400_000, text: "still pending"))
    let journal = try #require(FileHandle(forWritingAtPath: broker.journalPath))
    try journal.seekToEnd()
    try journal.write(contentsOf: Data(pending.jsonLine))
    try journal.close()
    let size = try #require(
      FileManager.default.attributesOfItem(atPath: broker.journalPath)[.size] as? Int)
    #expect(size > 6 << 20, "well over a 4 MiB --compact-min-size (\(size) bytes)")

    let options = [
      "--no-sync", "--history-per-conversation", "100", "--horizon-days", "500",
      "--compact-min-size", "4194304",
    ]
    try broker.start(options)
    try broker.waitForLog("journal compacted", timeout: 30)
    // The records, not the zeros written ahead of them (chatbroker(8)).
    let compacted = broker.journal.utf8.count
    #expect(compacted < 1 << 20, "compacted to what is kept (\(compacted) bytes)")
    let client = try broker.connect()
    let history = try client.request("HISTORY #busy 1000")
    let scheduled = try client.request("SCHEDULED")
    #expect(history.count == 101, "the newest 100, then OK")
    #expect(history.first?.hasSuffix(" alice :message 59900") == true, "\(history.first ?? "")")
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

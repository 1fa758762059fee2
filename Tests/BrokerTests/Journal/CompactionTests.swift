import Foundation
import TestSupport
import Testing

@Suite("Compaction of the real journal")
struct CompactionTests {
  /// Enough traffic to pass a 4 MiB `--compact-min-size` twice over, in a room whose
  /// history keeps only the newest 100: compaction must shrink the file and
  /// replay to the same state, while the broker keeps answering.
  @Test("a grown journal is compacted in the background and replays to the same state")
  func compactsAndReplays() throws {
    let options = [
      "--no-sync", "--history-per-conversation", "100", "--compact-min-size", "4194304",
    ]
    let broker = try BrokerProcess().start(options)
    let client = try broker.connect()
    let text = String(repeating: "c", count: 200)
    let pending = try client.request("SAYAT #keep +1h still pending")
    #expect(pending.last?.hasPrefix("OK SAYAT ") == true)
    let cancelled = try client.request("SAYAT #keep +2h never").last?.split(separator: " ")[2]
    #expect(try client.request("CANCEL \(cancelled ?? "")").last?.hasPrefix("OK CANCEL") == true)
    for batch in 0..<25 {
      let replies = try client.pipeline((0..<1000).map { "SAY #busy \(batch)-\($0) \(text)" })
      #expect(replies.allSatisfy { $0.last?.hasPrefix("OK SAY ") == true })
    }
    try broker.waitForLog("journal compacted", timeout: 30)
    #expect(try client.request("PING after") == ["OK PING after"])

    let history = try client.request("HISTORY #busy 1000")
    let scheduled = try client.request("SCHEDULED")
    let rooms = try client.request("ROOMS")
    #expect(history.count == 101, "the newest 100, then OK")
    #expect(history.first?.hasSuffix(":24-900 \(text)") == true)
    #expect(scheduled.count == 2 && scheduled[0].hasSuffix(":still pending"))

    // The records, not the zeros written ahead of them (chatbroker(8)).
    let size = broker.journal.utf8.count
    #expect(size < 4 << 20, "compacted to what is kept, not all that happened (\(size) bytes)")

    #expect(try broker.stop() == 0)
    try broker.start(options)
    let again = try broker.connect()
    #expect(try again.request("HISTORY #busy 1000") == history)
    #expect(try again.request("SCHEDULED") == scheduled)
    #expect(try again.request("ROOMS") == rooms)
    let newID = try again.request("SAY #busy new").last?.split(separator: " ")[2]
    #expect(newID.map { !history.joined().contains(" \($0) ") } == true, "ids are never reused")
  }

  @Test("--compact-min-size takes a number of bytes from 0, and refuses anything else")
  func minimumSizeOption() throws {
    let broker = try BrokerProcess()
    for wrong in ["-1", "64M", ""] {
      let refused = try broker.runToExit([
        "--socket", broker.socketPath, "--state-dir", broker.stateDirectory,
        "--compact-min-size", wrong,
      ])
      #expect(refused.status == 64, "\(wrong): \(refused.errors)")
      #expect(refused.errors.contains("--compact-min-size needs a number of bytes from 0"))
    }
    try broker.start(["--no-sync", "--compact-min-size", "0"])
    #expect(try broker.connect().request("PING") == ["OK PING"])
  }

  @Test("--purge-interval takes seconds from 0 to 86400, and refuses anything else")
  func purgeIntervalOption() throws {
    let broker = try BrokerProcess()
    for wrong in ["-1", "86401", "1m", ""] {
      let refused = try broker.runToExit([
        "--socket", broker.socketPath, "--state-dir", broker.stateDirectory,
        "--purge-interval", wrong,
      ])
      #expect(refused.status == 64, "\(wrong): \(refused.errors)")
      #expect(refused.errors.contains("--purge-interval needs a number of seconds from 0 to 86400"))
    }
    try broker.start(["--no-sync", "--purge-interval", "0"])
    #expect(try broker.connect().request("PING") == ["OK PING"])
  }
}

import Dispatch
import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// Series on the real binary: `kill -9` while a batch of series fires, at a
/// different moment each round; after the restart each occurrence is in the
/// history exactly once and each series waits for its next day
/// (chatbroker(7) "Series").
@Suite("Series crash")
struct SeriesCrashTests {
  private static let seriesPerRound = 200
  private static let killOffsets = [-20, 0, 3, 15]

  @Test(
    "kill -9 while series fire: each occurrence once, each series pending for tomorrow (real time)")
  func killWhileFiringRealTime() throws {
    let broker = try BrokerProcess()
    var dueByRoom: [String: Int64] = [:]
    var seen: [String: String] = [:]
    for (round, offset) in Self.killOffsets.enumerated() {
      try broker.start([])
      let room = "#fire\(round)"
      let watcher = try broker.connect()
      #expect(try watcher.request("JOIN \(room)").last?.hasPrefix("OK JOIN") == true)
      let author = try broker.connect()
      // A whole second at least 1.5 s ahead, as a UTC clock time.
      let due = (Int64(wallClockMilliseconds()) / 1000 + 2) * 1000
      let clock = String(Timestamp(milliseconds: due).description.dropFirst(11).prefix(8))
      let replies = try author.pipeline(
        (0..<Self.seriesPerRound).map { "SAYEVERY \(room) daily@\(clock)/UTC :r\(round)-\($0)" })
      #expect(replies.allSatisfy { $0.last?.hasPrefix("OK SAYEVERY ") == true }, "\(replies.last!)")
      #expect(replies.first?.last?.words[3] == Timestamp(milliseconds: due).description)
      dueByRoom[room] = due
      let pid = try #require(broker.process?.processIdentifier)
      let killAt = Double(due + Int64(offset)) - wallClockMilliseconds()
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(killAt))) {
        kill(pid, SIGKILL)
      }
      // Signal 0 sends nothing: this only waits for the kill above.
      #expect(try broker.stop(signal: 0) == SIGKILL, "killed \(offset) ms after the due instant")
      while let line = try? watcher.readLine(timeout: 5) {
        if line.hasPrefix("MSG ") { seen[line.words[2]] = line }
      }
    }
    try broker.start([])
    let client = try broker.connect()
    let pending = try client.dataLines("SCHEDULED")
    #expect(pending.count == Self.seriesPerRound * Self.killOffsets.count)
    for line in pending {
      let words = line.words
      #expect(words.count == 6 && words[5].hasPrefix("daily@"), "\(line)")
      let due = try #require(Timestamp(rfc3339: words[3])).milliseconds
      let room = words[2]
      #expect(due == (dueByRoom[room] ?? 0) + 86_400_000, "tomorrow, once: \(line)")
    }
    var historyLines: [String: String] = [:]
    for (round, _) in Self.killOffsets.enumerated() {
      let lines = try client.dataLines("HISTORY #fire\(round) 1000")
      let texts = lines.compactMap(\.freeText)
      #expect(texts.count == Self.seriesPerRound, "round \(round): each occurrence once")
      #expect(Set(texts).count == texts.count, "round \(round): none twice")
      for line in lines { historyLines[line.words[2]] = String(line.dropFirst(5)) }
    }
    for (id, line) in seen {
      #expect(historyLines[id] == String(line.dropFirst(4)), "seen live, kept: \(line)")
    }
  }
}

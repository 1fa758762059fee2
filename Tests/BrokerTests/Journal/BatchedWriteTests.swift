import Dispatch
import Foundation
import Glibc
import TestSupport
import Testing

/// The journal's writes gather the records of many requests into one
/// `pwrite(2)` in a file zero-filled ahead (chatbroker(8), "JOURNAL
/// FORMAT"): a broker killed while such a write is half done loses nothing
/// it acknowledged, and starts again without help.
@Suite("Batched journal writes")
struct BatchedWriteTests {
  private static let header = #"{"type":"journal","version":1,"next_id":"1"}"#

  private static func message(_ id: Int, _ text: String) -> String {
    ##"{"type":"message","id":"\##(String(id, radix: 36))","to":"#b","from":"root","at":"2026-11-30T17:00:00.000Z","text":"\##(text)"}"##
  }

  @Test("a batch cut inside a record, with zeros after it, starts with every whole record")
  func cutBatchBeforeZeros() throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    // What kill -9 in the middle of one pwrite of three records leaves in
    // a file zero-filled ahead: two whole records, part of the third, zeros.
    let whole = [Self.header, Self.message(1, "synced"), Self.message(2, "in the batch")]
    let torn = String(Self.message(3, "cut short").prefix(40))
    var bytes = Array((whole.joined(separator: "\n") + "\n" + torn).utf8)
    bytes += [UInt8](repeating: 0, count: 1 << 20)
    try Data(bytes).write(to: URL(fileURLWithPath: broker.journalPath))

    try broker.start([])
    #expect(broker.log.contains("bytes_dropped=\(torn.utf8.count)"), "\(broker.log)")
    let client = try broker.connect()
    #expect(try client.dataLines("HISTORY #b").map(\.freeText) == ["synced", "in the batch"])
    #expect(try client.request("SAY #b after").first?.hasPrefix("OK SAY 3 ") == true)
    #expect(try broker.stop() == 0)
    let records = broker.journal.split(separator: "\n")
    #expect(records.count == 4 && records.last?.contains(#""text":"after""#) == true)

    try broker.start([])
    let again = try broker.connect()
    #expect(
      try again.dataLines("HISTORY #b").map(\.freeText) == ["synced", "in the batch", "after"])
  }

  @Test(
    "bytes other than zeros after the zeros are damage: start-up stops; --repair sets them aside")
  func strayBytesAfterZeros() throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    var bytes = Array((Self.header + "\n" + Self.message(1, "kept") + "\n").utf8)
    bytes += [UInt8](repeating: 0, count: 4096)
    bytes += Array((Self.message(2, "after the zeros") + "\n").utf8)
    try Data(bytes).write(to: URL(fileURLWithPath: broker.journalPath))

    let refused = try broker.runToExit([
      "--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync",
    ])
    #expect(refused.status == 65, "EX_DATAERR")
    #expect(refused.errors.contains("line 3"), "\(refused.errors)")
    #expect(refused.errors.contains("after the zeros"), "\(refused.errors)")
    #expect(refused.errors.contains("--repair"), "\(refused.errors)")

    try broker.start(["--no-sync", "--repair"])
    #expect(broker.log.contains("set aside"), "\(broker.log)")
    #expect(try broker.connect().dataLines("HISTORY #b").map(\.freeText) == ["kept"])
    let files = try FileManager.default.contentsOfDirectory(atPath: broker.stateDirectory)
    let aside = try #require(files.first { $0.hasPrefix("journal.jsonl.damaged") }, "\(files)")
    let setAside = try String(contentsOfFile: broker.stateDirectory + "/" + aside, encoding: .utf8)
    #expect(setAside == Self.message(2, "after the zeros") + "\n")
  }

  /// A kill lands inside the pwrite itself only rarely (it copies into the
  /// page cache in microseconds); ``cutBatchBeforeZeros()`` puts the file
  /// such a kill leaves in place directly.
  @Test("kill -9 while writes carry the records of many clients at once loses nothing acknowledged")
  func killDuringBatchedWrite() throws {
    let broker = try BrokerProcess()
    var random = SeededGenerator(seed: 0xBA7C4)
    var acknowledged: [String: Set<String>] = [:]
    let padding = String(repeating: "p", count: 3000)
    for round in 0..<8 {
      try broker.start([])
      try verify(broker, acknowledged, round: round)
      let room = "#batch\(round)"
      // Eight clients, each with 32 requests of 3 KB in flight: each event
      // gathers tens of records, written with one pwrite of ~100 KB.
      let clients = try (0..<8).map { _ in try broker.connect() }
      let pid = try #require(broker.process?.processIdentifier)
      var sent: [[String]] = []
      for (index, client) in clients.enumerated() {
        let texts = (0..<32).map { "r\(round)c\(index)n\($0) \(padding)" }
        sent.append(texts)
        // The broker may be gone already: what was not sent is not counted.
        _ = try? client.send(texts.map { "SAY \(room) \($0)\n" }.joined())
      }
      // The kill comes a few milliseconds after the first acknowledgement,
      // while the other clients' batches are still being written; a fixed
      // delay could land before any, on a loaded machine.
      var killScheduled = false
      for (index, client) in clients.enumerated() {
        var next = 0
        while next < sent[index].count, let line = try? client.readLine(timeout: 5) {
          if line.hasPrefix("OK SAY ") {
            acknowledged[room, default: []].insert(sent[index][next])
            if !killScheduled {
              killScheduled = true
              let delay = Int(random.next() % 8)
              DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
                kill(pid, SIGKILL)
              }
            }
          }
          next += 1
        }
      }
      if !killScheduled { kill(pid, SIGKILL) }
      #expect(try broker.stop(signal: SIGKILL) == SIGKILL)
    }
    #expect(acknowledged.values.contains { !$0.isEmpty }, "some requests were acknowledged")
    try broker.start([])
    try verify(broker, acknowledged, round: 8)
    #expect(!broker.log.contains("--repair"), "a kill never leaves damage")
    #expect(try broker.stop() == 0)
  }

  /// Every acknowledged text is in its room's history, once.
  private func verify(_ broker: BrokerProcess, _ acknowledged: [String: Set<String>], round: Int)
    throws
  {
    let client = try broker.connect()
    for (room, texts) in acknowledged {
      let history = try client.dataLines("HISTORY \(room) 1000").compactMap(\.freeText)
      let missing = texts.subtracting(history)
      #expect(missing.isEmpty, "round \(round): \(missing.count) acknowledged lines lost")
      #expect(Set(history).count == history.count, "round \(round): a line twice")
    }
  }
}

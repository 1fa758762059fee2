import Dispatch
import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// `kill -9` of a syncing broker in the middle of pipelined SAYs, SAYATs and
/// CANCELs, many times with different timing: nothing acknowledged is lost,
/// nothing is delivered twice (chatbroker(7), "Order and durability").
@Suite("Crash")
struct CrashTests {
  /// What the client was told, and what it sent without being told.
  private struct Ledger {
    /// Acknowledged SAYs, and SAYATs whose CANCEL found them delivered:
    /// must be in history exactly once.
    var said: [String: String] = [:]
    /// Acknowledged SAYATs with no CANCEL sent: delivered once, or pending.
    var scheduled: [String: (text: String, due: Int64)] = [:]
    /// Acknowledged SAYATs, then acknowledged CANCELs: never delivered.
    var cancelled: Set<String> = []
    /// The latest due instant of any acknowledged SAYAT.
    var latestDue: Int64 = 0
    /// Every MSG a watching client received, as `<target> <id> <time> <user> :<text>`
    /// by id: what anyone saw must be in history, exactly as seen.
    var seen: [String: String] = [:]
    /// Rooms written to.
    var rooms: [String] = []
  }

  private static let rounds = 20

  @Test("kill -9 during a pipelined load loses nothing acknowledged and repeats nothing")
  func killDuringLoad() throws {
    let broker = try BrokerProcess()
    var ledger = Ledger()
    var random = SeededGenerator(seed: 0xC0FFEE)
    for round in 0..<Self.rounds {
      do {
        try broker.start([])
        try verify(broker.connect(), ledger, round: round, waitForDue: false)
        ledger.rooms.append("#crash\(round)")
        let watcher = try broker.connect()
        let joined = try watcher.pipeline(ledger.rooms.map { "JOIN \($0)" })
        #expect(joined.allSatisfy { $0.last?.hasPrefix("OK JOIN ") == true })
        let client = try broker.connect()
        let pid = try #require(broker.process?.processIdentifier)
        // Kill at a different moment each round: 2 to 200 ms into the load.
        let delay = 2 + Int(random.next() % 199)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
          kill(pid, SIGKILL)
        }
        try load(client, into: &ledger, round: round, random: &random)
        #expect(try broker.stop(signal: SIGKILL) == SIGKILL)
        // What reached the watcher before the kill (a cut last line aside).
        while let line = try? watcher.readLine() {
          if line.hasPrefix("MSG ") { ledger.seen[line.words[2]] = String(line.dropFirst(4)) }
        }
      } catch {
        throw TestFailure("round \(round): \(error)\nbroker log:\n\(broker.log)")
      }
    }
    try broker.start([])
    try verify(broker.connect(), ledger, round: Self.rounds, waitForDue: true)
    #expect(ledger.said.count > 100 && ledger.scheduled.count > 20 && ledger.cancelled.count > 5)
  }

  /// Pipelines chunks of requests and books each reply, until the broker dies.
  private func load(
    _ client: LineClient, into ledger: inout Ledger, round: Int, random: inout SeededGenerator
  ) throws {
    let room = "#crash\(round)"
    var sequence = 0
    // Enough requests that the kill always comes first, few enough that
    // each room's history fits one HISTORY reply.
    for _ in 0..<20 {
      var requests: [String] = []
      var texts: [String] = []
      for _ in 0..<40 {
        sequence += 1
        let text = "r\(round)-\(sequence)"
        let dice = random.next() % 10
        // The latest due is most likely still pending; the earliest, delivered.
        let byDue = ledger.scheduled.sorted { $0.value.due < $1.value.due }
        if dice == 9, let (id, _) = random.next() % 3 == 0 ? byDue.first : byDue.last {
          requests.append("CANCEL \(id)")
          texts.append(ledger.scheduled[id]!.text)
          // A CANCEL without reply may or may not have happened.
          ledger.scheduled[id] = nil
        } else if dice >= 6 {
          // Some fall due within the load, some after the restart.
          let offset = 5 + Int64(random.next() % 700)
          let due = Timestamp(milliseconds: Int64(wallClockMilliseconds()) + offset)
          requests.append("SAYAT \(room) \(due) \(text)")
          texts.append(text)
        } else {
          requests.append("SAY \(room) \(text)")
          texts.append(text)
        }
      }
      do {
        try client.send(requests.map { $0 + "\n" }.joined())
        for (request, text) in zip(requests, texts) {
          guard let reply = try client.readLine() else { return }
          let words = reply.words
          switch (words.first, words.dropFirst().first) {
          case ("OK", "SAY"): ledger.said[words[2]] = text
          case ("OK", "SAYAT"):
            let due = try #require(Timestamp(rfc3339: words[3])).milliseconds
            ledger.scheduled[words[2]] = (text, due)
            ledger.latestDue = max(ledger.latestDue, due)
          case ("OK", "CANCEL"): ledger.cancelled.insert(words[2])
          case ("ERR", "CANCEL"):
            // Not pending any more: it was delivered, durably, before this reply.
            #expect(reply.contains(" NOSUCHMSG :"), "\(reply)")
            ledger.said[request.words[1]] = text
          case ("ERR", "SAYAT"): #expect(reply.contains(" PAST :"), "\(reply)")
          default: Issue.record("\(request) answered \(reply)")
          }
        }
      } catch {
        return  // the broker died mid-reply
      }
    }
    _ = try? client.readToEnd()
  }

  /// Checks what a restarted broker shows against what was acknowledged.
  private func verify(
    _ client: LineClient, _ ledger: Ledger, round: Int, waitForDue: Bool
  ) throws {
    if waitForDue {
      try waitUntil(timeout: 10, "every schedule to fall due") {
        wallClockMilliseconds() > Double(ledger.latestDue) + 100
      }
    }
    // Pending first: a line pending now may be delivered before HISTORY.
    let pending = Set(try client.dataLines("SCHEDULED").map { $0.words[1] })
    var seenIDs: [String: Int] = [:]
    var seenTexts: [String: Int] = [:]
    var textByID: [String: String] = [:]
    var lineByID: [String: String] = [:]
    for room in ledger.rooms {
      let lines = try client.dataLines("HISTORY \(room) 1000")
      #expect(lines.count < 1000, "\(room) is too long to check in one reply")
      for line in lines {
        let id = line.words[2]
        seenIDs[id, default: 0] += 1
        seenTexts[line.freeText ?? "", default: 0] += 1
        textByID[id] = line.freeText
        lineByID[id] = String(line.dropFirst(5))
      }
    }
    let context = "after restart \(round)"
    #expect(seenIDs.values.allSatisfy { $0 == 1 }, "an id appears twice \(context)")
    #expect(seenTexts.values.allSatisfy { $0 == 1 }, "a text appears twice \(context)")
    for (id, text) in ledger.said {
      #expect(textByID[id] == text, "acknowledged SAY \(id) \(text) \(context)")
    }
    for (id, (text, _)) in ledger.scheduled {
      let delivered = textByID[id] == text
      #expect(delivered || pending.contains(id), "acknowledged SAYAT \(id) lost \(context)")
      if waitForDue { #expect(delivered, "SAYAT \(id) was not delivered \(context)") }
    }
    for (id, line) in ledger.seen {
      #expect(lineByID[id] == line, "seen live as MSG \(line), history differs \(context)")
    }
    for id in ledger.cancelled {
      #expect(textByID[id] == nil && !pending.contains(id), "cancelled \(id) came back \(context)")
    }
  }
}

import Foundation
import TestSupport
import Testing

/// Taking a message back through the real broker (chatbroker(7), `REDACT`):
/// the other user's session is told, and the journal file itself no longer
/// holds the text once the compaction that the redaction starts is done
/// (chatbroker(8), `redact`).
@Suite("Taking a message back")
struct RedactionTests {
  @Test(
    "a redacted line leaves every history and the journal file, across a restart",
    UnixUsers.required)
  func redactedTextLeavesTheJournal() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let alice = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #ops").last == "OK JOIN #ops 1")
    let said = try #require(alice.request("SAY #ops :the password is hunter2").last)
    let id = said.words[2]
    _ = try alice.request("SAY #ops :and this stays")
    _ = try bob.expect("MSG #ops \(id) ")
    #expect(broker.journal.contains("hunter2"))
    #expect(try alice.request("REDACT #ops \(id)") == ["OK REDACT #ops \(id)"])
    #expect(try bob.expect("REDACT ") == "REDACT #ops \(id) root")
    try waitUntil(timeout: 10, "the journal file to lose the text") {
      !broker.journal.contains("hunter2")
    }
    #expect(broker.journal.contains("and this stays"))
    try broker.restart()
    let carol = try broker.connect(as: "cbtest1")
    let history = try carol.request("HISTORY #ops")
    #expect(history.first?.hasSuffix(" root REDACTED :") == true)
    #expect(!history.joined().contains("hunter2"))
    #expect(history.contains { $0.hasSuffix(":and this stays") })
  }

  @Test(
    "CONVERSATIONS counts a line taken back neither unread nor as a mention", UnixUsers.required)
  func redactedNotUnread() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let writer = try broker.connect(as: "cbtest1")
    let reader = try broker.connect(as: "cbtest2")
    _ = try writer.request("JOIN #ops")
    _ = try reader.request("JOIN #ops")
    let mention = try #require(writer.request("SAY #ops :@cbtest2 the password is hunter2").last)
      .words[2]
    let direct = try #require(writer.request("SAY @cbtest2 :@cbtest2 psst").last).words[2]
    func counts() throws -> [[String]] {
      try reader.dataLines("CONVERSATIONS").filter { $0.hasPrefix("CONV ") }.map {
        Array($0.words.suffix(2))
      }
    }
    let unread = try counts()
    #expect(unread == [["1", "1"], ["1", "1"]], "\(unread)")
    _ = try writer.request("REDACT #ops \(mention)")
    _ = try writer.request("REDACT @cbtest2 \(direct)")
    #expect(try counts() == [["0", "0"], ["0", "0"]])
  }

  /// chatbroker(8), `--purge-interval`: redactions start at most one
  /// compaction per interval; a text taken back sooner than that after one
  /// leaves the file when the interval ends, also on a broker that nothing
  /// else wakes. Watched on the clock, with the interval at 2 s.
  @Test(
    "a text taken back right after a compaction leaves the idle broker's journal within --purge-interval (real time)",
    UnixUsers.required)
  func takenBackRightAfterCompactionLeavesIdleJournalRealTime() throws {
    try UnixUsers.ensure()
    let interval = 2.0
    let broker = try BrokerProcess().start(["--purge-interval", "\(Int(interval))"])
    let author = try broker.connect(as: "cbtest1")
    let first = try #require(author.request("SAY #ops :first secret").last).words[2]
    let second = try #require(author.request("SAY #ops :second secret").last).words[2]
    #expect(try author.request("REDACT #ops \(first)") == ["OK REDACT #ops \(first)"])
    try waitUntil(timeout: 10, "the journal file to lose the first text") {
      !broker.journal.contains("first secret")
    }
    // Right after that compaction started: this one waits for the interval.
    let redacted = Date()
    #expect(try author.request("REDACT #ops \(second)") == ["OK REDACT #ops \(second)"])
    let stillThere = broker.journal.contains("second secret")
    if Date().timeIntervalSince(redacted) < interval / 2 {
      #expect(stillThere, "the second compaction waits for the interval to end")
    }
    // Nothing else happens: no request, no timer, no other client.
    try waitUntil(timeout: interval + 3, "the journal file to lose the second text") {
      !broker.journal.contains("second secret")
    }
    let took = Date().timeIntervalSince(redacted)
    #expect(took <= (interval + 2) * testTimeScale, "left the file after \(took) s")
    #expect(try author.request("HISTORY #ops").first?.hasSuffix(" cbtest1 REDACTED :") == true)
  }

  /// chatbroker(8), `redact`: a `redact` record still in the journal at
  /// start-up means no compaction ran after it, so the text may still be
  /// in the file: the broker compacts at once after starting. Whether it
  /// was killed (nothing flushed, no shutdown) or stopped before the
  /// compaction that the interval held back.
  @Test(
    "a text taken back before a crash or a stop leaves the journal file right after the next start",
    UnixUsers.required, arguments: [true, false])
  func takenBackBeforeRestartLeavesJournal(crash: Bool) throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let author = try broker.connect(as: "cbtest1")
    let first = try #require(author.request("SAY #ops :first secret").last).words[2]
    let second = try #require(author.request("SAY #ops :second secret").last).words[2]
    _ = try author.request("SAY #ops :this stays")
    #expect(try author.request("REDACT #ops \(first)") == ["OK REDACT #ops \(first)"])
    try waitUntil(timeout: 10, "the journal file to lose the first text") {
      !broker.journal.contains("first secret")
    }
    // Within the default minute after that compaction: this one waits.
    #expect(try author.request("REDACT #ops \(second)") == ["OK REDACT #ops \(second)"])
    #expect(broker.journal.contains("second secret"))
    try broker.restart(crash: crash)
    try waitUntil(timeout: 10, "the journal file to lose the second text after the start") {
      !broker.journal.contains("second secret")
    }
    #expect(broker.journal.contains("this stays"))
    let reader = try broker.connect()
    let history = try reader.request("HISTORY #ops")
    #expect(history.filter { $0.hasSuffix(" cbtest1 REDACTED :") }.count == 2)
    #expect(!history.joined().contains("secret"))
  }

  /// A compaction that fails (here: something in the way of its temporary
  /// file) leaves the text owed: the next is tried when the interval ends,
  /// on a broker that nothing else wakes.
  @Test("a text whose compaction failed leaves the journal file at the next interval (real time)")
  func takenBackAfterFailedCompactionLeavesJournalRealTime() throws {
    let interval = 1.0
    let broker = try BrokerProcess().start(["--purge-interval", "\(Int(interval))"])
    let author = try broker.connect()
    let id = try #require(author.request("SAY #ops :the secret").last).words[2]
    let obstacle = broker.journalPath + ".compacting"
    #expect(mkdir(obstacle, 0o700) == 0)
    #expect(try author.request("REDACT #ops \(id)") == ["OK REDACT #ops \(id)"])
    try broker.waitForLog("journal compaction failed")
    #expect(broker.journal.contains("the secret"))
    #expect(rmdir(obstacle) == 0)
    try waitUntil(timeout: interval + 3, "the journal file to lose the text") {
      !broker.journal.contains("the secret")
    }
  }
}

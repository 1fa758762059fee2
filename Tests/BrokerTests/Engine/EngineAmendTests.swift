import Broker
import LineProtocol
import TestSupport
import Testing

/// Changing a sent line (chatbroker(7), `AMEND`): only its author, only
/// within 24 hours; the new text replaces the old in every reply and
/// search, marked `EDITED`, and the old text leaves the journal file.
@Suite("Engine: amending a sent line")
struct EngineAmendTests {
  static let time = "2026-11-30T17:00:00.000Z"

  @Test("AMEND replaces the text for everyone, marked EDITED in HISTORY, across a restart")
  func amendInRoom() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :deploy at 1800"))
    _ = chat.output.take(bob)
    #expect(chat.send(alice, "AMEND #ops \(id) :deploy at 18:00") == ["OK AMEND #ops \(id)"])
    #expect(chat.output.take(bob) == ["AMEND #ops \(id) alice :deploy at 18:00"])
    let shown = "HIST #ops \(id) \(Self.time) alice EDITED :deploy at 18:00"
    #expect(chat.send(bob, "HISTORY #ops 1").first == shown)
    #expect(chat.send(bob, "SEARCH #ops 18:00").first == shown)
    #expect(chat.send(bob, "SEARCH #ops 1800") == ["OK SEARCH #ops 0"], "the old words are gone")
    let line = String(decoding: try #require(chat.journal.records.last).jsonLine, as: UTF8.self)
    #expect(line.contains(#""type":"amend""#) && line.contains(#""text":"deploy at 18:00""#))
    let restarted = chat.restarted()
    let carol = restarted.connect("carol")
    #expect(restarted.send(carol, "HISTORY #ops 1").first == shown)
  }

  @Test("the compacted journal holds the new text, marked edited, and nothing of the old")
  func compacted() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let id = okID(chat.send(alice, "SAY @bob :the password is hunter2"))
    chat.send(alice, "AMEND @bob \(id) :the password is in the vault")
    var records: [String] = []
    chat.engine.snapshot().forEachRecord {
      records.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(!records.contains { $0.contains("hunter2") })
    #expect(records.contains { $0.contains(#""edited":1"#) && $0.contains("in the vault") })
    let replayed = EngineHarness()
    chat.engine.snapshot().forEachRecord { replayed.engine.replay($0) }
    replayed.engine.finishReplay()
    #expect(
      replayed.send(replayed.connect("bob"), "HISTORY @alice").first
        == "HIST @alice \(id) \(Self.time) alice EDITED :the password is in the vault")
  }

  @Test(
    "nobody else may, nor after 24 hours, nor on a line taken back; the same text writes nothing")
  func refused() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let mine = okID(chat.send(alice, "SAY #ops :mine"))
    let gone = okID(chat.send(alice, "SAY #ops :gone"))
    chat.send(alice, "REDACT #ops \(gone)")
    let written = chat.journal.records.count
    _ = chat.output.take(bob)
    let notYours =
      "you sent no message \(mine) in #ops; give the id of one of yours, as OK SAY, MSG and HISTORY show it"
    #expect(chat.send(bob, "AMEND #ops \(mine) :bob's now") == ["ERR AMEND NOSUCHMSG :\(notYours)"])
    #expect(
      chat.send(alice, "AMEND #ops \(gone) :back?").first?.hasPrefix("ERR AMEND NOSUCHMSG") == true)
    #expect(chat.send(alice, "AMEND #ops \(mine) :mine") == ["OK AMEND #ops \(mine)"])
    #expect(chat.journal.records.count == written)
    #expect(chat.send(alice, "AMEND #ops \(mine)").first?.hasPrefix("ERR AMEND SYNTAX") == true)
    chat.clock.set("2026-12-01T17:00:00.001Z")
    #expect(
      chat.send(alice, "AMEND #ops \(mine) :late") == [
        "ERR AMEND LIMIT :message \(mine) was sent more than 24 hours ago and can no longer be changed"
      ])
    #expect(chat.journal.records.count == written)
  }

  @Test("a failed sync gives the old text back, and the AMEND line is held until the sync")
  func rolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :before"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(bob)
    chat.send(alice, "AMEND #ops \(id) :after")
    #expect(chat.output.kinds["AMEND #ops \(id) alice :after"] == .revealing)
    #expect(chat.output.kinds["OK AMEND #ops \(id)"] == .outcome(.amend))
    _ = chat.output.take(bob)  // held, and dropped by the shell when rolled back
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    let history = chat.send(bob, "HISTORY #ops 1")
    #expect(history.first?.hasSuffix(" alice :before") == true, "\(history)")
  }
}

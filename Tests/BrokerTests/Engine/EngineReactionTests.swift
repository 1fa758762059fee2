import Broker
import LineProtocol
import TestSupport
import Testing

/// Reactions (chatbroker(7), `REACT`): anyone who may write to a
/// conversation puts a short word on a message they may read, at most one
/// of each; the others are told, `HISTORY` shows who put which, and they
/// are journaled, compacted and rolled back with the message.
@Suite("Engine: reactions")
struct EngineReactionTests {
  static let time = "2026-11-30T17:00:00.000Z"

  @Test("REACT and UNREACT tell the room, show in HISTORY and SEARCH, and survive a restart")
  func reactInRoom() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    for connection in [alice, bob, carol] { chat.send(connection, "JOIN #ops") }
    let id = okID(chat.send(alice, "SAY #ops :deploy at 18:00"))
    for connection in [alice, bob, carol] { _ = chat.output.take(connection) }
    #expect(chat.send(bob, "REACT #ops \(id) 👍") == ["OK REACT #ops \(id) 👍"])
    #expect(chat.output.take(alice) == ["REACT #ops \(id) bob 👍"])
    let written = chat.journal.records.count
    #expect(chat.send(bob, "REACT #ops \(id) 👍") == ["OK REACT #ops \(id) 👍"])
    #expect(chat.journal.records.count == written, "the same reaction again writes nothing")
    #expect(chat.output.take(alice).isEmpty)
    chat.send(carol, "REACT #ops \(id) 👍")
    chat.send(carol, "react #ops \(id) +1")
    for connection in [alice, bob] { _ = chat.output.take(connection) }
    let shown = "HIST #ops \(id) \(Self.time) alice REACTIONS 👍=bob+carol,+1=carol :deploy at 18:00"
    #expect(chat.send(alice, "HISTORY #ops 1").first == shown)
    #expect(chat.send(alice, "SEARCH #ops deploy").first == shown)
    _ = chat.output.take(alice)
    #expect(chat.send(bob, "UNREACT #ops \(id) 👍") == ["OK UNREACT #ops \(id) 👍"])
    #expect(chat.output.take(alice) == ["UNREACT #ops \(id) bob 👍"])
    _ = chat.output.take(carol)
    #expect(chat.send(bob, "UNREACT #ops \(id) 👍") == ["OK UNREACT #ops \(id) 👍"])
    let after = "HIST #ops \(id) \(Self.time) alice REACTIONS 👍=carol,+1=carol :deploy at 18:00"
    #expect(chat.send(alice, "HISTORY #ops 1").first == after)
    let restarted = chat.restarted()
    #expect(restarted.send(restarted.connect("dave"), "HISTORY #ops 1").first == after)
  }

  @Test("in a direct conversation each side sees the other's name as the target")
  func reactDirect() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let id = okID(chat.send(alice, "SAY @bob :lunch?"))
    _ = chat.output.take(bob)
    #expect(chat.send(bob, "REACT @alice \(id) yes") == ["OK REACT @alice \(id) yes"])
    #expect(chat.output.take(alice) == ["REACT @bob \(id) bob yes"])
    #expect(
      chat.send(alice, "HISTORY @bob 1").first
        == "HIST @bob \(id) \(Self.time) alice REACTIONS yes=bob :lunch?")
  }

  @Test("a reaction is not unread, and a line taken back loses its reactions")
  func notUnreadAndRedacted() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :oops"))
    chat.send(bob, "MARKREAD #ops \(id)")
    let before = chat.send(bob, "CONVERSATIONS")
    chat.send(alice, "REACT #ops \(id) 👀")
    #expect(chat.output.take(bob) == ["REACT #ops \(id) alice 👀"])
    #expect(chat.send(bob, "CONVERSATIONS") == before)
    chat.send(alice, "REDACT #ops \(id)")
    _ = chat.output.take(bob)
    #expect(
      chat.send(bob, "HISTORY #ops 1").first == "HIST #ops \(id) \(Self.time) alice REDACTED :")
    #expect(
      chat.send(bob, "REACT #ops \(id) 👍")
        == ["ERR REACT NOSUCHMSG :no message \(id) in the history of #ops"])
    var records: [String] = []
    chat.engine.snapshot().forEachRecord {
      records.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(!records.contains { $0.contains("👀") })
  }

  @Test("the compacted journal has a react record per reaction after its message, none taken off")
  func compacted() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :ship it"))
    chat.send(bob, "REACT #ops \(id) 🎉")
    chat.send(bob, "REACT #ops \(id) regret")
    chat.send(bob, "UNREACT #ops \(id) regret")
    var records: [String] = []
    chat.engine.snapshot().forEachRecord {
      records.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(!records.contains { $0.contains("regret") })
    let message = try #require(records.firstIndex { $0.contains("ship it") })
    let expected = ##"{"type":"react","id":"\##(id)","to":"#ops","user":"bob","reaction":"🎉"}"##
    #expect(records[message + 1] == expected + "\n")
    let replayed = EngineHarness()
    chat.engine.snapshot().forEachRecord { replayed.engine.replay($0) }
    replayed.engine.finishReplay()
    #expect(
      replayed.send(replayed.connect("carol"), "HISTORY #ops 1").first
        == "HIST #ops \(id) \(Self.time) alice REACTIONS 🎉=bob :ship it")
  }

  @Test("a message in a room you may not read is the same NOSUCHMSG as none; bad words and limits")
  func refused() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #plan invite")
    let id = okID(chat.send(alice, "SAY #plan :the walnut"))
    let written = chat.journal.records.count
    #expect(
      chat.send(bob, "REACT #plan \(id) 👍")
        == ["ERR REACT NOSUCHMSG :no message \(id) in the history of #plan"])
    #expect(
      chat.send(bob, "REACT #nosuch \(id) 👍")
        == ["ERR REACT NOSUCHMSG :no message \(id) in the history of #nosuch"])
    #expect(chat.send(alice, "REACT #plan \(id) a,b").first?.hasPrefix("ERR REACT BADNAME") == true)
    #expect(chat.send(alice, "REACT #plan \(id)").first?.hasPrefix("ERR REACT SYNTAX") == true)
    #expect(chat.journal.records.count == written)
    for number in 0..<Reaction.maximumPerMessage {
      #expect(
        chat.send(alice, "REACT #plan \(id) r\(number)") == ["OK REACT #plan \(id) r\(number)"])
    }
    #expect(
      chat.send(alice, "REACT #plan \(id) one-more").first?.hasPrefix("ERR REACT LIMIT") == true)
    #expect(chat.send(alice, "REACT #plan \(id) r0") == ["OK REACT #plan \(id) r0"])
  }

  @Test("a failed sync takes the reaction back, and its REACT line is held until the sync")
  func rolledBack() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let id = okID(chat.send(alice, "SAY #ops :before"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    _ = chat.output.take(alice)
    chat.send(bob, "REACT #ops \(id) 👍")
    #expect(chat.output.kinds["REACT #ops \(id) bob 👍"] == .revealing)
    #expect(chat.output.kinds["OK REACT #ops \(id) 👍"] == .outcome(.react))
    _ = chat.output.take(alice)  // held, and dropped by the shell when rolled back
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(
      chat.send(alice, "HISTORY #ops 1").first == "HIST #ops \(id) \(Self.time) alice :before")
  }
}

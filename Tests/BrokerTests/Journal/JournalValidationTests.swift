import Foundation
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// Replay holds every journal field to the rules a request is held to
/// (chatbroker(8), "JOURNAL FORMAT"): a record that breaks one is damage,
/// never a trap and never text a client's terminal would obey.
@Suite("Journal records are validated on replay")
struct JournalValidationTests {
  private static let at = "\"at\":\"2026-11-30T17:55:01.204Z\""

  private func message(
    id: String = "1", to: String = "#ops", from: String = "alice", at: String = at,
    text: String = "\"hello\""
  ) -> String {
    "{\"type\":\"message\",\"id\":\"\(id)\",\"to\":\"\(to)\",\"from\":\"\(from)\",\(at),"
      + "\"text\":\(text)}"
  }

  private func read(_ line: String) -> Result<JournalRecord, JournalFormatError> {
    Array(line.utf8).withUnsafeBufferPointer { buffer in
      Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
    }
  }

  private func damage(_ line: String) -> String? {
    guard case .failure(let error) = read(line) else { return nil }
    return error.reason
  }

  @Test(
    "a text that a request could not have carried is damage",
    arguments: [
      "\"x\\r\\nMSG #ops 2 2026-11-30T17:55:01.204Z root :forged\"", "\"\\u001b[2J\"",
      // A block's lines keep the rule (chatbroker(7), BLOCK).
      "\"x\\n\\u001b[2J\"", "\"\\n\\n \\n\"",
      "\"" + String(repeating: "x\\n", count: MessageBlock.maximumLines) + "x\"",
      "\"\\r\"", "\"bell\\u0007\"", "\"del\\u007f\"", "\"c1 \\u009b31m\"", "\"\\u0085\"",
      "\"\"", "\"   \"", "\"\\t \\t\"",
      "\"" + String(repeating: "x", count: Limits.maximumLineBytes + 1) + "\"",
    ])
  func badText(text: String) {
    #expect(damage(message(text: text))?.contains("\"text\"") == true)
  }

  @Test("a text of several lines is a block (chatbroker(7), BLOCK), kept with its line feeds")
  func blockText() throws {
    let text = "\"x\\nMSG #ops 2 2026-11-30T17:55:01.204Z root :forged\""
    guard case .success(.message(let stored, _)) = read(message(text: text)) else {
      Issue.record("\(text) was refused")
      return
    }
    #expect(stored.text == "x\nMSG #ops 2 2026-11-30T17:55:01.204Z root :forged")
  }

  @Test("a text with a TAB, a colon or any printable character is kept")
  func goodText() throws {
    for text in ["\"a\\tb\"", "\":colon\"", "\"ünïcødé 🎉 \\u2028\"", "\"/\\\\ \\\"\""] {
      guard case .success(.message(let stored, _)) = read(message(text: text)) else {
        Issue.record("\(text) was refused")
        continue
      }
      #expect(!containsControlCharacter(stored.text.replacingOccurrences(of: "\t", with: " ")))
    }
    let longest = String(repeating: "x", count: Limits.maximumLineBytes)
    #expect(damage(message(text: "\"\(longest)\"")) == nil)
  }

  @Test(
    "an author, target or room that is not a name is damage",
    arguments: [
      ("from", "-bob"), ("from", "bob smith"), ("from", ""),
      ("from", String(repeating: "a", count: 33)),
      ("from", "r\\u001boot"), ("to", "#"), ("to", "ops"), ("to", "@"), ("to", "#a b"),
      ("to", "#\\u001b"),
    ])
  func badNames(field: String, value: String) {
    let line =
      field == "from" ? message(from: value) : message(to: value)
    #expect(damage(line) == "field \"\(field)\" is missing or invalid")
  }

  @Test(
    "an id out of range is damage; ids run from 1 to zzzzzzzzzzzz",
    arguments: ["0", "1000000000000", "3w5e11264sgse", "3w5e11264sgsf", "ABC", "007"])
  func badIDs(id: String) {
    #expect(damage(message(id: id)) == "field \"id\" is missing or invalid")
    #expect(damage("{\"type\":\"cancel\",\"id\":\"\(id)\",\(Self.at)}") != nil)
  }

  @Test("next_id may be one past the largest id, and no further")
  func nextIDBound() throws {
    func header(_ next: String) -> Result<JournalRecord, JournalFormatError> {
      read("{\"type\":\"journal\",\"version\":1,\"next_id\":\"\(next)\"}")
    }
    #expect(
      try header("zzzzzzzzzzzz").get() == .header(nextID: MessageID(value: MessageID.maximumValue)))
    let exhausted = JournalRecord.header(nextID: MessageID(value: MessageID.maximumValue + 1))
    #expect(try header("1000000000000").get() == exhausted)
    #expect(
      try exhausted.jsonLine.dropLast().withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
        == exhausted)
    for bad in ["1000000000001", "3w5e11264sgse", "0", ""] {
      #expect(throws: JournalFormatError.self, "\(bad)") { try header(bad).get() }
    }
  }

  @Test(
    "a time outside years 1 to 9999 or not in the journal's form is damage",
    arguments: [
      "0000-11-30T17:55:01.204Z", "0000-01-01T00:00:00.000Z", "2026-11-30T17:55:01Z",
      "2026-02-29T00:00:00.000Z", "+10000-01-01T00:00:00.000Z", "-0001-01-01T00:00:00.000Z",
    ])
  func badTimes(time: String) {
    #expect(damage(message(at: "\"at\":\"\(time)\"")) == "field \"at\" is missing or invalid")
  }

  @Test("blank lines are skipped, and still counted in line numbers")
  func blankLines() {
    let good = message()
    let contents = Array(
      ("\n" + good + "\n   \n\t\r\n" + message(id: "2", text: "\"\\u001b\"") + "\n\n").utf8)
    var seen: [(Int, Bool)] = []
    JournalParser.forEachLine(in: contents) { number, _, parsed in
      if case .success = parsed {
        seen.append((number, true))
      } else {
        seen.append((number, false))
      }
      return true
    }
    #expect(seen.map(\.0) == [2, 5])
    #expect(seen.map(\.1) == [true, false])
  }

  // Private rooms (chatbroker(8), "access", "invite").
  @Test(
    "an access record holds public, invite or group=<group>; an invite names a user and a room",
    arguments: [
      ##"{"type":"access","room":"#ops","access":"group=","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"private","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"group=a b","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"ops","access":"invite","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"invite","user":"a\u001b","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"invite","room":"#ops","user":"-x","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"invite","room":"#ops","user":"carol"}"##,
    ])
  func badAccess(line: String) {
    #expect(damage(line) != nil)
  }

  @Test("an access or invite record for a room the journal has not created changes nothing")
  func accessBeforeRoom() {
    let chat = EngineHarness()
    let time = chat.clock.now
    chat.engine.replay(.access(RoomName("#ops")!, .invited, user: "alice", at: time))
    chat.engine.replay(.invite(RoomName("#ops")!, user: "carol", at: time))
    chat.engine.finishReplay()
    let carol = chat.connect("carol")
    #expect(chat.send(carol, "JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(chat.send(carol, "ACCESS #ops") == ["OK ACCESS #ops public"])
  }

}

/// Compaction reads the journal as start-up does.
@Suite("Compaction and blank lines")
struct CompactionBlankLineTests {
  @Test("compacting a journal with blank lines keeps every record and drops the blanks")
  func compactsAroundBlankLines() throws {
    let directory = try makeShortTemporaryDirectory("cbc")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let message =
      "{\"type\":\"message\",\"id\":\"1\",\"to\":\"#ops\",\"from\":\"alice\","
      + "\"at\":\"2026-11-30T17:55:01.204Z\",\"text\":\"hello\"}"
    let journal =
      "\n{\"type\":\"journal\",\"version\":1,\"next_id\":\"1\"}\n \n" + message + "\n\t\n"
    let path = directory + "/journal.jsonl"
    try journal.write(toFile: path, atomically: false, encoding: .utf8)
    try Compactor.writeCompacted(
      journal: path, length: Int64(journal.utf8.count), limits: Limits(), to: path + ".compacting")
    let compacted = try String(contentsOfFile: path + ".compacting", encoding: .utf8)
    #expect(
      compacted.split(separator: "\n", omittingEmptySubsequences: false) == [
        "{\"type\":\"journal\",\"version\":1,\"next_id\":\"2\"}",
        "{\"type\":\"room\",\"room\":\"#ops\",\"at\":\"2026-11-30T17:55:01.204Z\"}",
        Substring(message), "",
      ])
  }
}

/// Message ids are bounded: replay refuses ids out of range (above), and a
/// broker that has handed out the last id answers LIMIT, never traps.
@Suite("Message ids run out cleanly")
struct IDExhaustionTests {
  @Test("after the last id, SAY and SAYAT answer LIMIT, nothing is written, and a restart works")
  func lastID() {
    let engine = EngineHarness()
    // Ids from z00000000001 on are the stream's (chatbroker(8), "FEDERATION").
    engine.engine.replay(.header(nextID: MessageID(value: FederatedID.base - 1)))
    let alice = engine.connect("alice")
    let first = engine.send(alice, "SAY #a the last one")
    #expect(okID(first) == "yzzzzzzzzzzz", "\(first)")
    let written = engine.journal.records.count
    for request in ["SAY #a one more", "SAYAT #a +1h one more", "SAY @bob one more"] {
      let refused = engine.send(alice, request)
      #expect(refused.count == 1 && refused[0].contains(" LIMIT :every message id"), "\(refused)")
    }
    #expect(engine.journal.records.count == written)
    #expect(engine.send(alice, "PING") == ["OK PING"])

    let restarted = engine.restarted()
    let bob = restarted.connect("bob")
    #expect(restarted.send(bob, "HISTORY #a").first?.contains(":the last one") == true)
    #expect(restarted.send(bob, "SAY #a again").first?.contains(" LIMIT :") == true)
    // A snapshot of the exhausted counter reads back too.
    var header: JournalRecord?
    restarted.engine.snapshot().forEachRecord { if header == nil { header = $0 } }
    #expect(header == .header(nextID: MessageID(value: FederatedID.base)))
  }
}

/// Who exists for `@user` (chatbroker(7) NOSUCHUSER).
@Suite("Recipients")
struct RecipientTests {
  @Test("a uid name with no passwd entry can be written to only while it is connected")
  func connectedUID() {
    let engine = EngineHarness()
    let alice = engine.connect("alice")
    #expect(engine.send(alice, "SAY @uid99999 hi").first?.hasPrefix("ERR SAY NOSUCHUSER :") == true)
    #expect(
      engine.send(alice, "SAYAT @uid99999 +1h hi").first?.hasPrefix("ERR SAYAT NOSUCHUSER :")
        == true)
    let stranger = engine.connect("uid99999")
    #expect(engine.send(alice, "SAY @uid99999 hi").first?.hasPrefix("OK SAY ") == true)
    engine.engine.disconnect(stranger)
    #expect(engine.send(alice, "SAY @uid99999 hi").first?.hasPrefix("ERR SAY NOSUCHUSER :") == true)
    #expect(engine.journal.records.count == 1)
  }

  @Test("the system directory does not invent users from uid names")
  func systemUsers() {
    let users = SystemUsers()
    #expect(users.userExists("root"))
    #expect(!users.userExists("uid99999"))
    #expect(!users.userExists("uid0"), "uid 0 is called root")
    #expect(users.name(of: 99999) == "uid99999")
    #expect(!users.userExists("uid99999"), "not even after being named")
  }

  @Test("HISTORY before an impossible id names the id as it was sent")
  func historyAnchorText() {
    let engine = EngineHarness()
    let alice = engine.connect("alice")
    #expect(engine.send(alice, "SAY #r hi").first?.hasPrefix("OK SAY ") == true)
    #expect(
      engine.send(alice, "HISTORY #r 10 BEFORE ABC") == [
        "ERR HISTORY NOSUCHMSG :no message ABC in the history of #r"
      ])
    #expect(
      engine.send(alice, "HISTORY #r 10 BEFORE zz") == [
        "ERR HISTORY NOSUCHMSG :no message zz in the history of #r"
      ])
  }
}

@Suite("Journal: a message's kind")
struct JournalMessageKindTests {
  private func read(_ line: String) -> Result<JournalRecord, JournalFormatError> {
    Array(line.utf8).withUnsafeBufferPointer { buffer in
      Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
    }
  }

  @Test("kind is absent for text, action for ACTION, and anything else is refused")
  func kinds() {
    let base =
      ##"{"type":"message","id":"k1","to":"#a","from":"alice","at":"2026-11-30T17:00:00.000Z","##
    guard case .success(.message(let text, _)) = read(base + ##""text":"hi"}"##),
      case .success(.message(let acted, _)) = read(base + ##""kind":"action","text":"waves"}"##)
    else {
      Issue.record("not read as messages")
      return
    }
    #expect(!text.isAction && acted.isAction)
    guard case .failure(let error) = read(base + ##""kind":"shout","text":"x"}"##) else {
      Issue.record("an unknown kind was read")
      return
    }
    #expect(error.reason.contains("kind"))
  }
}

import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// The `member`, `leave` and `read` records of chatbroker(8), "JOURNAL
/// FORMAT" (since 1.2): written as documented, read back, and held to the
/// rules of the requests that write them.
@Suite("Journal: member, leave and read records")
struct ConversationJournalTests {
  private static let time = Timestamp(rfc3339: "2026-11-30T17:55:01.204Z")!

  private func read(_ line: String) -> Result<JournalRecord, JournalFormatError> {
    Array(line.utf8).withUnsafeBufferPointer { buffer in
      Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
    }
  }

  @Test("the records are written as chatbroker(8) shows them and read back as themselves")
  func written() throws {
    let records: [(JournalRecord, String)] = [
      (
        .member(user: "alice", room: RoomName("#ops")!, at: Self.time),
        ##"{"type":"member","user":"alice","room":"#ops","time":"2026-11-30T17:55:01.204Z"}"##
      ),
      (
        .leave(user: "alice", room: RoomName("#ops")!, at: Self.time),
        ##"{"type":"leave","user":"alice","room":"#ops","time":"2026-11-30T17:55:01.204Z"}"##
      ),
      (
        .read(user: "alice", target: .user("bob"), id: MessageID("k3")!, at: Self.time),
        ##"{"type":"read","user":"alice","target":"@bob","id":"k3","time":"2026-11-30T17:55:01.204Z"}"##
      ),
    ]
    for (record, line) in records {
      #expect(String(decoding: record.jsonLine, as: UTF8.self) == line + "\n")
      #expect(try read(line).get() == record)
    }
  }

  @Test(
    "a field a request could not have carried is damage",
    arguments: [
      (##"{"type":"member","room":"#ops","time":"2026-11-30T17:55:01.204Z"}"##, "user"),
      (
        ##"{"type":"member","user":"al ice","room":"#ops","time":"2026-11-30T17:55:01.204Z"}"##,
        "user"
      ),
      (
        ##"{"type":"member","user":"alice","room":"ops","time":"2026-11-30T17:55:01.204Z"}"##,
        "room"
      ),
      (
        ##"{"type":"leave","user":"alice","room":"#OPS!","time":"2026-11-30T17:55:01.204Z"}"##,
        "room"
      ),
      (##"{"type":"leave","user":"alice","room":"#ops"}"##, "time"),
      (##"{"type":"leave","user":"alice","room":"#ops","at":"2026-11-30T17:55:01.204Z"}"##, "time"),
      (
        ##"{"type":"read","user":"alice","target":"bob","id":"k3","time":"2026-11-30T17:55:01.204Z"}"##,
        "target"
      ),
      (##"{"type":"read","user":"alice","id":"k3","time":"2026-11-30T17:55:01.204Z"}"##, "target"),
      (
        ##"{"type":"read","user":"alice","target":"#ops","id":"0","time":"2026-11-30T17:55:01.204Z"}"##,
        "id"
      ),
      (
        ##"{"type":"read","user":"alice","target":"#ops","id":"K3","time":"2026-11-30T17:55:01.204Z"}"##,
        "id"
      ),
      (##"{"type":"read","user":"alice","target":"#ops","id":"k3","time":"yesterday"}"##, "time"),
      (
        ##"{"type":"read","user":"-x","target":"#ops","id":"k3","time":"2026-11-30T17:55:01.204Z"}"##,
        "user"
      ),
    ])
  func damaged(line: String, field: String) {
    guard case .failure(let error) = read(line) else {
      Issue.record("\(line) was read")
      return
    }
    #expect(error.reason == "field \"\(field)\" is missing or invalid")
  }

  @Test("a read record for a message no longer kept replays as a marker before every kept one")
  func markerBeforeKeptMessages() {
    let chat = EngineHarness()
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(bob, "JOIN #a")
    let kept = okID(chat.send(carol, "SAY #a kept"))
    let journal = MemoryJournal()
    journal.records =
      chat.journal.records.filter {
        if case .message(let message, _) = $0 { message.id.description == kept } else { true }
      } + [.read(user: "bob", target: .room(RoomName("#a")!), id: MessageID("zz")!, at: Self.time)]
    let restarted = EngineHarness(clock: chat.clock, journal: journal).restarted()
    #expect(
      conversations(restarted, restarted.connect("bob")) == [
        "CONV #a \(kept) 2026-11-30T17:00:00.000Z zz 1 0", "OK CONVERSATIONS 1",
      ])
  }
}

import Broker
import LineProtocol
import TestSupport
import Testing

/// Messages of several lines (chatbroker(7), `BLOCK`): one message, kept
/// with its line feeds, written with `\n` on the line protocol.
@Suite("Engine: blocks of several lines")
struct EngineBlockTests {
  static let time = "2026-11-30T17:00:00.000Z"

  @Test("BLOCK is one message: one MSG, one HIST, found by any line's words, across a restart")
  func blockInRoom() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #builds")
    chat.send(bob, "JOIN #builds")
    _ = chat.output.take(alice)
    let reply = chat.send(bob, #"BLOCK #builds :make: ok\n\n  all 42 tests passed in C:\\ci"#)
    #expect(reply == ["OK BLOCK 1 \(Self.time)"])
    let written = #"BLOCK :make: ok\n\n  all 42 tests passed in C:\\ci"#
    #expect(chat.output.take(alice) == ["MSG #builds 1 \(Self.time) bob \(written)"])
    let shown = "HIST #builds 1 \(Self.time) bob \(written)"
    #expect(chat.send(alice, "HISTORY #builds 1").first == shown)
    #expect(chat.send(alice, "SEARCH #builds passed").first == shown)
    let line = String(decoding: try #require(chat.journal.records.last).jsonLine, as: UTF8.self)
    #expect(line.contains(#""text":"make: ok\n\n  all 42 tests passed in C:\\ci""#), "\(line)")
    let restarted = chat.restarted()
    #expect(restarted.send(restarted.connect("carol"), "HISTORY #builds 1").first == shown)
  }

  @Test("a block is no reply, topic or scheduled text; AMEND may make it one line")
  func onlyMessages() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #builds")
    #expect(
      chat.send(alice, #"REPLY #builds 1 :a\nb"#)
        == ["ERR REPLY NOSUCHMSG :no message 1 in the history of #builds"])
    let id = okID(chat.send(alice, #"BLOCK #builds :a\nb"#))
    #expect(
      chat.send(alice, "AMEND #builds \(id) :a and b") == ["OK AMEND #builds \(id)"])
    #expect(
      chat.send(alice, "HISTORY #builds 1").first
        == "HIST #builds \(id) \(Self.time) alice EDITED :a and b")
    // A block of one line is answered as a BLOCK, and shown as any line.
    let one = chat.send(alice, #"BLOCK #builds :C:\\new"#)
    #expect(one.first?.hasPrefix("OK BLOCK ") == true, "\(one)")
    #expect(chat.send(alice, "HISTORY #builds 1").first?.hasSuffix(#" alice :C:\new"#) == true)
    // Only BLOCK reads \n: elsewhere it is two characters of the text.
    let said = okID(chat.send(alice, #"SAY #builds :C:\new"#))
    #expect(
      chat.send(alice, "HISTORY #builds 1").first
        == #"HIST #builds \#(said) \#(Self.time) alice :C:\new"#)
  }

  @Test("a text of several lines from another door keeps the rules of BLOCK")
  func fromAnotherDoor() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #builds")
    let tooMany = String(repeating: "x\n", count: MessageBlock.maximumLines) + "x"
    chat.engine.receive(.say(.room(RoomName("#builds")!), text: tooMany), from: alice)
    #expect(chat.output.take(alice).first?.hasPrefix("ERR BLOCK TOOLONG") == true)
    chat.engine.receive(.say(.room(RoomName("#builds")!), text: "a\n\u{7}b"), from: alice)
    #expect(chat.output.take(alice).first?.hasPrefix("ERR BLOCK BADCHAR") == true)
    chat.engine.receive(.action(.room(RoomName("#builds")!), text: "a\nb"), from: alice)
    #expect(chat.output.take(alice).first?.hasPrefix("ERR ACTION BADCHAR") == true)
    #expect(chat.journal.records.count == 3, "the room, alice in it, and her seen marker only")
  }
}

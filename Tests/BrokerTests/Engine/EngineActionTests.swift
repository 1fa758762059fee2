import Broker
import LineProtocol
import TestSupport
import Testing

/// Actions (chatbroker(7), `ACTION`): a message of its own kind, marked on
/// its `MSG` and `HIST` lines and in the journal, never text that starts
/// with `/me`.
@Suite("Engine: actions")
struct EngineActionTests {
  @Test("ACTION is answered like SAY and reaches the room and the history marked ACTION")
  func actionInRoom() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    _ = chat.output.take(alice)
    let reply = chat.send(bob, "ACTION #ops waves")
    #expect(reply.count == 1 && reply[0].hasPrefix("OK ACTION "))
    let id = okID(reply)
    let time = "2026-11-30T17:00:00.000Z"
    #expect(chat.output.take(alice) == ["MSG #ops \(id) \(time) bob ACTION :waves"])
    chat.send(alice, "SAY #ops :hi")
    let history = chat.send(alice, "HISTORY #ops")
    #expect(history.first == "HIST #ops \(id) \(time) bob ACTION :waves")
    #expect(history.dropFirst().first?.contains(" alice :hi") == true, "a SAY is no action")
  }

  @Test("a direct action reaches both parties; it is journaled with kind action and replayed")
  func directAndReplayed() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let id = okID(chat.send(alice, "ACTION @bob :shrugs"))
    #expect(
      chat.output.take(bob) == ["MSG @alice \(id) 2026-11-30T17:00:00.000Z alice ACTION :shrugs"])
    let line = String(decoding: try #require(chat.journal.records.last).jsonLine, as: UTF8.self)
    #expect(line.contains(#""kind":"action","text":"shrugs""#))
    let restarted = chat.restarted()
    let carol = restarted.connect("bob")
    #expect(
      restarted.send(carol, "HISTORY @alice").first?.hasSuffix(" alice ACTION :shrugs") == true)
  }

  @Test("ACTION follows SAY's rules: no empty text, no control characters, no unknown user")
  func refused() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    #expect(chat.send(alice, "ACTION #ops").first?.hasPrefix("ERR ACTION SYNTAX") == true)
    #expect(chat.send(alice, "ACTION #ops \u{1}x").first?.hasPrefix("ERR ACTION BADCHAR") == true)
    #expect(chat.send(alice, "ACTION @nobody hi").first?.hasPrefix("ERR ACTION NOSUCHUSER") == true)
    #expect(chat.journal.records.isEmpty)
  }
}

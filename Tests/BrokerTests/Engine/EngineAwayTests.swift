import Broker
import LineProtocol
import TestSupport
import Testing

/// Away (chatbroker(7), `AWAY`): one text per user, shown in `WHO` and to
/// whoever writes to them directly, once an hour per conversation.
@Suite("Engine: away")
struct EngineAwayTests {
  @Test("AWAY text marks the user away in WHO; AWAY alone says they are back")
  func awayInWho() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    _ = chat.output.take(alice)
    #expect(chat.send(alice, "AWAY :at lunch until 14:00") == ["OK AWAY"])
    #expect(
      chat.send(bob, "WHO #ops") == [
        "MEMBER #ops alice :at lunch until 14:00", "MEMBER #ops bob", "OK WHO #ops 2",
      ])
    #expect(chat.send(alice, "AWAY") == ["OK AWAY BACK"])
    #expect(chat.send(bob, "WHO #ops").first == "MEMBER #ops alice")
  }

  @Test("a direct message to someone away tells the writer once an hour, not per line")
  func toldOncePerHour() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(bob, "AWAY :on holiday")
    let first = chat.send(alice, "SAY @bob :are you there?")
    #expect(first.count == 2 && first[0] == "AWAY bob :on holiday")
    #expect(chat.send(alice, "SAY @bob :hello?").count == 1, "not again for the next line")
    chat.send(alice, "JOIN #ops")
    #expect(chat.send(alice, "SAY #ops :in a room nobody is told").count == 1)
    chat.clock.set("2026-11-30T18:00:01.000Z")
    #expect(chat.send(alice, "SAY @bob :still?").first == "AWAY bob :on holiday")
    chat.send(bob, "AWAY")
    #expect(chat.send(alice, "SAY @bob :back?").count == 1, "back: nobody is told")
  }

  @Test("the away text follows SAY's text rules and goes with the user's last session")
  func rulesAndSessions() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    #expect(chat.send(alice, "AWAY \u{7}x").first?.hasPrefix("ERR AWAY BADCHAR") == true)
    let bob = chat.connect("bob")
    chat.send(bob, "AWAY :gone")
    chat.engine.disconnect(bob)
    let again = chat.connect("bob")
    chat.send(again, "JOIN #ops")
    chat.send(alice, "JOIN #ops")
    #expect(chat.send(alice, "WHO #ops").contains("MEMBER #ops bob"))
  }
}

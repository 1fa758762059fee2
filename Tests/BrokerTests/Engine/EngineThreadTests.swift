import Broker
import LineProtocol
import TestSupport
import Testing

/// Threads (chatbroker(7), `THREAD`): a message and the replies to it,
/// oldest first, as `HIST` lines.
@Suite("Engine: threads")
struct EngineThreadTests {
  static let time = "2026-11-30T17:00:00.000Z"

  @Test("THREAD shows the message and its replies in order, not other lines, with MORE past <n>")
  func thread() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let asked = okID(chat.send(alice, "SAY #ops :who deploys?"))
    let other = okID(chat.send(alice, "SAY #ops :lunch?"))
    let first = okID(chat.send(bob, "REPLY #ops \(asked) :me"))
    chat.send(bob, "REPLY #ops \(other) :yes")
    let second = okID(chat.send(alice, "REPLY #ops \(asked) :thanks"))
    chat.send(bob, "REPLY #ops \(first) :(a reply to the reply)")
    #expect(
      chat.send(bob, "THREAD #ops \(asked)") == [
        "HIST #ops \(asked) \(Self.time) alice :who deploys?",
        "HIST #ops \(first) \(Self.time) bob REPLY \(asked) :me",
        "HIST #ops \(second) \(Self.time) alice REPLY \(asked) :thanks",
        "OK THREAD #ops \(asked) 2",
      ])
    #expect(
      chat.send(bob, "THREAD #ops \(asked) 1") == [
        "HIST #ops \(asked) \(Self.time) alice :who deploys?",
        "HIST #ops \(first) \(Self.time) bob REPLY \(asked) :me",
        "OK THREAD #ops \(asked) 1 MORE",
      ])
    #expect(chat.send(bob, "THREAD #ops \(second)").last == "OK THREAD #ops \(second) 0")
  }

  @Test("a message of a room you may not read is the same NOSUCHMSG as none")
  func refused() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #plan invite")
    let id = okID(chat.send(alice, "SAY #plan :the walnut"))
    #expect(
      chat.send(bob, "THREAD #plan \(id)")
        == ["ERR THREAD NOSUCHMSG :no message \(id) in the history of #plan"])
    #expect(
      chat.send(bob, "THREAD #nosuch \(id)")
        == ["ERR THREAD NOSUCHMSG :no message \(id) in the history of #nosuch"])
    #expect(chat.send(bob, "THREAD #plan").first?.hasPrefix("ERR THREAD SYNTAX") == true)
    #expect(chat.send(bob, "THREAD #plan \(id) 0").first?.hasPrefix("ERR THREAD SYNTAX") == true)
  }
}

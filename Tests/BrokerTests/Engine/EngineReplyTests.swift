import Broker
import LineProtocol
import TestSupport
import Testing

/// Replies (chatbroker(7), `REPLY`): a message that names the message of
/// the same conversation it answers, kept by id only, refused alike for a
/// message that never was, was taken back, or may not be read.
@Suite("Engine: replies")
struct EngineReplyTests {
  static let time = "2026-11-30T17:00:00.000Z"

  @Test("REPLY is answered like SAY; MSG and HIST carry REPLY <id>, also after a restart")
  func replyInRoom() throws {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let asked = okID(chat.send(alice, "SAY #ops :who deploys?"))
    _ = chat.output.take(bob)
    let reply = chat.send(bob, "REPLY #ops \(asked) :me, at six")
    #expect(reply.count == 1 && reply[0].hasPrefix("OK REPLY "), "\(reply)")
    let id = okID(reply)
    let delivered = "MSG #ops \(id) \(Self.time) bob REPLY \(asked) :me, at six"
    #expect(chat.output.take(alice) == [delivered])
    #expect(chat.send(alice, "HISTORY #ops 1").first == "HIST" + delivered.dropFirst(3))
    let line = String(decoding: try #require(chat.journal.records.last).jsonLine, as: UTF8.self)
    #expect(line.contains(#""reply_to":"\#(asked)""#))
    let restarted = chat.restarted()
    let carol = restarted.connect("carol")
    #expect(restarted.send(carol, "HISTORY #ops 1").first == "HIST" + delivered.dropFirst(3))
    #expect(restarted.send(carol, "SEARCH #ops six").first == "HIST" + delivered.dropFirst(3))
    var compacted: [String] = []
    restarted.engine.snapshot().forEachRecord {
      compacted.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(compacted.contains { $0.contains(#""reply_to":"\#(asked)""#) })
  }

  @Test("a direct reply reaches both parties, each seeing the other as the target")
  func directReply() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let asked = okID(chat.send(alice, "SAY @bob :lunch?"))
    _ = chat.output.take(bob)
    let id = okID(chat.send(bob, "REPLY @alice \(asked) :yes"))
    #expect(chat.output.take(alice) == ["MSG @bob \(id) \(Self.time) bob REPLY \(asked) :yes"])
  }

  @Test(
    "a message not in the conversation, taken back, or unreadable is the same NOSUCHMSG; nothing is written"
  )
  func refusedAlike() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    chat.send(alice, "JOIN #plan invite")
    let inPlan = okID(chat.send(alice, "SAY #plan :the secret plan"))
    let other = okID(chat.send(alice, "SAY @bob :elsewhere"))
    let takenBack = okID(chat.send(alice, "SAY #ops :oops"))
    chat.send(alice, "REDACT #ops \(takenBack)")
    let written = chat.journal.records.count
    _ = chat.output.take(bob)
    for (id, why) in [
      (inPlan, "a room bob may not read"), (other, "another conversation"),
      (takenBack, "a message taken back"), ("zz9", "no message"),
    ] {
      #expect(
        chat.send(bob, "REPLY #ops \(id) :x") == [
          "ERR REPLY NOSUCHMSG :no message \(id) in the history of #ops"
        ], "\(why)")
    }
    #expect(
      chat.send(bob, "REPLY #plan \(inPlan) :x").first?.hasPrefix("ERR REPLY NOACCESS") == true,
      "the private room's own answer, as for SAY")
    #expect(chat.journal.records.count == written)
    #expect(chat.send(bob, "REPLY #ops").first?.hasPrefix("ERR REPLY SYNTAX") == true)
    #expect(chat.send(bob, "REPLY #ops \(other)").first?.hasPrefix("ERR REPLY SYNTAX") == true)
    #expect(chat.send(bob, "REPLY #ops x-y :a").first?.hasPrefix("ERR REPLY BADNAME") == true)
  }

  @Test("a reply keeps no text of what it answers: once that is taken back, nothing of it shows")
  func takenBackOriginal() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    let secret = okID(chat.send(alice, "SAY #ops :the password is hunter2"))
    let id = okID(chat.send(bob, "REPLY #ops \(secret) :you pasted a password"))
    chat.send(alice, "REDACT #ops \(secret)")
    let history = chat.send(bob, "HISTORY #ops").joined(separator: "\n")
    #expect(!history.contains("hunter2"))
    #expect(history.contains("HIST #ops \(id) \(Self.time) bob REPLY \(secret) :you pasted"))
    var records: [String] = []
    chat.engine.snapshot().forEachRecord {
      records.append(String(decoding: $0.jsonLine, as: UTF8.self))
    }
    #expect(!records.contains { $0.contains("hunter2") })
  }
}

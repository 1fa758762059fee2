import Broker
import LineProtocol
import TestSupport
import Testing

@Suite("Encode once: one event object per fan-out, encoded once per wire format")
struct EncodeOnceTests {
  @Test("a MSG to a room goes to every member as the same object, encoded once per format")
  func roomFanOutSharesOneObject() {
    let harness = EngineHarness()
    let members = ["alice", "bob", "carol", "bob", "carol"].map { harness.connect($0) }
    for member in members { harness.send(member, "JOIN #ops") }
    harness.send(members[0], "SAY #ops hello")
    let shared = members.dropFirst().compactMap { harness.output.lastOutgoing[$0] }
    #expect(shared.count == members.count - 1)
    #expect(shared.allSatisfy { $0 === shared[0] })
    guard case .message(let target, _, _, let user, let text, _, _, _, _, _)? = shared.first?.event
    else {
      Issue.record("the members did not get the message as an event")
      return
    }
    #expect(target == .room(RoomName("#ops")!) && user == "alice" && text == "hello")

    // Each connection's codec asks for its format; each format is encoded once.
    var encodings = 0
    for outgoing in shared {
      _ = outgoing.line
      _ = outgoing.encoded(variant: 7) { _ in
        encodings += 1
        return Array("PRIVMSG\r\n".utf8)
      }
    }
    #expect(encodings == 1)
    #expect(shared[0].line == shared[1].line)
  }
}

import LineProtocol
import Testing

/// `CONVERSATIONS`, `MARKREAD` and their lines (chatbroker(7), since 1.2),
/// as a client reads them.
@Suite("Line protocol: CONVERSATIONS and MARKREAD")
struct ConversationLineTests {
  @Test("MARKREAD and CONVERSATIONS parse in any letter case")
  func parses() throws {
    #expect(
      try RequestParser.parse("markread #ops k3").get()
        == .markRead(.room(RoomName("#ops")!), MessageID("k3")!))
    #expect(
      try RequestParser.parse("MARKREAD @bob 1").get() == .markRead(.user("bob"), MessageID("1")!))
    #expect(try RequestParser.parse("Conversations").get() == .conversations)
  }

  @Test(
    "a CONV or MARKREAD line that is not what the broker writes is not read",
    arguments: [
      "CONV #ops k9 2026-11-30T17:56:12.031Z k3 4", "CONV ops - - - 0 0",
      "CONV #ops k9 - - 0 0", "CONV #ops - - - -1 0", "CONV #ops - - - 1 2",
      "CONV #ops - - K3 0 0", "CONV #ops - - - 0 0 :text", "MARKREAD #ops", "MARKREAD #ops 0k",
      "MARKREAD bob k3",
    ])
  func refusesOtherLines(line: String) {
    #expect(LineCodec.decode(line) == nil)
  }

  @Test("the marker as the broker sends it reads as MARKREAD on the line protocol")
  func readMarkerLine() {
    let id = MessageID("k9")!
    let time = Timestamp(rfc3339: "2026-11-30T17:56:12.031Z")!
    let line = LineCodec.encode(.readMarker(target: .user("carol"), id: id, time: time))
    #expect(String(decoding: line, as: UTF8.self) == "MARKREAD @carol k9\n")
    #expect(
      LineCodec.decode(String(decoding: line, as: UTF8.self))
        == .markRead(target: .user("carol"), id: id))
  }

  @Test("a client reads the words after CONV into a summary")
  func readsWords() {
    let summary = BrokerLine.conversation(
      words: "@bob k9 2026-11-30T17:56:12.031Z - 3 3".split(separator: " "))
    #expect(summary?.target == .user("bob"))
    #expect(summary?.newest?.id == MessageID("k9"))
    #expect(summary?.read == nil)
    #expect(summary?.unread == 3 && summary?.mentions == 3)
    #expect(BrokerLine.markRead(words: ["#ops", "k3"])?.id == MessageID("k3"))
  }
}

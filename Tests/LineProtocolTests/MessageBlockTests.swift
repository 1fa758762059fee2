import Testing

@testable import LineProtocol

/// A block's text as the line protocol writes it (chatbroker(7), `BLOCK`):
/// `\n` a line feed, `\\` a backslash, everything else as it is.
@Suite struct MessageBlockTests {
  @Test(
    "escaping writes each line feed and backslash, wherever they stand, and reads back the same",
    arguments: [
      "a\nb", "\n", "\\", "\\\n", "\n\\", "a\\\\b\n\nc\\",
      "\n" + String(repeating: "\\", count: 4000),
      String(repeating: "\\\n", count: 1000), "café\n日本\\語", "no escapes at all",
    ])
  func roundTrip(text: String) {
    let written = MessageBlock.escaped(text)
    #expect(!written.contains("\n"))
    #expect(written.utf8.count == text.utf8.count + text.utf8.count { $0 == 0x0A || $0 == 0x5C })
    #expect(MessageBlock.unescaped(written) == text)
    var appended = Array("HIST ".utf8)
    MessageBlock.appendEscaped(text, to: &appended)
    #expect(appended == Array("HIST ".utf8) + Array(written.utf8), "appends after what is there")
  }

  @Test("the escapes of one text, in order")
  func escapes() {
    #expect(MessageBlock.escaped("a\\b\nc\n\\") == #"a\\b\nc\n\\"#)
  }
}

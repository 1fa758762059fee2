import Foundation
import TestSupport
import Testing

/// Taking a message back through the real broker (chatbroker(7), `REDACT`):
/// the other user's session is told, and the journal file itself no longer
/// holds the text once the compaction that the redaction starts is done
/// (chatbroker(8), `redact`).
@Suite("Taking a message back")
struct RedactionTests {
  @Test(
    "a redacted line leaves every history and the journal file, across a restart",
    UnixUsers.required)
  func redactedTextLeavesTheJournal() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start([])
    let alice = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")
    #expect(try bob.request("JOIN #ops").last == "OK JOIN #ops 1")
    let said = try #require(alice.request("SAY #ops :the password is hunter2").last)
    let id = said.words[2]
    _ = try alice.request("SAY #ops :and this stays")
    _ = try bob.expect("MSG #ops \(id) ")
    #expect(broker.journal.contains("hunter2"))
    #expect(try alice.request("REDACT #ops \(id)") == ["OK REDACT #ops \(id)"])
    #expect(try bob.expect("REDACT ") == "REDACT #ops \(id) root")
    try waitUntil(timeout: 10, "the journal file to lose the text") {
      !broker.journal.contains("hunter2")
    }
    #expect(broker.journal.contains("and this stays"))
    try broker.restart()
    let carol = try broker.connect(as: "cbtest1")
    let history = try carol.request("HISTORY #ops")
    #expect(history.first?.hasSuffix(" root REDACTED :") == true)
    #expect(!history.joined().contains("hunter2"))
    #expect(history.contains { $0.hasSuffix(":and this stays") })
  }
}

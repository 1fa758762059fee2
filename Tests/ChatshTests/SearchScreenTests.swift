import Foundation
import LineProtocol
import Testing

@testable import ChatClient

/// `/search` on the chat screen (chatsh(1)): `SEARCH *` with the words,
/// the matches listed newest first with where, when and who, and `/search`
/// alone going on from the broker's `MORE` id.
@Suite struct SearchScreenTests {
  @Test("/search lists what the broker found; /search alone asks for the older ones")
  func searchAndMore() {
    let harness = ChatSessionTests.Harness()
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    harness.session.submit("/search")
    #expect(harness.sent.isEmpty, "nothing to go on from yet")
    harness.session.submit("/search deploy failed")
    #expect(harness.sent == ["SEARCH * 20 :deploy failed"])
    harness.feed(
      "HIST #ops k9 2026-11-30T18:00:05.000Z bob :Deploy FAILED \u{1B}[31mred",
      "HIST @carol k2 2026-11-30T17:00:00.000Z carol ACTION :failed to deploy",
      "OK SEARCH * 2 MORE k2")
    guard case .notice(let found, _, _) = harness.session.model.home.entries.last else {
      Issue.record("no notice")
      return
    }
    let lines = found.split(separator: "\n").map(String.init)
    #expect(lines.first == "found for “deploy failed”, newest first:")
    #expect(lines[1].hasSuffix("#ops  bob: Deploy FAILED \u{1B}[31mred"))
    #expect(lines[2].hasSuffix("@carol  * carol failed to deploy"))
    #expect(lines.last == "(older matches may follow: /search alone shows them)")
    let renderer = TranscriptRenderer(
      me: "alice", width: 100, now: harness.now,
      clock: LocalClock(timeZone: TimeZone(identifier: "UTC")!))
    let drawn = renderer.render([harness.session.model.home.entries.last!]).map(\.text)
    #expect(drawn.contains { $0.contains("Deploy FAILED") })
    #expect(!drawn.joined().contains("\u{1B}"), "another user's text is sanitized when drawn")
    harness.sent = []
    harness.session.submit("/search")
    #expect(harness.sent == ["SEARCH * 20 BEFORE k2 :deploy failed"])
    harness.feed("OK SEARCH * 0")
    guard case .notice(let none, _, _) = harness.session.model.home.entries.last else {
      Issue.record("no notice")
      return
    }
    #expect(none == "nothing found for “deploy failed” here")
  }
}

import LineProtocol
import Testing

@testable import ChatClient

/// The invited user is told (chatbroker(7), the `INVITE` line): chatsh says
/// who invited them where, with the command that joins it.
@Suite struct InvitationNoticeTests {
  @Test("an INVITE line shows '<inviter> invited you to <room>: /join <room>' where you are")
  func inviteShown() {
    let harness = ChatSessionTests.Harness(me: "nc3")
    harness.session.start(targets: [])
    harness.feed("OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.feed("INVITE #r nc3 nc1")
    let notices = harness.session.model.current.entries.compactMap { entry -> String? in
      if case .notice(let text, _, _) = entry { return text }
      return nil
    }
    #expect(notices.contains("nc1 invited you to #r: /join #r"), "\(notices)")
  }
}

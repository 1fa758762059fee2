import ProtocolFuzz
import Testing

/// The privacy oracle's own rules, fed lines by hand: what it holds
/// against a user and what it lets pass, timing included (acknowledgements
/// and deliveries race: only what was surely decided after a way out is a
/// finding).
@Suite("Privacy oracle rules")
struct PrivacyOracleRuleTests {
  let names = PrivacyNames(run: "test")
  let room: String
  let token: String
  let oracle: PrivacyOracle
  let bob = PrivacySession(id: 1, user: "bob", wire: .line)

  init() {
    room = names.room(1)
    token = names.token(2)
    oracle = PrivacyOracle(names: names, origin: 0, rerun: "by hand")
    oracle.opened(bob, at: 0)
  }

  /// `bob` asks `request` at `time` and gets `line` right away.
  func ask(_ request: String, _ line: String, at time: Double, on session: PrivacySession? = nil) {
    let session = session ?? bob
    oracle.sent(request, on: session, at: time)
    oracle.received(Array(line.utf8), on: session, at: time + 0.01)
    oracle.answered(session)
  }

  var summaries: [String] { oracle.all.map(\.summary) }

  func hit(_ token: String) -> String {
    "HIST \(room) a1 2026-11-30T17:00:00.000Z alice :\(token) deploy at six"
  }

  @Test("a +s room's line found by who never joined it is a finding once +s was acknowledged")
  func secret() {
    oracle.model {
      $0.room(room, access: .everyone, creator: "alice", at: 1)
      $0.token(token, in: .room(room), by: "alice", request: "SAY", at: 2)
    }
    ask("SEARCH * \(token)", hit(token), at: 3)
    ask("WHO \(room)", "MEMBER \(room) alice", at: 3)
    #expect(summaries.isEmpty)
    oracle.model { $0.secret(room, at: 4) }
    ask("SEARCH * \(token)", hit(token), at: 5)
    ask("WHO \(room)", "MEMBER \(room) alice", at: 5)
    // As for a room that does not exist: no finding.
    ask("WHO \(room)", "OK WHO \(room) 0", at: 6)
    ask("TOPIC \(room)", "OK TOPIC \(room)", at: 6)
    #expect(
      summaries == [
        "a +s room is shown to a user who is not in it: SEARCH",
        "a +s room is shown to a user who is not in it: WHO",
      ])
  }

  @Test("+s keeps nobody out: a JOIN of a secret public room is let in, and its member reads it")
  func secretRoomJoined() {
    oracle.model {
      $0.room(room, access: .everyone, creator: "alice", at: 1)
      $0.secret(room, at: 2)
    }
    let grant = oracle.model { $0.grant(room, to: "bob", invite: false, at: 3) }
    ask("JOIN \(room)", "OK JOIN \(room) 2", at: 3)
    oracle.model { $0.settle(room, grant: grant, invite: false, refused: false, at: 3.01) }
    ask("WHO \(room)", "MEMBER \(room) alice", at: 4)
    #expect(summaries.isEmpty)
  }

  @Test(
    "lines decided before a KICK was acknowledged are not held against it; those asked after are")
  func kick() {
    oracle.model {
      $0.room(room, access: .invited, creator: "alice", at: 1)
      let invite = $0.grant(room, to: "bob", invite: true, at: 2)
      $0.settle(room, grant: invite, invite: true, refused: false, at: 2.5)
      $0.token(token, in: .room(room), by: "alice", request: "SAY", at: 3)
      $0.remove("bob", from: room, by: .kick, sentAt: 4, at: 5)
    }
    // A MSG posted before the kick, arriving after its OK: on its way.
    oracle.received(
      Array("MSG \(room) a1 2026-11-30T17:00:00.000Z alice :\(token) hi".utf8), on: bob, at: 6)
    #expect(summaries.isEmpty)
    ask("HISTORY \(room)", hit(token), at: 7)
    ask("JOIN \(room)", "OK JOIN \(room) 2", at: 8)
    #expect(
      summaries == [
        "a kicked invitee reads the room: HISTORY", "a kicked invitee reads the room: JOIN",
      ])
  }

  @Test(
    "a banned user reads nothing, even a line posted after the ban on a session still in the room")
  func ban() {
    oracle.model {
      $0.room(room, access: .everyone, creator: "alice", at: 1)
      $0.remove("bob", from: room, by: .ban, sentAt: 2, at: 3)
      $0.token(token, in: .room(room), by: "alice", request: "SAY", at: 4)
    }
    oracle.received(
      Array("MSG \(room) a1 2026-11-30T17:00:00.000Z alice :\(token) hi".utf8), on: bob, at: 5)
    #expect(summaries == ["a banned user reads the room: a MSG line"])
  }

  @Test(
    "a user taken out of a group: an older session reads for the staleness bound, a newer one not at all"
  )
  func groupStaleness() {
    oracle.model {
      $0.joinGroup("bob", "ops", at: 0)
      $0.room(room, access: .group("ops"), creator: "alice", at: 1)
      $0.token(token, in: .room(room), by: "alice", request: "SAY", at: 2)
      $0.leaveGroup("bob", "ops", at: 10)
    }
    let bound = oracle.model { $0.staleness }
    ask("HISTORY \(room)", hit(token), at: 10 + bound - 1)
    #expect(summaries.isEmpty)
    let newer = PrivacySession(id: 2, user: "bob", wire: .line)
    oracle.opened(newer, at: 11)
    ask("HISTORY \(room)", hit(token), at: 12, on: newer)
    ask("HISTORY \(room)", hit(token), at: 10 + bound + 1)
    #expect(
      summaries == [
        "a user taken out of the room's group reads it in a session opened after: HISTORY",
        "a user taken out of the room's group reads it after the staleness bound: HISTORY",
      ])
  }

  @Test("on IRC, NAMES and WHO replies that list a room are findings; their end lines are not")
  func ircNumerics() {
    oracle.model { $0.room(room, access: .invited, creator: "alice", at: 1) }
    let irc = PrivacySession(id: 3, user: "bob", wire: .irc)
    oracle.opened(irc, at: 0)
    ask("NAMES \(room)", ":host 366 bob \(room) :End of /NAMES list", at: 2, on: irc)
    ask("TOPIC \(room)", ":host 403 bob \(room) :No such channel", at: 2, on: irc)
    #expect(summaries.isEmpty)
    ask("NAMES \(room)", ":host 353 bob = \(room) :@alice", at: 3, on: irc)
    ask("WHOIS alice", ":host 319 bob alice :@\(room)", at: 3, on: irc)
    #expect(
      summaries == [
        "a private room is shown to a user never let in: IRC NAMES",
        "a private room is shown to a user never let in: IRC WHOIS",
      ])
  }

  @Test("a direct message reaches its two parties only, root neither")
  func directMessage() {
    oracle.model {
      $0.token(token, in: .between("alice", "carol"), by: "alice", request: "SAY @carol", at: 1)
    }
    let line = "HIST @alice a1 2026-11-30T17:00:00.000Z alice :\(token) hi"
    let carol = PrivacySession(id: 4, user: "carol", wire: .line)
    oracle.opened(carol, at: 0)
    ask("HISTORY @alice", line, at: 2, on: carol)
    #expect(summaries.isEmpty)
    let root = PrivacySession(id: 5, user: "root", wire: .line)
    oracle.opened(root, at: 0)
    ask("SEARCH * \(token)", line, at: 2, on: root)
    #expect(summaries == ["a direct message is shown to a third user: SEARCH"])
  }

  @Test(
    "a redacted line's text is a finding in a reply asked after the REDACT's OK, not in a MSG on its way"
  )
  func redaction() {
    oracle.model {
      $0.room(room, access: .everyone, creator: "alice", at: 1)
      $0.token(token, in: .room(room), by: "alice", request: "SAY", at: 2)
      $0.redacted(token, at: 3)
    }
    oracle.received(
      Array("MSG \(room) a1 2026-11-30T17:00:00.000Z alice :\(token) hi".utf8), on: bob, at: 4)
    #expect(summaries.isEmpty)
    ask("SEARCH * \(token)", hit(token), at: 5)
    #expect(summaries == ["a redacted line's text is shown again: SEARCH"])
  }
}

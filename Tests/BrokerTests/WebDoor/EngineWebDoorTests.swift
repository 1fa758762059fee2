import Broker
import LineProtocol
import TestSupport
import Testing

/// The engine's side of the browser door on virtual time (chatbroker(7),
/// `WEB` and "The web door"): tokens made and revoked on the Unix socket,
/// journaled as hashes only, and a page's connection greeted only with a
/// token of its own user that has not expired.
@Suite("Engine: the web door's tokens")
struct EngineWebDoorTests {
  /// A harness whose broker has a web door on port 8080.
  private func door(limits: Limits = Limits()) -> EngineHarness {
    let chat = EngineHarness(limits: limits)
    chat.engine.webDoorPort = 8080
    return chat
  }

  /// `WEB` as `user` on a connection of theirs: the token and the reply.
  private func token(_ chat: EngineHarness, _ user: String) -> (token: String, reply: String) {
    let connection = chat.connect(user)
    let reply = chat.send(connection, "WEB").last ?? ""
    let words = reply.split(separator: " ").map(String.init)
    return (words.count == 5 ? words[2] : "", reply)
  }

  /// A page's connection that showed `token`: what it got, and whether
  /// the engine closed it.
  private func page(_ chat: EngineHarness, _ user: String, _ token: String, id: Int)
    -> (lines: [String], closed: Bool, refusal: String?)
  {
    let connection = ConnectionID(id)
    let refusal = chat.engine.admit(connection, user: user, webToken: token)
    return (chat.output.take(connection), chat.output.closed.contains(connection), refusal)
  }

  @Test("WEB answers a token, when it expires and the link; the journal keeps its hash only")
  func mint() {
    let chat = door()
    let (token, reply) = token(chat, "alice")
    #expect(WebToken.isWellFormed(token), "\(reply)")
    #expect(
      reply == "OK WEB \(token) 2026-12-07T17:00:00.000Z http://localhost:8080/#k=\(token)")
    guard case .webToken(let grant)? = chat.journal.records.last else {
      Issue.record("no web_token record: \(chat.journal.records)")
      return
    }
    #expect(grant.user == "alice")
    #expect(grant.hash == WebToken.hash(token, user: "alice"))
    #expect(grant.hash != token)
    let line = String(decoding: JournalRecord.webToken(grant).jsonLine, as: UTF8.self)
    #expect(!line.contains(token), "the journal line holds the token: \(line)")
    #expect(line.contains(#""type":"web_token""#))
  }

  @Test("two WEBs make two different tokens of 256 bits")
  func tokensDiffer() {
    let chat = door()
    let first = token(chat, "alice").token
    let second = token(chat, "alice").token
    #expect(first != second)
    #expect(first.count == 64 && second.count == 64)
  }

  @Test("a broker without a web door answers WEB with NOACCESS and journals nothing")
  func noDoor() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    #expect(
      chat.send(alice, "WEB") == [
        "ERR WEB NOACCESS :this broker has no web door; its administrator opens one with --web-listen (chatbroker(8))"
      ])
    #expect(chat.journal.records.isEmpty)
  }

  @Test("a page with its user's token is greeted, and is a session like any other")
  func admitted() {
    let chat = door()
    let token = token(chat, "alice").token
    let (lines, closed, refusal) = page(chat, "alice", token, id: 100)
    #expect(lines == ["HELLO \(chatbrokerVersion) alice :welcome alice, type HELP for commands"])
    #expect(!closed && refusal == nil)
    #expect(chat.send(ConnectionID(100), "JOIN #web") == ["OK JOIN #web 1"])
  }

  @Test(
    "a token of another user, an unknown one and a malformed one: NOACCESS, closed, never a session",
    arguments: ["bob's", "unknown", "malformed"])
  func refused(kind: String) {
    let chat = door()
    let alices = token(chat, "alice").token
    let shown =
      switch kind {
      case "bob's": alices
      case "unknown": String(repeating: "0", count: 64)
      default: "not-a-token"
      }
    let (lines, closed, refusal) = page(chat, "bob", shown, id: 100)
    #expect(
      lines == [
        "ERR - NOACCESS :this link is not valid for you: it was revoked or replaced, or made for another user; run chatsh web again for a new one"
      ])
    #expect(closed)
    #expect(refusal == (kind == "malformed" ? "not a token" : "no such token of this user"))
    // Not a session: it gets no lines and is nobody in WHO.
    let bob = chat.connect("bob")
    chat.send(bob, "JOIN #web")
    #expect(chat.send(bob, "WHO #web") == ["MEMBER #web bob", "OK WHO #web 1"])
    #expect(chat.send(ConnectionID(100), "SAY #web :sneaking in").isEmpty)
    #expect(chat.output.take(bob).isEmpty)
  }

  @Test("a token works until it expires, seven days after WEB made it, and not a millisecond after")
  func expiry() {
    let chat = door()
    let token = token(chat, "alice").token
    chat.advance(to: "2026-12-07T16:59:59.999Z")
    #expect(page(chat, "alice", token, id: 100).lines.first?.hasPrefix("HELLO ") == true)
    chat.advance(to: "2026-12-07T17:00:00.000Z")
    let late = page(chat, "alice", token, id: 101)
    #expect(
      late.lines == [
        "ERR - NOACCESS :this link expired at 2026-12-07T17:00:00.000Z; run chatsh web again for a new one"
      ])
    #expect(late.closed)
    #expect(late.refusal == "the token expired at 2026-12-07T17:00:00.000Z")
    // The page open before stays open.
    #expect(!chat.output.closed.contains(ConnectionID(100)))
  }

  @Test("WEB REVOKE ends all the user's tokens and closes their pages, and no one else's")
  func revoke() {
    let chat = door()
    let first = token(chat, "alice").token
    let second = token(chat, "alice").token
    let bobs = token(chat, "bob").token
    _ = page(chat, "alice", first, id: 100)
    _ = page(chat, "bob", bobs, id: 101)
    let alice = chat.connect("alice")
    #expect(chat.send(alice, "WEB REVOKE") == ["OK WEB REVOKED 2"])
    #expect(chat.output.take(ConnectionID(100)) == ["BYE :\(Self.revoked)"])
    #expect(chat.output.closed.contains(ConnectionID(100)))
    #expect(!chat.output.closed.contains(ConnectionID(101)))
    #expect(!chat.output.closed.contains(alice), "the Unix socket's session stays")
    for token in [first, second] {
      #expect(page(chat, "alice", token, id: 102).closed)
    }
    #expect(page(chat, "bob", bobs, id: 103).lines.first?.hasPrefix("HELLO ") == true)
    #expect(chat.send(alice, "WEB REVOKE") == ["OK WEB REVOKED 0"])
    guard
      case .webRevoke(let user, _)? = chat.journal.records.last(where: {
        if case .webRevoke = $0 { true } else { false }
      })
    else {
      Issue.record("no web_revoke record")
      return
    }
    #expect(user == "alice")
  }

  static let revoked = "your web links were revoked (WEB REVOKE); run chatsh web for a new one"

  @Test("a user holds at most the limit of tokens: one more ends the oldest")
  func limit() {
    let chat = door()
    #expect(chat.engine.limits.webTokensPerUser == 16)
    let tokens = (0..<17).map { index in
      chat.clock.set("2026-11-30T17:00:\(index < 10 ? "0" : "")\(index).000Z")
      return token(chat, "alice").token
    }
    #expect(page(chat, "alice", tokens[0], id: 100).closed, "the oldest went")
    for (index, token) in tokens.dropFirst().enumerated() {
      #expect(page(chat, "alice", token, id: 101 + index).closed == false)
    }
    // Another user's are their own count.
    #expect(page(chat, "bob", token(chat, "bob").token, id: 150).closed == false)
    // And so after a restart, which replays the same records.
    let restarted = chat.restarted()
    #expect(page(restarted, "alice", tokens[0], id: 200).closed)
    #expect(page(restarted, "alice", tokens[1], id: 201).closed == false)
    #expect(page(restarted, "alice", tokens[16], id: 202).closed == false)
  }

  @Test("tokens survive a restart and a compaction; a compaction drops expired and revoked ones")
  func replayAndCompaction() {
    let chat = door()
    let kept = token(chat, "alice").token
    let revoked = token(chat, "bob").token
    chat.send(chat.connect("bob"), "WEB REVOKE")
    chat.advance(to: "2026-12-01T17:00:00.000Z")
    let late = token(chat, "carol").token
    #expect(page(chat.restarted(), "alice", kept, id: 100).closed == false)
    #expect(page(chat.restarted(), "bob", revoked, id: 101).closed)
    // Compaction at a time when alice's has expired and carol's has not.
    chat.advance(to: "2026-12-07T18:00:00.000Z")
    var records: [JournalRecord] = []
    chat.engine.snapshot().forEachRecord { records.append($0) }
    let grants = records.compactMap { record -> WebTokenGrant? in
      if case .webToken(let grant) = record { grant } else { nil }
    }
    #expect(grants.map(\.user) == ["carol"])
    let compacted = EngineHarness(clock: chat.clock)
    for record in records { compacted.engine.replay(record) }
    compacted.engine.finishReplay()
    #expect(page(compacted, "carol", late, id: 102).closed == false)
    #expect(page(compacted, "bob", revoked, id: 103).closed)
  }

  @Test("a failed sync takes a token back, and a revocation back: what they changed is undone")
  func rollback() {
    let chat = door()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let reply = chat.send(alice, "WEB").last ?? ""
    let token = String(reply.split(separator: " ").dropFirst(2).first ?? "")
    #expect(chat.engine.unsyncedRecordCount == 1)
    chat.engine.rollBack(1)
    #expect(page(chat, "alice", token, id: 100).closed)
    // A revocation taken back gives the tokens back.
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let second = self.token(chat, "alice").token
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    chat.send(alice, "WEB REVOKE")
    chat.engine.rollBack(1)
    #expect(page(chat, "alice", second, id: 101).closed == false)
  }
}

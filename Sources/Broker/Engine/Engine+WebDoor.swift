import LineProtocol

/// The engine's side of the browser door (chatbroker(7), `WEB` and "The
/// web door"): tokens made and ended with `WEB` on the Unix socket,
/// journaled only as their hashes, and a browser's connection, which is
/// no session until it shows one of its user's tokens.
extension Engine {
  /// What a page is told when the broker ends its session because its
  /// user revoked their links.
  static let revokedText = "your web links were revoked (WEB REVOKE); run chatsh web for a new one"

  /// `WEB`: a new token for `user`, journaled as its hash, answered with
  /// the token, when it expires and the link that opens the page with it.
  /// The user's oldest token goes when they would hold more than
  /// ``Limits/webTokensPerUser`` (a page open with it stays open).
  func mintWebToken(connection: ConnectionID, user: String) {
    guard let port = webDoorPort else {
      fail(
        .web, .noAccess,
        "this broker has no web door; its administrator opens one with --web-listen "
          + "(chatbroker(8))", to: connection)
      return
    }
    let token = WebToken.random()
    let now = clock.now
    let grant = WebTokenGrant(
      hash: WebToken.hash(token, user: user), user: user, created: now,
      expires: Timestamp(milliseconds: now.milliseconds + limits.webTokenMilliseconds))
    guard journal([.webToken(grant)], verb: .web, connection: connection) else { return }
    apply(.webToken(grant))
    log.info("web token made", ["user": user, "expires": grant.expires.description])
    send(
      .ok(
        .web, fields: [token, grant.expires.description, "http://localhost:\(port)/#k=\(token)"]),
      to: connection)
  }

  /// `WEB REVOKE`: ends all of `user`'s tokens, and the sessions pages
  /// opened with any of them (each gets `BYE` first); answered with how
  /// many tokens that had not expired yet it ended.
  func revokeWebTokens(connection: ConnectionID, user: String) {
    let now = clock.now
    let ended = webTokens.grants(of: user)
    if !ended.isEmpty {
      let record = JournalRecord.webRevoke(user: user, at: now)
      guard journal([record], verb: .web, connection: connection) else { return }
      apply(record)
    }
    let pages = (connectionsByUser[user] ?? []).filter { sessions[$0]?.webToken != nil }.sorted()
    for page in pages {
      send(.bye(Self.revokedText), to: page)
      disconnect(page)
      close(page)
    }
    let live = ended.filter { $0.expires > now }.count
    log.info("web tokens revoked", ["user": user, "tokens": "\(live)", "pages": "\(pages.count)"])
    send(.ok(.web, fields: ["REVOKED", String(live)]), to: connection)
  }

  /// A browser's connection of `user`'s showed `token` (its first frame,
  /// `TOKEN <token>`): it becomes a session, greeted with `HELLO`, when the
  /// token is one `WEB` made for `user` and it has not expired; else it
  /// is told why with `ERR - NOACCESS` and closed. Returns why it was
  /// refused, for the log; nil when it was greeted, or refused for
  /// ``Limits/sessionsPerUser`` (logged as that limit).
  public func admit(_ connection: ConnectionID, user: String, webToken token: String) -> String? {
    inStep(.stateless) {
      let hash = WebToken.isWellFormed(token) ? WebToken.hash(token, user: user) : nil
      let refusal: (log: String, text: String)
      if let hash, let grant = webTokens[hash] {
        if grant.expires > clock.now {
          _ = greet(connection, user: user, webToken: hash)
          return nil
        }
        refusal = (
          "the token expired at \(grant.expires)",
          "this link expired at \(grant.expires); run chatsh web again for a new one"
        )
      } else {
        refusal = (
          hash == nil ? "not a token" : "no such token of this user",
          "this link is not valid for you: it was revoked or replaced, or made for another "
            + "user; run chatsh web again for a new one"
        )
      }
      send(.error(verb: "-", code: .noAccess, text: refusal.text), to: connection)
      close(connection)
      return refusal.log
    }
  }

  /// A `web_token` or `web_revoke` record, live or replayed; what undoing
  /// it takes.
  func applyWebDoor(_ record: JournalRecord) -> UnsyncedRecords.Undo {
    switch record {
    case .webToken(let grant):
      let removed = webTokens.add(grant, limit: limits.webTokensPerUser)
      return .webToken(grant.hash, removed: removed)
    case .webRevoke(let user, _):
      let removed = webTokens.removeAll(of: user)
      return removed.isEmpty ? .nothing : .webRevoke(removed)
    default:
      return .nothing
    }
  }

  /// Takes a `web_token` or `web_revoke` record back out (Engine+Rollback).
  func undoWebDoor(_ undo: UnsyncedRecords.Undo) {
    switch undo {
    case .webToken(let hash, let removed):
      webTokens.remove(hash)
      webTokens.restore(removed)
    case .webRevoke(let removed):
      webTokens.restore(removed)
    default:
      break
    }
  }

  /// The tokens a compacted journal keeps: those not expired at `now`.
  func webTokensToKeep(at now: Timestamp) -> [WebTokenGrant] {
    webTokens.all.filter { $0.expires > now }
  }
}

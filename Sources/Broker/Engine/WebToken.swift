import LineProtocol

/// A token of the browser door (chatbroker(7), `WEB`): 256 random bits,
/// shown once to its user as 64 hexadecimal digits in the link `chatsh web`
/// prints, and kept only as the SHA-256 of its user and itself, so that
/// neither the journal nor a copy of it lets anyone open the door, and a
/// token is found only for the user it was made for.
public enum WebToken {
  /// Digits of a token, and of its hash.
  public static let digits = 64

  /// A new token from the system's random source (getrandom(2)).
  public static func random() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<4).map { _ in LowerHex.string(generator.next() as UInt64) }.joined()
  }

  /// Whether `text` can be a token: 64 lower-case hexadecimal digits.
  public static func isWellFormed(_ text: some StringProtocol) -> Bool {
    LowerHex.isDigits(text, count: digits)
  }

  /// What the journal keeps of `token`, minted for `user`: the SHA-256 of
  /// `<user>:<token>` (a token has no colon, so no other user and token
  /// give the same bytes), as 64 lower-case hexadecimal digits.
  public static func hash(_ token: String, user: String) -> String {
    LowerHex.string(Digest.sha256(Array((user + ":" + token).utf8)))
  }
}

/// One token of the browser door as the engine and the journal keep it
/// (a `web_token` record, chatbroker(8), JOURNAL FORMAT): whose it is,
/// until when, and its hash (``WebToken/hash(_:user:)``), never the token.
public struct WebTokenGrant: Equatable, Sendable {
  public let hash: String
  public let user: String
  public let created: Timestamp
  public let expires: Timestamp

  public init(hash: String, user: String, created: Timestamp, expires: Timestamp) {
    self.hash = hash
    self.user = user
    self.created = created
    self.expires = expires
  }
}

/// The tokens of the browser door, by hash and by user (oldest first): a
/// value, so that a snapshot is a copy and an undo the value before.
struct WebTokens {
  private(set) var grants: [String: WebTokenGrant] = [:]
  private var hashesByUser: [String: [String]] = [:]

  /// The grant of a token's hash, expired or not.
  subscript(hash: String) -> WebTokenGrant? { grants[hash] }

  /// The user's tokens, oldest first.
  func grants(of user: String) -> [WebTokenGrant] {
    (hashesByUser[user] ?? []).compactMap { grants[$0] }
  }

  /// Every token, oldest first (for compaction).
  var all: [WebTokenGrant] {
    grants.values.sorted { ($0.created, $0.hash) < ($1.created, $1.hash) }
  }

  /// Adds a token; the user's tokens that had expired when it was made
  /// go, and then the oldest while the user has more than `limit`. Only
  /// the record's own values decide, so replay removes the same ones.
  /// Returns what went, for the undo.
  mutating func add(_ grant: WebTokenGrant, limit: Int) -> [WebTokenGrant] {
    var removed = grants(of: grant.user).filter { $0.expires <= grant.created }
    for old in removed { remove(old.hash) }
    insert(grant)
    let mine = grants(of: grant.user)
    for old in mine.prefix(max(0, mine.count - max(1, limit))) {
      remove(old.hash)
      removed.append(old)
    }
    return removed
  }

  /// Ends all of the user's tokens; returns them.
  mutating func removeAll(of user: String) -> [WebTokenGrant] {
    let removed = grants(of: user)
    for grant in removed { remove(grant.hash) }
    return removed
  }

  /// Puts back tokens an undo restores, in their order of creation.
  mutating func restore(_ restored: [WebTokenGrant]) {
    for grant in restored { insert(grant) }
  }

  mutating func remove(_ hash: String) {
    guard let grant = grants.removeValue(forKey: hash) else { return }
    hashesByUser[grant.user]?.removeAll { $0 == hash }
    if hashesByUser[grant.user]?.isEmpty == true { hashesByUser[grant.user] = nil }
  }

  private mutating func insert(_ grant: WebTokenGrant) {
    guard grants[grant.hash] == nil else { return }
    grants[grant.hash] = grant
    var hashes = hashesByUser[grant.user] ?? []
    hashes.append(grant.hash)
    hashes.sort { lhs, rhs in
      let (left, right) = (grants[lhs]!, grants[rhs]!)
      return (left.created, left.hash) < (right.created, right.hash)
    }
    hashesByUser[grant.user] = hashes
  }
}

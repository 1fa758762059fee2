/// Who may read what, and when, as the broker's acknowledgements say
/// (chatbroker(7), "Private rooms" and "Moderation"):
///
/// - a room is everyone's unless private: to a Unix group (`JOIN <room>
///   group=<g>`: the group's members, its creator and the invited) or to
///   the invited (`JOIN <room> invite`: its creator and the invited);
///   a direct conversation is its two parties' alone;
/// - a KICK or a ban (`MODE <room> +b`) takes the user's membership and
///   invitation away for good, and a banned user reads nothing of the room;
/// - `+s` hides the room, its members, topic and lines from whoever is not
///   in it;
/// - group membership is looked up at every new session and again when
///   older than the staleness bound (60 s) before a read: after `gpasswd
///   -d`, a session opened later reads nothing of the group's room, an
///   older one nothing after the bound;
/// - a redacted line's text is never shown again.
///
/// Times are seconds on one clock (the fuzzer's monotonic clock, or the
/// engine test's virtual one). Acknowledgements and deliveries race, so
/// the model keeps what is *possible*: a way in counts from when its
/// request was sent (until its `ERR`), a way out from when its `OK` came.
/// A line is a finding only when no moment between the earliest the
/// broker could have decided it and its arrival lets the user read it.
public struct PrivacyModel: Sendable {
  /// Who a room is private to.
  public enum Access: Equatable, Sendable {
    case everyone
    case invited
    case group(String)
  }

  /// What takes a user's way into a room away.
  public enum Removal: String, Sendable {
    case kick = "kicked"
    case ban = "banned"
  }

  /// A request that may let a user in (JOIN, INVITE): possible from when
  /// it was sent; void when refused.
  struct Grant: Sendable {
    var user: String
    var sentAt: Double
    var answeredAt: Double?
    var refused = false
  }

  /// An acknowledged KICK or ban: in force from its `OK`; it undoes the
  /// grants answered before it was sent.
  struct Revocation: Sendable {
    var user: String
    var removal: Removal
    var sentAt: Double
    var at: Double
  }

  struct Room: Sendable {
    var access: Access
    var creator: String
    var createdAt: Double
    /// When `MODE <room> +s` was acknowledged.
    var secretSince: Double?
    var invites: [Grant] = []
    var joins: [Grant] = []
    var revocations: [Revocation] = []
  }

  /// A spell in a Unix group: from when `gpasswd -a` started to when
  /// `gpasswd -d` had finished.
  struct Membership: Sendable {
    var since: Double
    var until: Double?
  }

  /// Where a token was posted.
  public enum Conversation: Hashable, Sendable {
    case room(String)
    /// The two parties, sorted.
    case direct(String, String)

    public static func between(_ one: String, _ other: String) -> Conversation {
      one < other ? .direct(one, other) : .direct(other, one)
    }
  }

  struct Token: Sendable {
    var conversation: Conversation
    var sentAt: Double
    var poster: String
    var request: String
    /// Its message id, from `OK SAY <id>`.
    var id: String?
    var redactedAt: Double?
  }

  /// The host's administrator, who reads every room (an operator of each).
  public var superuser = "root"
  /// How long the broker may keep a user's groups: 60 s, and a margin for
  /// the time a lookup and a request take.
  public var staleness = 60.0 + 3.0

  private(set) var rooms: [String: Room] = [:]
  private var memberships: [String: [String: [Membership]]] = [:]
  private(set) var tokens: [String: Token] = [:]
  /// The model's start, for times in findings.
  public let origin: Double

  public init(origin: Double) {
    self.origin = origin
  }

  // MARK: - What happened

  /// A room about to be created by `creator`'s JOIN.
  public mutating func room(_ name: String, access: Access, creator: String, at time: Double) {
    rooms[name] = Room(access: access, creator: creator, createdAt: time)
  }

  public func knows(room name: String) -> Bool { rooms[name] != nil }

  public func access(of name: String) -> Access? { rooms[name]?.access }

  /// A JOIN (`invite: false`) or INVITE about to be sent for `user`; the
  /// number to settle it with.
  public mutating func grant(_ name: String, to user: String, invite: Bool, at time: Double)
    -> Int
  {
    let grant = Grant(user: user, sentAt: time)
    if invite {
      rooms[name]?.invites.append(grant)
      return rooms[name]?.invites.count ?? 0
    }
    rooms[name]?.joins.append(grant)
    return rooms[name]?.joins.count ?? 0
  }

  /// The answer to a grant: refused ones never let anyone in.
  public mutating func settle(
    _ name: String, grant number: Int, invite: Bool, refused: Bool, at time: Double
  ) {
    guard number > 0 else { return }
    if invite {
      rooms[name]?.invites[number - 1].answeredAt = time
      rooms[name]?.invites[number - 1].refused = refused
    } else {
      rooms[name]?.joins[number - 1].answeredAt = time
      rooms[name]?.joins[number - 1].refused = refused
    }
  }

  /// A KICK or ban sent at `sentAt` and acknowledged at `time`.
  public mutating func remove(
    _ user: String, from name: String, by removal: Removal, sentAt: Double, at time: Double
  ) {
    rooms[name]?.revocations.append(
      Revocation(user: user, removal: removal, sentAt: sentAt, at: time))
  }

  /// `MODE <room> +s`, acknowledged at `time`.
  public mutating func secret(_ name: String, at time: Double) {
    if rooms[name]?.secretSince == nil { rooms[name]?.secretSince = time }
  }

  /// `gpasswd -a` about to run.
  public mutating func joinGroup(_ user: String, _ group: String, at time: Double) {
    memberships[group, default: [:]][user, default: []].append(Membership(since: time))
  }

  /// `gpasswd -d` has finished.
  public mutating func leaveGroup(_ user: String, _ group: String, at time: Double) {
    guard let last = memberships[group]?[user]?.indices.last else { return }
    memberships[group]?[user]?[last].until = time
  }

  /// A text with `token` about to be sent by `poster`.
  public mutating func token(
    _ token: String, in conversation: Conversation, by poster: String, request: String,
    at time: Double
  ) {
    tokens[token] = Token(
      conversation: conversation, sentAt: time, poster: poster, request: request)
  }

  public mutating func identify(_ token: String, as id: String) {
    tokens[token]?.id = id
  }

  public func id(of token: String) -> String? { tokens[token]?.id }

  /// Its `REDACT` was acknowledged at `time`.
  public mutating func redacted(_ token: String, at time: Double) {
    if tokens[token]?.redactedAt == nil { tokens[token]?.redactedAt = time }
  }

  // MARK: - Who may read

  /// Why `user`, in a session opened at `opened`, could not read room
  /// `name` at any moment from `earliest` to `latest`; nil when they could
  /// at some moment, or the room is not the model's. `joining` asks
  /// whether a JOIN could be let in: `+s` does not keep anyone out.
  public func denial(
    of name: String, to user: String, session opened: Double, from earliest: Double,
    to latest: Double, joining: Bool = false
  ) -> PrivacyDenial? {
    guard let room = rooms[name] else { return nil }
    let candidates =
      [earliest] + changes(of: room, for: user).filter { $0 > earliest && $0 <= latest }
    for moment in candidates {
      let allowed =
        joining
        ? mayEnter(room, user, opened, moment) : mayRead(room, user, opened, moment)
      if allowed { return nil }
    }
    return reason(room, name, user, opened, latest)
  }

  /// Whether `user` may read the conversation of a direct `token`.
  public func isParty(_ user: String, of conversation: Conversation) -> Bool {
    guard case .direct(let one, let other) = conversation else { return true }
    return user == one || user == other
  }

  /// The moments at which what `user` may do in the room can change.
  private func changes(of room: Room, for user: String) -> [Double] {
    var moments = [room.createdAt]
    if let secret = room.secretSince { moments.append(secret) }
    for grant in room.invites + room.joins where grant.user == user {
      moments.append(grant.sentAt)
      if let answered = grant.answeredAt { moments.append(answered) }
    }
    moments += room.revocations.filter { $0.user == user }.map(\.at)
    if case .group(let group) = room.access {
      for spell in memberships[group]?[user] ?? [] {
        moments.append(spell.since)
        if let until = spell.until { moments.append(until + staleness) }
      }
    }
    return moments
  }

  /// May JOIN: who the room is private to, and no ban.
  private func mayEnter(_ room: Room, _ user: String, _ opened: Double, _ time: Double) -> Bool {
    if user == superuser || user == room.creator { return true }
    if isBanned(room, user, time) { return false }
    switch room.access {
    case .everyone: return true
    case .invited: return holds(room.invites, room, user, time)
    case .group(let group):
      return inGroup(user, group, opened, time) || holds(room.invites, room, user, time)
    }
  }

  /// May read: may JOIN, and for a secret room is in it (or invited, or an
  /// operator: its creator, root, its group's members).
  private func mayRead(_ room: Room, _ user: String, _ opened: Double, _ time: Double) -> Bool {
    guard mayEnter(room, user, opened, time) else { return false }
    guard let secret = room.secretSince, secret <= time else { return true }
    if user == superuser || user == room.creator { return true }
    if holds(room.joins, room, user, time) || holds(room.invites, room, user, time) {
      return true
    }
    if case .group(let group) = room.access { return inGroup(user, group, opened, time) }
    return false
  }

  private func isBanned(_ room: Room, _ user: String, _ time: Double) -> Bool {
    room.revocations.contains { $0.user == user && $0.removal == .ban && $0.at <= time }
  }

  /// Whether one of the grants may let `user` in at `time`: sent by then,
  /// not refused, and not undone by a KICK or ban sent after its answer.
  private func holds(_ grants: [Grant], _ room: Room, _ user: String, _ time: Double) -> Bool {
    grants.contains { grant in
      grant.user == user && !grant.refused && grant.sentAt <= time
        && !room.revocations.contains { removal in
          removal.user == user && removal.at <= time
            && grant.answeredAt.map { $0 <= removal.sentAt } == true
        }
    }
  }

  /// Whether a session opened at `opened` may see `user` in `group` at
  /// `time`: a lookup made since the session opened, and at most the
  /// staleness bound ago, may have found them in it.
  private func inGroup(_ user: String, _ group: String, _ opened: Double, _ time: Double)
    -> Bool
  {
    let oldestLookup = max(opened, time - staleness)
    return (memberships[group]?[user] ?? []).contains { spell in
      spell.since <= time && (spell.until ?? .infinity) >= oldestLookup
    }
  }

  /// Why the user may not read the room at `time`, in words for a finding.
  private func reason(
    _ room: Room, _ name: String, _ user: String, _ opened: Double, _ time: Double
  ) -> PrivacyDenial {
    func at(_ moment: Double) -> String { relative(moment) }
    if let ban = room.revocations.first(where: {
      $0.user == user && $0.removal == .ban && $0.at <= time
    }) {
      return PrivacyDenial(
        rule: .banned, facts: "\(user) was banned from \(name) at \(at(ban.at))")
    }
    if !mayEnter(room, user, opened, time) {
      if let kick = room.revocations.last(where: { $0.user == user && $0.at <= time }),
        room.invites.contains(where: { $0.user == user && !$0.refused })
      {
        return PrivacyDenial(
          rule: .kicked,
          facts:
            "\(user) was invited to \(name) (private to the invited) and \(kick.removal.rawValue) at \(at(kick.at))"
        )
      }
      if case .group(let group) = room.access, let spells = memberships[group]?[user],
        let removed = spells.compactMap(\.until).max()
      {
        let newSession = opened > removed
        return PrivacyDenial(
          rule: newSession ? .groupLeftBeforeSession : .groupLeftLongAgo,
          facts:
            "\(name) is private to group \(group); \(user) left it at \(at(removed)) (gpasswd -d), "
            + "the session opened at \(at(opened))")
      }
      let kind =
        switch room.access {
        case .everyone: "public"
        case .invited: "private to the invited"
        case .group(let group): "private to group \(group)"
        }
      return PrivacyDenial(
        rule: .neverAllowed,
        facts: "\(name) is \(kind), made by \(room.creator); \(user) was never let in")
    }
    return PrivacyDenial(
      rule: .secret,
      facts:
        "\(name) is +s since \(at(room.secretSince ?? 0)); \(user) never joined it nor was invited")
  }

  /// A moment as seconds since the model's start: `+12.345 s`.
  public func relative(_ moment: Double) -> String {
    let milliseconds = Int(((moment - origin) * 1000).rounded())
    let sign = milliseconds < 0 ? "-" : "+"
    let magnitude = abs(milliseconds)
    let fraction = String(magnitude % 1000)
    return
      "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
  }
}

/// Why a user may not see something, for a finding.
public struct PrivacyDenial: Sendable, Equatable {
  /// Which promise, in words without particulars (one bug, one finding).
  public enum Rule: String, Sendable {
    case secret = "a +s room is shown to a user who is not in it"
    case banned = "a banned user reads the room"
    case kicked = "a kicked invitee reads the room"
    case groupLeftBeforeSession =
      "a user taken out of the room's group reads it in a session opened after"
    case groupLeftLongAgo =
      "a user taken out of the room's group reads it after the staleness bound"
    case neverAllowed = "a private room is shown to a user never let in"
    case notParty = "a direct message is shown to a third user"
    case redacted = "a redacted line's text is shown again"
  }

  public var rule: Rule
  /// The model's facts behind it: who, which room, when.
  public var facts: String
}

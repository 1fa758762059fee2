/// The privacy oracle's clients: real users (and root) who, round after
/// round, make public, group, invite-only and `+s` rooms with new names,
/// post lines with new tokens, invite, kick, ban, redact, send direct
/// messages, and are taken out of a Unix group of the run's own; then
/// look, on both wires and with every verb that shows a room, at what they
/// may no longer (or never could) read. Every step is told to the
/// ``PrivacyModel`` as it is sent (ways in) or acknowledged (ways out);
/// the ``PrivacyOracle`` checks every line every session gets.
///
/// Each round makes everything first, takes away second and looks last,
/// the user taken out of the group looking first of all: no JOIN of theirs
/// comes between their removal and their new sessions' reads.
public final class PrivacyScenario {
  public enum Part: String, CaseIterable, Sendable {
    /// A public room made `+s`, looked at by who never joined it.
    case secret
    /// An invitee kicked from a room private to the invited, who comes
    /// back as a reconnecting client would.
    case kick
    /// An invitee banned (`+b`) from such a room, with its sessions open.
    case ban
    /// A room private to a Unix group, and a member taken out of the
    /// group (`gpasswd -d`) with a session left open.
    case group
    /// Direct messages, looked for by a third user.
    case direct
    /// A line taken back (REDACT), looked for by everyone.
    case redaction
  }

  public let transport: PrivacyTransport
  public let oracle: PrivacyOracle
  public var random: SplitMix64
  /// The users who play, root aside; the last is the one taken out of
  /// groups, and no other client of the run may speak as it.
  let users: [String]
  /// Who creates rooms: users no other client speaks as, whose allowance
  /// of new rooms (chatbroker(7), "Limits") is the scenario's alone.
  let creators: [String]
  /// root, when the run may speak as it: an operator of every room.
  let superuser: String?
  public var parts: Set<Part>
  /// When the run ends: the session watched past the staleness bound is
  /// kept only when the bound ends before.
  public var runsUntil = Double.infinity
  private var serial = 0
  /// Each user's long-lived session per wire, by `"<user> <wire>"`.
  private var mains: [String: PrivacySession] = [:]
  /// The session, opened before its user left the group, that may read
  /// the group's room no longer once the staleness bound has passed.
  public internal(set) var staleWatch: StaleWatch?
  /// The latest kick and ban, looked at again after a restart.
  var lastKick: (user: String, room: String)?
  var lastBan: (user: String, room: String, token: String)?
  /// The rounds played.
  public private(set) var rounds = 0
  /// Whether the user taken out of a group looks at once with new sessions
  /// (the rule a test of the staleness bound leaves out, so that nothing
  /// of theirs has the broker look their groups up again).
  public var looksRightAfterGroupChange = true

  public struct StaleWatch {
    public var session: PrivacySession
    public var room: String
    public var creator: String
    public var due: Double
  }

  /// `users`: at least two; `creators`: those of them that create rooms
  /// (all of them when empty); `superuser`: "root" when the run is root's.
  public init(
    transport: PrivacyTransport, oracle: PrivacyOracle, random: SplitMix64, users: [String],
    creators: [String] = [], superuser: String?, parts: Set<Part> = Set(Part.allCases)
  ) {
    self.transport = transport
    self.oracle = oracle
    self.random = random
    self.users = users
    let makers = creators.isEmpty ? users : creators
    self.creators = makers
    self.superuser = superuser
    self.parts = parts
  }

  var names: PrivacyNames { oracle.names }
  var quietUser: String { users[users.count - 1] }
  /// Everyone who plays, root too.
  var everyone: [String] { users + (superuser.map { [$0] } ?? []) }
  /// Who plays the parts but the group's: not the user taken out of
  /// groups, whose rooms are then only group rooms (an IRC client of theirs
  /// joins nothing when it registers). With two users, that one too.
  var players: [String] { users.filter { $0 != quietUser } }
  var makers: [String] {
    let others = creators.filter { $0 != quietUser }
    return others.isEmpty ? creators : others
  }

  func pickPlayer(except excluded: [String]) -> String? {
    pick(players, except: excluded) ?? pick(users, except: excluded)
  }

  // MARK: - A round

  /// One round of every part; false when the run ended meanwhile.
  @discardableResult
  public func round() -> Bool {
    rounds += 1
    followRestarts()
    // Made.
    let group = parts.contains(.group) ? makeGroupRoom() : nil
    let secret = parts.contains(.secret) ? makeSecretRoom() : nil
    let kicked = parts.contains(.kick) ? makeInvitedRoom() : nil
    let banned = parts.contains(.ban) ? makeInvitedRoom() : nil
    let direct = parts.contains(.direct) ? sendDirect() : nil
    let takenBack = parts.contains(.redaction) ? postToTakeBack() : nil
    // Taken away.
    let after = group.map(takeOutOfGroup)
    let kickedAfter = kicked.flatMap(kick)
    let bannedAfter = banned.flatMap(ban)
    let redacted = takenBack.map(redact) ?? false
    // Looked at: the user taken out of the group first.
    if let group, looksRightAfterGroupChange { lookAfterGroupChange(group, token: after ?? nil) }
    if let secret { lookAsOutsider(secret) }
    if let kicked, let kickedAfter { lookAfterKick(kicked, token: kickedAfter) }
    if let banned, let bannedAfter { lookAfterBan(banned, token: bannedAfter) }
    if let direct { lookAsThirdUser(direct) }
    if let takenBack, redacted { lookAfterRedaction(takenBack) }
    closeFresh()
    return !transport.stopping
  }

  // MARK: - Sessions

  /// The user's long-lived session on a wire, opened when first needed.
  func main(_ user: String, _ wire: PrivacyWire) -> PrivacySession? {
    let key = "\(user) \(wire)"
    if let session = mains[key], transport.isOpen(session) { return session }
    mains[key] = transport.open(user, wire, capabilities: Self.capabilities)
    return mains[key]
  }

  /// Sessions opened for one look, closed at the end of the round.
  private var freshSessions: [PrivacySession] = []

  /// A new session of the user, as a client that connects (or reconnects)
  /// now: on IRC registered with CHATHISTORY, or without it and so with a
  /// backlog at each JOIN.
  func fresh(_ user: String, _ wire: PrivacyWire) -> PrivacySession? {
    let capabilities =
      wire == .irc && random.chance(30)
      ? ["server-time", "message-tags", "multi-prefix"] : Self.capabilities
    guard let session = transport.open(user, wire, capabilities: capabilities) else { return nil }
    freshSessions.append(session)
    return session
  }

  func closeFresh() {
    for session in freshSessions where session != staleWatch?.session {
      transport.close(session)
    }
    freshSessions.removeAll()
  }

  /// All sessions ended (a restart): open new ones when next needed.
  func forgetSessions() {
    mains.removeAll()
    freshSessions.removeAll()
    staleWatch = nil
  }

  /// What the scenario's IRC sessions ask for: every capability that
  /// changes what a channel shows.
  static let capabilities = [
    "server-time", "message-tags", "batch", "draft/chathistory", "multi-prefix",
    "userhost-in-names", "away-notify",
  ]

  // MARK: - Requests

  struct Reply {
    var lines: [String]
    var answered: Bool
    /// A line-protocol request answered `OK`.
    var ok: Bool { lines.last?.hasPrefix("OK ") == true }
    /// On IRC: the session's own echo of a command, such as its JOIN.
    func echoes(_ command: String, of user: String) -> Bool {
      lines.contains { line in
        guard let message = IRCShape.parse(Array(line.utf8)) else { return false }
        return message.command == command && message.sourceNick == user
      }
    }
  }

  /// One request; unanswered once the run ends, or once the broker was
  /// restarted by someone else in this round (a crash may have taken the
  /// round's rooms with it: a JOIN would make a new public room).
  @discardableResult
  func ask(_ session: PrivacySession?, _ line: String) -> Reply {
    guard let session, !transport.stopping, transport.epoch == epoch,
      let lines = transport.request(line, on: session)
    else { return Reply(lines: [], answered: false) }
    return Reply(lines: lines, answered: true)
  }

  /// The broker's restarts seen so far that were not the scenario's own.
  private var epoch = 0

  /// After a restart that was not the scenario's own, what it kept to look
  /// at again is gone.
  func followRestarts() {
    guard transport.epoch != epoch else { return }
    epoch = transport.epoch
    forgetSessions()
    lastKick = nil
    lastBan = nil
  }

  var now: Double { transport.now }

  func newRoom() -> String {
    serial += 1
    return names.room(serial)
  }

  func newToken() -> String {
    serial += 1
    return names.token(serial)
  }

  func newGroup() -> String {
    serial += 1
    return names.group(serial)
  }

  /// A new room, made by `creator`'s JOIN (`JOIN <room> [invite |
  /// group=<g>]`, as `access` says); nil when refused (the creator's
  /// allowance of new rooms may be used up).
  func create(_ access: PrivacyModel.Access, by creator: String) -> String? {
    let room = newRoom()
    oracle.model { $0.room(room, access: access, creator: creator, at: now) }
    let how =
      switch access {
      case .everyone: ""
      case .invited: " invite"
      case .group(let group): " group=\(group)"
      }
    return join(main(creator, .line), room, how: how) ? room : nil
  }

  /// JOIN, told to the model as a way in; whether it was let in.
  @discardableResult
  func join(_ session: PrivacySession?, _ room: String, how: String = "") -> Bool {
    guard let session else { return false }
    let grant = oracle.model { $0.grant(room, to: session.user, invite: false, at: now) }
    let reply = ask(session, "JOIN \(room)\(how)")
    let admitted =
      session.wire == .line ? reply.ok : reply.echoes("JOIN", of: session.user)
    if reply.answered {
      oracle.model {
        $0.settle(room, grant: grant, invite: false, refused: !admitted, at: now)
      }
    }
    return admitted
  }

  /// INVITE on the line protocol by an operator; whether it was taken.
  @discardableResult
  func invite(_ user: String, to room: String, by inviter: String) -> Bool {
    let grant = oracle.model { $0.grant(room, to: user, invite: true, at: now) }
    let reply = ask(main(inviter, .line), "INVITE \(room) \(user)")
    if reply.answered {
      oracle.model { $0.settle(room, grant: grant, invite: true, refused: !reply.ok, at: now) }
    }
    return reply.ok
  }

  /// Posts a line with a new token to `target` (`#room`, or a user for a
  /// direct message); the token.
  @discardableResult
  func post(
    _ session: PrivacySession?, to target: String,
    in conversation: PrivacyModel.Conversation
  ) -> String? {
    guard let session else { return nil }
    let token = newToken()
    let words = random.pick(["deploy at six", "the password is hunter2", "lunch?", "ok"])
    // One in five a NOTICE (since 1.6), on IRC with a client-only tag:
    // the same message by another form, judged by the same oracle.
    let notice = random.chance(20)
    let line =
      session.wire == .line
      ? "\(notice ? "NOTICE" : "SAY") \(target.hasPrefix("#") ? target : "@" + target) \(token) \(words)"
      : notice
        ? "@+chatfuzz=tagged NOTICE \(target) :\(token) \(words)"
        : "PRIVMSG \(target) :\(token) \(words)"
    oracle.model {
      $0.token(token, in: conversation, by: session.user, request: line, at: now)
    }
    let reply = ask(session, line)
    if session.wire == .line, reply.ok, let last = reply.lines.last {
      let words = last.split(separator: " ")
      if words.count > 2 { oracle.model { $0.identify(token, as: String(words[2])) } }
    }
    return token
  }

  /// A KICK, ban or `+s` on the line protocol, told to the model once
  /// acknowledged: the time it was sent, when it was.
  func change(_ session: PrivacySession?, _ line: String) -> Double? {
    let sent = now
    return ask(session, line).ok ? sent : nil
  }

  func pick(_ choices: [String], except excluded: [String] = []) -> String? {
    let left = choices.filter { !excluded.contains($0) }
    return left.isEmpty ? nil : random.pick(left)
  }

  func randomWire() -> PrivacyWire { random.chance(50) ? .line : .irc }
}

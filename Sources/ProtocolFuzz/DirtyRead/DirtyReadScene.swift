/// One session of a dirty-read scene: whose it is, and whether it speaks
/// IRC or chatbroker(7)'s line protocol.
public struct DirtyReadRole: Sendable {
  public var user: String
  public var irc: Bool

  public init(user: String, irc: Bool) {
    self.user = user
    self.irc = irc
  }
}

/// A short play in a fresh room, in steps: in each, one session sends a
/// request whose change carries a fingerprint (``Fingerprint``) and at
/// once, before its answer, the others (and the writer itself, behind it)
/// ask what shows that change: `MODE`, the ban list, `TOPIC`, `ROOMS`,
/// `WHO`, `HISTORY`, `SEARCH`, `SCHEDULED`, or IRC's equivalents. So they
/// ask while the change waits for its sync; when the sync fails and the
/// request is refused `STORAGE`, its fingerprint goes to the
/// ``DirtyReadLedger``, which holds every line of every session against
/// it. The next step starts once every answer of this one came.
///
/// The cast: 0 creates the room and is its operator, 1 joins it (invited
/// first when the room is private), 2 stays outside. Wire-neutral, and
/// without sockets: the fuzzer's ``DirtyReadOracle`` runs it against a
/// broker, the engine's property test against the engine on virtual time.
public final class DirtyReadScene {
  /// A line for one session of the cast, without its line end.
  public struct Send: Sendable {
    public var session: Int
    public var line: String
  }

  public let room: String
  public let cast: [DirtyReadRole]
  private let ledger: DirtyReadLedger
  private var steps: [Step]
  private var current = -1
  private var waits: [Wait]
  public private(set) var finished = false

  /// What a session still waits for in the current step.
  private struct Wait {
    /// Line protocol: final replies (`OK`, `ERR`) still to come.
    var finals = 0
    /// IRC: the PING token whose PONG ends the step.
    var fence: String?
    /// The first final reply (line protocol), or the first refusal (IRC).
    var answer: String?
    var done: Bool { finals == 0 && fence == nil }
  }

  /// The cast's requests, by kind; ``line(in:irc:)`` writes them.
  enum Action {
    case create(invite: Bool)
    case join
    case invite(String)
    case mode(String, String?)
    case topic(String)
    /// `notice`: sent as a NOTICE (since 1.6), which on IRC carries a
    /// client-only tag too, so that both forms are judged.
    case say(String, notice: Bool = false)
    case sayAt(String)
    case kick(String, reason: String)
    case rooms, conversations, who, modes, bans, topicQuery, history, scheduled
    case search(String)

    func line(in room: String, irc: Bool) -> String? {
      switch self {
      case .create(let invite): return "JOIN \(room)" + (invite ? " invite" : "")
      case .join: return "JOIN \(room)"
      case .invite(let user): return irc ? "INVITE \(user) \(room)" : "INVITE \(room) \(user)"
      case .mode(let change, let argument):
        return "MODE \(room) \(change)" + (argument.map { " \($0)" } ?? "")
      case .topic(let text): return "TOPIC \(room) :\(text)"
      case .say(let text, let notice):
        guard notice else { return irc ? "PRIVMSG \(room) :\(text)" : "SAY \(room) \(text)" }
        return irc ? "@+chatfuzz=tagged NOTICE \(room) :\(text)" : "NOTICE \(room) \(text)"
      case .sayAt(let text):
        return irc ? "PRIVMSG sched|bot :at +1h \(room) \(text)" : "SAYAT \(room) +1h \(text)"
      case .kick(let user, let reason): return "KICK \(room) \(user) :\(reason)"
      case .rooms: return irc ? "LIST" : "ROOMS"
      case .conversations:
        return irc
          ? "CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2100-01-01T00:00:00.000Z 100"
          : "CONVERSATIONS"
      case .who: return "WHO \(room)"
      case .modes: return "MODE \(room)"
      case .bans: return "MODE \(room) +b"
      case .topicQuery: return "TOPIC \(room)"
      case .history: return irc ? "CHATHISTORY LATEST \(room) * 50" : "HISTORY \(room)"
      case .scheduled: return irc ? "PRIVMSG sched|bot :list" : "SCHEDULED"
      case .search(let word): return irc ? "NAMES \(room)" : "SEARCH * \(word)"
      }
    }
  }

  /// One request and the questions asked right behind it.
  struct Step {
    var actor: Int
    var action: Action
    /// What its refusal rolled back.
    var fingerprint: Fingerprint?
    /// Sessions and what they ask; the actor's own come behind its request.
    var probes: [(Int, Action)]
    /// A refusal ends the scene: what follows needs it.
    var critical = false
  }

  /// The capabilities the cast's IRC sessions ask for: echoes of their
  /// own lines, and history.
  static let capabilities = ["batch", "draft/chathistory", "echo-message", "server-time"]

  /// A scene of `cast` (three roles) in a fresh room; its tokens come from
  /// `ledger`, its choices from `random`.
  public init(cast: [DirtyReadRole], ledger: DirtyReadLedger, random: inout SplitMix64) {
    precondition(cast.count == 3)
    self.cast = cast
    self.ledger = ledger
    room = Fingerprint.roomName(ledger.nextSerial())
    waits = Array(repeating: Wait(), count: cast.count)
    let room = room
    // A private room needs an invitee other than its creator, and not
    // root, who may read every room.
    let invitee = cast[1].user
    let invite = invitee != cast[0].user && invitee != "root" && random.chance(40)
    var steps = [
      Step(
        actor: 0, action: .create(invite: invite), fingerprint: .room(room),
        probes: [(1, .rooms), (2, .rooms), (0, .rooms)], critical: true)
    ]
    if invite {
      steps.append(
        Step(
          actor: 0, action: .invite(invitee), fingerprint: .roomFor(room, user: invitee),
          probes: [(1, .rooms), (1, .conversations)], critical: true))
    }
    steps.append(Step(actor: 1, action: .join, probes: [(2, .who), (0, .who)], critical: true))
    func token() -> String { Fingerprint.token(ledger.nextSerial()) }
    var middle: [Step] = []
    for letter in ["m", "t", "n", "s"] + (invite ? [] : ["i"]) {
      middle.append(
        Step(
          actor: 0, action: .mode("+" + letter, nil),
          fingerprint: .mode(room, letter: Character(letter)),
          probes: [(1, .modes), (2, .modes), (0, .modes)]))
    }
    let key = token()
    middle.append(
      Step(
        actor: 0, action: .mode("+k", key), fingerprint: .text(key),
        probes: [(1, .modes), (0, .modes)]))
    let limit = 10_000 + ledger.nextSerial() % 90_000
    middle.append(
      Step(
        actor: 0, action: .mode("+l", "\(limit)"), fingerprint: .limit(room, limit),
        probes: [(1, .modes), (2, .modes), (0, .modes)]))
    let mask = token()
    middle.append(
      Step(
        actor: 0, action: .mode("+b", "\(mask)!*@*"), fingerprint: .text(mask),
        probes: [(1, .bans), (2, .bans), (0, .bans)]))
    let topic = token()
    middle.append(
      Step(
        actor: 0, action: .topic("topic \(topic)"), fingerprint: .text(topic),
        probes: [(1, .topicQuery), (2, .rooms), (0, .topicQuery)]))
    for (writer, notice) in [(0, false), (0, true), (1, false)] {
      let text = token()
      middle.append(
        Step(
          actor: writer, action: .say("said \(text)", notice: notice), fingerprint: .text(text),
          probes: [(1 - writer, .history), (2, .search(text)), (writer, .history)]))
    }
    let later = token()
    middle.append(
      Step(
        actor: 0, action: .sayAt("later \(later)"), fingerprint: .text(later),
        probes: [(0, .scheduled)]))
    middle.shuffle(using: &random)
    steps += middle.filter { _ in random.chance(70) }
    let reason = token()
    steps.append(
      Step(
        actor: 0, action: .kick(cast[1].user, reason: "out \(reason)"),
        fingerprint: .text(reason), probes: [(2, .who), (1, .history), (0, .who)]))
    self.steps = steps
  }

  /// The first lines: IRC sessions register (and the scene waits for
  /// that), then the first step.
  public func begin() -> [Send] {
    var sends: [Send] = []
    for (session, role) in cast.enumerated() where role.irc {
      sends += IRCGenerator.registration(nick: role.user, capabilities: Self.capabilities).map {
        Send(session: session, line: String(decoding: $0, as: UTF8.self))
      }
      sends.append(fence(session))
    }
    return sends.isEmpty ? nextStep() : sends
  }

  /// A line session `session` received; returns what to send next.
  public func received(_ line: [UInt8], on session: Int) -> [Send] {
    guard !finished, session < waits.count else { return [] }
    if cast[session].irc {
      let words = LineWords(line)
      if words.command == "PONG", words.parameters.last == waits[session].fence {
        waits[session].fence = nil
      } else if waits[session].answer == nil,
        Fingerprint.contains(line, "nothing was accepted") || words.isRefusal,
        !namesAnotherRoom(line)
      {
        waits[session].answer = String(decoding: line, as: UTF8.self)
      }
    } else if waits[session].finals > 0,
      line.starts(with: Array("OK ".utf8)) || line.starts(with: Array("ERR ".utf8))
    {
      if waits[session].answer == nil {
        waits[session].answer = String(decoding: line, as: UTF8.self)
      }
      waits[session].finals -= 1
    }
    guard waits.allSatisfy(\.done) else { return [] }
    if current >= 0 { conclude(steps[current]) }
    return finished ? [] : nextStep()
  }

  /// Gives up (the connection or the broker went away): nothing more is
  /// judged.
  public func abandon() {
    finished = true
  }

  /// The step's request was answered: a refusal for want of storage
  /// forbids its fingerprint; an acknowledged message is remembered for
  /// the check after a restart.
  private func conclude(_ step: Step) {
    let role = cast[step.actor]
    let answer = waits[step.actor].answer ?? ""
    let request = step.action.line(in: room, irc: role.irc) ?? ""
    let refused =
      role.irc
      ? answer.contains("nothing was accepted")
      : answer.hasPrefix("ERR ") && answer.contains(" STORAGE")
    let accepted = role.irc ? answer.isEmpty : answer.hasPrefix("OK ")
    if refused, let fingerprint = step.fingerprint {
      ledger.refused(fingerprint, request: request, answer: answer)
    }
    if accepted, case .say(let text, _) = step.action {
      let words = answer.split(separator: " ")
      ledger.acknowledged(
        .init(
          room: room, token: String(text.split(separator: " ").last ?? ""),
          id: role.irc || words.count < 3 ? nil : String(words[2]), reader: cast[0].user))
    }
    if step.critical && !accepted { finished = true }
  }

  private func nextStep() -> [Send] {
    current += 1
    waits = Array(repeating: Wait(), count: cast.count)
    guard current < steps.count else {
      finished = true
      return []
    }
    let step = steps[current]
    // The actor's request first, its own questions behind it, the others'
    // right after.
    let asked =
      [(step.actor, step.action)] + step.probes.filter { $0.0 == step.actor }
      + step.probes.filter { $0.0 != step.actor }
    var sends: [Send] = []
    for (session, action) in asked {
      guard let line = action.line(in: room, irc: cast[session].irc) else { continue }
      sends.append(Send(session: session, line: line))
      if !cast[session].irc { waits[session].finals += 1 }
    }
    var fenced: Set<Int> = []
    for send in sends where cast[send.session].irc && fenced.insert(send.session).inserted {
      sends.append(fence(send.session))
    }
    return sends
  }

  /// Whether an IRC refusal is about another room than the scene's: the
  /// gateway joins a session to its user's rooms as it registers, and
  /// those JOINs may be answered during the first step.
  private func namesAnotherRoom(_ line: [UInt8]) -> Bool {
    let text = String(decoding: line, as: UTF8.self)
    let rooms = text.split(separator: " ").filter { $0.hasPrefix("#") }
    return !rooms.isEmpty && !rooms.contains { $0 == room }
  }

  private func fence(_ session: Int) -> Send {
    let token = "xdf\(ledger.nextSerial())"
    waits[session].fence = token
    return Send(session: session, line: "PING :\(token)")
  }
}

import LineProtocol
import TestSupport

/// Request lines for the rollback property (``RollbackPropertyTests``):
/// every verb that writes a record, and the queries beside them, aimed at
/// a handful of rooms, users and the ids the engine handed out, so that
/// they meet each other's state (a KICK of someone who joined, a REDACT
/// of a message still kept, a SKIP of a series' coming occurrence) rather
/// than being refused. Wrong forms are the protocol fuzzer's job
/// (ProtocolFuzz's RequestGenerator).
struct RollbackRequests {
  var random: SeededGenerator
  let users: [String]
  /// Public rooms, and rooms made private (`group=ops`, `invite`) by
  /// whoever creates them.
  static let rooms = ["#a", "#b", "#c", "#g", "#i"]
  /// Ids of messages said and delivered, newest last, for REDACT and
  /// MARKREAD.
  private var messages: [(id: String, target: String, author: String)] = []
  /// Pending messages and series with their due instant (RFC 3339) and,
  /// for a series of fixed interval, its step in minutes.
  private var pending: [(id: String, due: String, step: Int?)] = []

  init(seed: UInt64, users: [String]) {
    random = SeededGenerator(seed: seed)
    self.users = users
  }

  // MARK: - Learning ids

  /// Learns ids from a line the engine sent to `user`'s session.
  mutating func learn(_ line: String, user: String, sent request: String) {
    let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    guard words.count >= 3 else { return }
    switch (words[0], words[1]) {
    case ("OK", "SAY"), ("OK", "ACTION"), ("OK", "REPLY"):
      let target = request.split(separator: " ").dropFirst().first.map(String.init) ?? "#a"
      remember(message: words[2], target: target, author: user)
    case ("OK", "SAYAT"), ("OK", "REPLACE"), ("OK", "RESCHEDULE"):
      remember(pending: words[2], due: words.count > 3 ? words[3] : nil, step: nil)
    case ("OK", "SAYEVERY"):
      let step = words.count > 4 && words[4].hasPrefix("every:15m") ? 15 : nil
      remember(pending: words[2], due: words.count > 3 ? words[3] : nil, step: step)
    case ("SCHED", _) where words.count >= 4:
      remember(pending: words[1], due: words[3], step: line.contains(" every:15m") ? 15 : nil)
    case ("MSG", _) where words.count >= 5:
      // MSG <target> <id> <time> <user> ...: the target as `user` sees it.
      let author = words[4]
      let target = words[1].hasPrefix("@") ? "@\(user)" : words[1]
      remember(message: words[2], target: author == user ? words[1] : target, author: author)
    default:
      break
    }
  }

  private mutating func remember(message id: String, target: String, author: String) {
    messages.removeAll { $0.id == id }
    messages.append((id, target, author))
    if messages.count > 48 { messages.removeFirst() }
  }

  private mutating func remember(pending id: String, due: String?, step: Int?) {
    let known = pending.first { $0.id == id }
    pending.removeAll { $0.id == id }
    pending.append((id, due ?? known?.due ?? "", step ?? known?.step))
    if pending.count > 24 { pending.removeFirst() }
  }

  // MARK: - Requests

  /// One request line for a session of `user`.
  mutating func request(for user: String) -> String {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<10: return join()
    case 10..<14: return "PART \(room())"
    case 14..<26: return say()
    case 26..<27: return redact(user)
    case 27..<28: return random.chance(50) ? react() : "BLOCK \(target()) :\(text())\\n\(text())"
    case 28..<29: return amend(user)
    case 29..<33: return "SAYAT \(target()) \(when()) :\(text())"
    case 33..<36: return "SAYEVERY \(target()) \(rule()) :\(text())"
    case 36..<46: return change()
    case 46..<50: return markRead(user)
    case 50..<53: return random.chance(50) ? "AWAY :\(text())" : "AWAY"
    case 53..<57: return "TOPIC \(room()) :\(random.chance(20) ? "" : text())"
    case 57..<60: return "INVITE \(room()) \(other())"
    case 60..<63: return "ACCESS \(room()) \(random.pick(["public", "invite", "group=ops"]))"
    case 63..<71: return mode()
    case 71..<76: return "KICK \(room()) \(other())\(random.chance(50) ? " :\(text())" : "")"
    case 76..<78: return random.chance(50) ? "QUIT" : "QUIT :gone"
    default: return query(user)
    }
  }

  private mutating func room() -> String { random.pick(Self.rooms) }

  private mutating func other() -> String { random.pick(users) }

  private mutating func target() -> String {
    random.chance(70) ? room() : "@\(other())"
  }

  private mutating func text() -> String {
    random.pick(["alpha", "beta gamma", "alpha beta", "hello bob", "hi alice", "carol: gamma"])
      + " \(Int.random(in: 0..<100, using: &random))"
  }

  private mutating func join() -> String {
    let room = room()
    switch (room, Int.random(in: 0..<10, using: &random)) {
    case ("#g", 0..<7): return "JOIN #g group=ops"
    case ("#i", 0..<7): return "JOIN #i invite"
    case (_, 0): return "JOIN \(room) key=k"
    default: return "JOIN \(room)"
    }
  }

  /// SAY, ACTION, and a REPLY (chatbroker(7), since 1.6) to a message
  /// seen, in its conversation or another.
  private mutating func say() -> String {
    if random.chance(15), let message = messages.last {
      let target = random.chance(80) ? message.target : target()
      return "REPLY \(target) \(message.id) :\(text())"
    }
    return "\(random.chance(85) ? "SAY" : "ACTION") \(target()) :\(text())"
  }

  private mutating func redact(_ user: String) -> String {
    let own = messages.filter { $0.author == user }
    guard let message = own.isEmpty ? messages.last : random.pick(own) else {
      return "REDACT #a 1"
    }
    return "REDACT \(message.target) \(message.id)"
  }

  /// AMEND (chatbroker(7), since 1.6), mostly of one's own line.
  private mutating func amend(_ user: String) -> String {
    let own = messages.filter { $0.author == user }
    guard let message = own.isEmpty ? messages.last : random.pick(own) else {
      return "AMEND #a 1 :x"
    }
    return "AMEND \(message.target) \(message.id) :\(text())"
  }

  /// REACT or UNREACT (chatbroker(7), since 1.6) of a line seen.
  private mutating func react() -> String {
    guard let message = messages.isEmpty ? nil : random.pick(messages) else {
      return "REACT #a 1 👍"
    }
    let verb = random.chance(70) ? "REACT" : "UNREACT"
    return "\(verb) \(message.target) \(message.id) \(random.pick(["👍", "+1"]))"
  }

  private mutating func markRead(_ user: String) -> String {
    guard let message = messages.isEmpty ? nil : random.pick(messages) else {
      return "MARKREAD #a 1"
    }
    let target =
      message.author == user || message.target.hasPrefix("#")
      ? message.target : "@\(message.author)"
    return "MARKREAD \(target) \(message.id)"
  }

  private mutating func when() -> String {
    random.pick(["+1m", "+10m", "+45m", "+2h", "+1d", "18:00", "23:30"])
  }

  private mutating func rule() -> String {
    random.pick([
      "every:15m", "every:15m", "every:1h,count:2", "daily@18:00", "daily@09:00,count:1",
    ])
  }

  /// A change of a pending message or series: CANCEL, RESCHEDULE (a new
  /// instant, rule, pause, resume, skip, now), EDIT, SKIP and REPLACE of
  /// one of its coming occurrences.
  private mutating func change() -> String {
    guard let chosen = pending.isEmpty ? nil : random.pick(pending) else {
      return "SCHEDULED"
    }
    let id = chosen.id
    switch Int.random(in: 0..<12, using: &random) {
    case 0, 1: return "CANCEL \(id)"
    case 2: return "RESCHEDULE \(id) \(when())"
    case 3: return "RESCHEDULE \(id) \(rule())"
    case 4: return "RESCHEDULE \(id) \(random.pick(["pause", "resume", "skip", "now"]))"
    case 5, 6: return "EDIT \(id) :\(text())"
    case 7, 8, 9: return "SKIP \(id) \(occurrence(chosen))"
    default: return "REPLACE \(id) \(occurrence(chosen)) \(when()) :\(text())"
    }
  }

  /// The due instant of a series, or one of its next ones for a series
  /// every 15 minutes.
  private mutating func occurrence(_ chosen: (id: String, due: String, step: Int?)) -> String {
    guard let step = chosen.step, let due = Timestamp(rfc3339: chosen.due) else {
      return chosen.due.isEmpty ? "+15m" : chosen.due
    }
    let ahead = Int64(Int.random(in: 0...2, using: &random) * step) * 60_000
    return Timestamp(milliseconds: due.milliseconds + ahead).description
  }

  private mutating func mode() -> String {
    let room = room()
    let user = other()
    let change = random.pick([
      "+o \(user)", "-o \(user)", "+v \(user)", "-v \(user)", "+b \(user)!*@*", "-b \(user)!*@*",
      "+k k", "-k", "+l 2", "-l", "+t", "-t", "+n", "-n", "+m", "-m", "+s", "-s", "+i", "-i",
    ])
    return "MODE \(room) \(change)"
  }

  private mutating func query(_ user: String) -> String {
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return "HISTORY \(target()) 5"
    case 1: return "SEARCH * alpha"
    case 2: return "CONVERSATIONS"
    case 3: return "SCHEDULED"
    case 4: return "ROOMS"
    case 5: return "WHO \(room())"
    case 6: return "TOPIC \(room())"
    default:
      return pending.isEmpty ? "PING" : "SCHEDULED \(random.pick(pending).id) NEXT 3"
    }
  }
}

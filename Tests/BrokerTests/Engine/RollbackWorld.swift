import Foundation
import LineProtocol
import TestSupport

@testable import Broker

/// Users with several sessions each driving one engine on virtual time,
/// with a journal that records every record and a sync that succeeds or
/// fails at random points, as the journal committer's do (chatbroker(8),
/// "JOURNAL": a failed sync refuses what it held, and the engine undoes
/// it, ``Engine/rollBack(_:)``). After every rollback it checks the
/// property of ``RollbackPropertyTests``; ``step()`` returns what broke.
final class RollbackWorld {
  let seed: UInt64
  let chat: EngineHarness
  private var random: SeededGenerator
  private var requests: RollbackRequests
  let users = ["alice", "bob", "carol"]
  /// The sessions that send requests, and the user of each.
  private var sessions: [ConnectionID: String] = [:]
  /// One session per user that only asks, never joins: it reads what a
  /// restarted engine would show.
  private var observers: [String: ConnectionID] = [:]
  /// How many of the journal's records are synced.
  private var synced = 0
  /// Each session's rooms when the unsynced records began.
  private var windowStart: [ConnectionID: Set<RoomName>] = [:]
  /// What happened since: each step, whether it wrote records, and the
  /// rooms it made sessions enter (true) or leave (false).
  private var window: [(step: String, wrote: Bool, changes: [Membership: Bool])] = []
  /// Every step so far, for the report of a failure.
  private(set) var trace: [String] = []
  private(set) var rollbacks = 0

  struct Membership: Hashable, Comparable, CustomStringConvertible {
    let connection: ConnectionID
    let room: RoomName
    static func < (lhs: Self, rhs: Self) -> Bool {
      (lhs.connection, lhs.room) < (rhs.connection, rhs.room)
    }
    var description: String { "\(connection) in \(room)" }
  }

  static var limits: Limits {
    var limits = Limits()
    // Small, so that histories evict and users reach their pending limit.
    limits.historyPerConversation = 4
    limits.pendingPerUser = 6
    return limits
  }

  init(seed: UInt64) {
    self.seed = seed
    random = SeededGenerator(seed: seed)
    requests = RollbackRequests(seed: seed &+ 1, users: users)
    chat = EngineHarness(limits: Self.limits)
    chat.engine.trackUnsyncedRecords()
    for user in users {
      observers[user] = chat.connect(user)
      for _ in 0..<2 { sessions[chat.connect(user)] = user }
    }
    windowStart = memberships()
  }

  // MARK: - Steps

  /// One random step; the description of a broken property, or nil.
  func step() -> String? {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<72: request()
    case 72..<80: advanceClock()
    case 80..<87: return syncSucceeds()
    case 87..<95: return syncFails()
    case 95..<97: request(diskFull: true)
    case 97: connect()
    case 98: disconnect()
    default: changeGroups()
    }
    return checkTracking()
  }

  private func request(diskFull: Bool = false) {
    guard
      let (connection, user) = sessions.sorted(by: { $0.key < $1.key }).randomElement(
        using: &random)
    else { return connect() }
    let line = requests.request(for: user)
    perform("\(connection) \(user)\(diskFull ? " (disk full)" : ""): \(line)") {
      chat.journal.failing = diskFull
      defer { chat.journal.failing = false }
      chat.feed(.line(line), from: connection)
    }
    learn(sent: line)
    if chat.output.closed.contains(connection) { sessions[connection] = nil }
  }

  private func advanceClock() {
    let seconds = random.pick([1, 30, 5 * 60, 20 * 60, 3600, 4 * 3600])
    chat.clock.now = chat.clock.now + Int64(seconds * 1000)
    perform("clock to \(chat.clock.now)") {
      if let armed = chat.output.armed, armed <= chat.clock.now { chat.engine.timerFired() }
    }
    learn(sent: "")
  }

  private func connect() {
    let user = random.pick(users)
    var id: ConnectionID?
    perform("connect \(user)") { id = chat.connect(user) }
    if let id { sessions[id] = user }
  }

  private func disconnect() {
    guard let connection = sessions.keys.sorted().randomElement(using: &random) else { return }
    perform("\(connection) drops") { chat.engine.disconnect(connection) }
    sessions[connection] = nil
  }

  /// carol joins group `ops` or leaves it (alice and bob stay in it): at
  /// her next JOIN she may lose the rooms private to it (Engine+Privacy).
  private func changeGroups() {
    let inOps = chat.groups.members["ops", default: []].contains("carol")
    if inOps {
      chat.groups.members["ops"]?.remove("carol")
    } else {
      chat.groups.members["ops", default: []].insert("carol")
    }
    trace.append("carol \(inOps ? "leaves" : "joins") group ops")
  }

  /// Runs one step, noting whether it wrote records and whose rooms it
  /// changed.
  private func perform(_ step: String, _ body: () -> Void) {
    let before = memberships()
    let records = chat.journal.records.count
    body()
    let after = memberships()
    var changes: [Membership: Bool] = [:]
    for (connection, rooms) in after {
      for room in rooms.subtracting(before[connection] ?? []) {
        changes[Membership(connection: connection, room: room)] = true
      }
    }
    for (connection, rooms) in before {
      for room in rooms.subtracting(after[connection] ?? []) {
        changes[Membership(connection: connection, room: room)] = false
      }
    }
    window.append((step, chat.journal.records.count > records, changes))
    trace.append(step)
  }

  /// Ids from whatever the sessions got, for later requests.
  private func learn(sent line: String) {
    for (connection, lines) in chat.output.lines.sorted(by: { $0.key < $1.key }) {
      let user = sessions[connection] ?? observers.first { $0.value == connection }?.key ?? ""
      for received in lines { requests.learn(received, user: user, sent: line) }
    }
    chat.output.lines.removeAll(keepingCapacity: true)
    chat.output.events.removeAll(keepingCapacity: true)
    chat.output.kinds.removeAll(keepingCapacity: true)
  }

  /// Each record applied is remembered with its undo until it is synced.
  private func checkTracking() -> String? {
    let unsynced = chat.journal.records.count - synced
    guard chat.engine.unsyncedRecordCount != unsynced else { return nil }
    return "the engine can undo \(chat.engine.unsyncedRecordCount) records, "
      + "the journal holds \(unsynced) unsynced"
  }

  // MARK: - Syncs

  /// A good sync; with `CHATBROKER_ROLLBACK_CHECK_SYNCS` set, the durable
  /// state is checked here too, so that a difference shows right after the
  /// steps that made it, rolled back or not.
  private func syncSucceeds() -> String? {
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let compacting = chat.journal.records.count > 500
    if compacting { compactJournal() }
    synced = chat.journal.records.count
    trace.append(compacting ? "sync, journal compacted" : "sync")
    defer { startWindow() }
    guard Self.checksSyncs, let broken = checkDurableState() else { return nil }
    return broken + "\nthe steps since the last sync (* wrote records):\n" + windowDescription
  }

  static let checksSyncs =
    ProcessInfo.processInfo.environment["CHATBROKER_ROLLBACK_CHECK_SYNCS"] != nil

  /// Every record is synced: the journal becomes what a replay of it
  /// compacts to, as the committer's compaction does, so that a long run
  /// does not replay an ever longer journal at each rollback.
  private func compactJournal() {
    let replayed = EngineHarness(limits: Self.limits, clock: chat.clock)
    for record in chat.journal.records { replayed.engine.replay(record) }
    replayed.engine.finishReplay()
    var records: [JournalRecord] = []
    replayed.engine.snapshot().forEachRecord { records.append($0) }
    chat.journal.records = records
  }

  /// A failed sync, as the committer handles it: the unsynced records are
  /// cut off the journal and the engine undoes them. Then the property.
  private func syncFails() -> String? {
    let unsynced = chat.journal.records.count - synced
    if let broken = checkTracking() { return broken }
    trace.append("sync fails: \(unsynced) records rolled back")
    rollbacks += 1
    chat.engine.rollBack(unsynced)
    chat.journal.records.removeLast(unsynced)
    defer { startWindow() }
    guard let broken = checkDurableState() ?? checkMemberships() else { return nil }
    return broken + "\nthe steps since the last sync (* wrote records):\n" + windowDescription
  }

  private func startWindow() {
    windowStart = memberships()
    window.removeAll()
  }

  // MARK: - The property

  /// The durable state is what a fresh engine replaying the journal's
  /// records builds: compacted, the live state writes a journal that
  /// replays to the same; every user is shown the same by both; and the
  /// pending messages fall due at the same instants.
  private func checkDurableState() -> String? {
    let replayed = EngineHarness(limits: Self.limits, clock: chat.clock)
    for record in chat.journal.records { replayed.engine.replay(record) }
    replayed.engine.finishReplay()
    // Both as a compaction writes them and the next start reads them.
    let expected = Self.canonical(compacted(replayed.engine))
    let actual = Self.canonical(compacted(chat.engine))
    if expected != actual {
      return "the durable state differs from a replay of the kept records:\n"
        + Self.difference(expected: expected, actual: actual)
    }
    // The groups each user is known to be in: what the live engine would
    // decide with now, its facts while fresh, else what NSS says
    // (chatbroker(8): group membership at most 60 s old).
    replayed.groups.members = [:]
    let now = chat.clock.now.milliseconds
    for user in users {
      let facts = chat.engine.groupsByUser[user]
      let fresh =
        facts?.askedAt.map { now - $0.milliseconds < Engine.groupFactsMaximumAge } ?? false
      let known = fresh ? facts?.groups ?? [] : chat.groups.groups(of: user)
      for group in known { replayed.groups.members[group, default: []].insert(user) }
    }
    let replayedObservers = Dictionary(
      uniqueKeysWithValues: users.map { ($0, replayed.connect($0)) })
    for user in users where !hasSessionWithoutRoom(user) {
      let shown = observe(chat, observers[user]!, user)
      let expected = observe(replayed, replayedObservers[user]!, user)
      if shown != expected {
        return "\(user) is shown what a replay of the kept records does not show:\n"
          + Self.difference(expected: expected, actual: shown)
      }
    }
    let due = Self.dueInstants(chat.engine.scheduler)
    let expectedDue = Self.dueInstants(replayed.engine.scheduler)
    if due != expectedDue {
      return "pending messages fall due at \(due), a replay's at \(expectedDue)"
    }
    return nil
  }

  /// The snapshot of a fresh engine that replayed `engine`'s snapshot, as
  /// a compaction's file would be read at the next start: rooms that only
  /// sessions kept are forgotten there. (Both sides of the comparison go
  /// through it, so what a compaction itself changes, such as the time a
  /// room's creator is said to have become its operator when the room was
  /// made private later, is the same on both.)
  private func compacted(_ engine: Engine) -> EngineSnapshot {
    let restarted = EngineHarness(limits: Self.limits, clock: chat.clock)
    engine.snapshot().forEachRecord { restarted.engine.replay($0) }
    restarted.engine.finishReplay()
    return restarted.engine.snapshot()
  }

  /// A user with a session in a room that is not among their rooms (one
  /// whose JOIN was rolled back while another session's stayed) may read
  /// a room with a key (+k) as a member: that is not durable, and not
  /// compared.
  private func hasSessionWithoutRoom(_ user: String) -> Bool {
    chat.engine.rooms.contains { name, room in
      room.sessionsByUser[user] != nil && !chat.engine.isHolder(user, of: name)
    }
  }

  /// A room in memory only because sessions are in it (one whose JOIN was
  /// rolled back while another session's stayed): a restart forgets it.
  private func keptOnlyBySessions(_ name: RoomName) -> Bool {
    let engine = chat.engine
    guard let room = engine.rooms[name], !room.connections.isEmpty else { return false }
    return engine.histories[.room(name)] == nil && !engine.scheduler.hasPending(in: name)
      && engine.holdersByRoom[name] == nil && room.topic == nil && room.access == nil
  }

  /// What `user` reads of the durable state.
  private func observe(_ harness: EngineHarness, _ connection: ConnectionID, _ user: String)
    -> [String]
  {
    var lines = harness.send(connection, "CONVERSATIONS") + harness.send(connection, "SCHEDULED")
    for room in RollbackRequests.rooms {
      for query in ["HISTORY \(room) 100", "TOPIC \(room)", "ACCESS \(room)"] {
        lines += harness.send(connection, query)
      }
      // A room that only sessions keep has modes, but not after a restart.
      guard let name = RoomName(room), !keptOnlyBySessions(name) else { continue }
      lines +=
        harness.send(connection, "MODE \(room)") + harness.send(connection, "MODE \(room) +b")
    }
    for other in users { lines += harness.send(connection, "HISTORY @\(other) 100") }
    for word in ["alpha", "beta", "gamma", "bob"] {
      lines += harness.send(connection, "SEARCH * 100 \(word)")
    }
    return lines
  }

  /// When each pending message falls due, in order, as the heap gives
  /// them: a message the heap lost, or holds twice, shows.
  private static func dueInstants(_ scheduler: Scheduler) -> [String] {
    var heap = scheduler
    var instants: [String] = []
    while let due = heap.earliestDue() {
      for message in heap.popDue(now: due, atMost: 4096) {
        instants.append("\(message.id)@\(due)")
        heap.remove(message.id)
      }
    }
    return instants
  }

  /// The session memberships that the steps of a rolled-back window leave:
  /// a session is in a room as it was at the window's start unless a step
  /// that wrote no record (a QUIT, a PART of one of two sessions) changed
  /// that; what the steps whose records are gone changed (a JOIN that made
  /// the room the user's, a PART or KICK that took it from them) is undone.
  /// One exception: a session that entered a room by a step that wrote
  /// nothing, because the room was the user's by a record now gone, may
  /// have left it with that record.
  private func checkMemberships() -> String? {
    var expected = windowStart
    var keptEntries: Set<Membership> = []
    for step in window where !step.wrote {
      for (membership, entered) in step.changes {
        if entered {
          expected[membership.connection, default: []].insert(membership.room)
          keptEntries.insert(membership)
        } else {
          expected[membership.connection]?.remove(membership.room)
          keptEntries.remove(membership)
        }
      }
    }
    var wrong: [String] = []
    for (connection, rooms) in memberships().sorted(by: { $0.key < $1.key }) {
      let user = chat.engine.sessions[connection]?.user ?? "?"
      let wanted = expected[connection] ?? []
      let mayHaveLeft = wanted.filter {
        keptEntries.contains(Membership(connection: connection, room: $0))
          && !(windowStart[connection] ?? []).contains($0) && !chat.engine.isHolder(user, of: $0)
      }
      guard !rooms.symmetricDifference(wanted).subtracting(mayHaveLeft).isEmpty else { continue }
      wrong.append(
        "\(connection) (\(user)) is in \(rooms.sorted()), should be in \(wanted.sorted())")
    }
    guard !wrong.isEmpty else { return nil }
    return "sessions' rooms after the rollback:\n" + wrong.joined(separator: "\n")
  }

  private func memberships() -> [ConnectionID: Set<RoomName>] {
    chat.engine.sessions.mapValues(\.rooms)
  }

  // MARK: - Reporting

  /// The steps since the last sync, for a failure's report.
  private var windowDescription: String {
    window.map { "  \($0.wrote ? "*" : " ") \($0.step)" }.joined(separator: "\n")
  }

  /// A snapshot's records as JSON lines, in an order that does not depend
  /// on the order of a dictionary: each conversation's messages together,
  /// oldest first, the conversations by name. A `mode` record other than a
  /// ban's is written with who changed the room's modes last and when
  /// (RoomModes.changedBy), one label that a compacted journal does not
  /// always replay to (a private room's access record makes its creator
  /// an operator again, dated when the access last changed): left out.
  static func canonical(_ snapshot: EngineSnapshot) -> [String] {
    var lines: [String] = []
    var conversations: [String: [String]] = [:]
    snapshot.forEachRecord { record in
      var record = record
      if case .mode(let name, let change, _, _) = record, change.letter != .ban {
        record = .mode(name, change, user: "", at: Timestamp(milliseconds: 0))
      }
      let line = String(decoding: record.jsonLine.dropLast(), as: UTF8.self)
      switch record {
      case .header: return  // ids handed out are never taken back
      case .message(let message, let target):
        let key = ConversationKey(target: target, author: message.author)
        conversations["\(key)", default: []].append(line)
      default: lines.append(line)
      }
    }
    return lines + conversations.keys.sorted().flatMap { conversations[$0]! }
  }

  static func difference(expected: [String], actual: [String]) -> String {
    let missing = expected.filter { !actual.contains($0) }
    let extra = actual.filter { !expected.contains($0) }
    var text = ""
    for line in missing { text += "  - \(line)\n" }
    for line in extra { text += "  + \(line)\n" }
    if text.isEmpty { text = "  (the same lines in another order)\n" }
    return text
  }
}

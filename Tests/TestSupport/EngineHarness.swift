import Broker
import Foundation
import LineProtocol

/// Virtual time for the engine: tests set `now` and nothing ever sleeps.
public final class TestClock: WallClock {
  public var now: Timestamp
  public let timeZone: TimeZone

  public init(_ now: String = "2026-11-30T17:00:00.000Z", timeZone: String = "Europe/Berlin") {
    self.now = Timestamp(rfc3339: now)!
    self.timeZone = TimeZone(identifier: timeZone)!
  }

  public func set(_ time: String) {
    now = Timestamp(rfc3339: time)!
  }
}

/// Records every effect the engine produces, line by line per connection.
public final class RecordingOutput: EngineOutput {
  public var lines: [ConnectionID: [String]] = [:]
  public var closed: Set<ConnectionID> = []
  public var armed: Timestamp?
  public var armCount = 0

  public init() {}

  /// What each line shows of the journal, by its text, latest first wins.
  public var kinds: [String: LineKind] = [:]

  /// The events themselves, per connection, for tests of other codecs.
  public var events: [ConnectionID: [BrokerEvent]] = [:]

  /// The last event object each connection got, to check what is shared.
  public var lastOutgoing: [ConnectionID: Outgoing] = [:]
  /// Connections with their own wire format (IRC): encoded as they are
  /// sent, as the shell does, and kept here instead of in `lines`.
  public var encoders: [ConnectionID: (Outgoing, LineKind) -> [UInt8]] = [:]
  public var encoded: [ConnectionID: [UInt8]] = [:]

  public func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind) {
    if let encoder = encoders[connection] {
      encoded[connection, default: []] += encoder(outgoing, kind)
      return
    }
    events[connection, default: []].append(outgoing.event)
    lastOutgoing[connection] = outgoing
    // An event the line protocol does not show (an IRC TAGMSG) is no line.
    guard !outgoing.line.isEmpty else { return }
    let text = String(decoding: outgoing.line.dropLast(), as: UTF8.self)
    lines[connection, default: []].append(text)
    kinds[text] = kind
  }

  public func close(_ connection: ConnectionID) {
    closed.insert(connection)
  }

  public func armTimer(at due: Timestamp?) {
    armed = due
    armCount += 1
  }

  /// Everything sent to `connection` since the last call.
  public func take(_ connection: ConnectionID) -> [String] {
    defer { lines[connection] = [] }
    return lines[connection] ?? []
  }
}

/// An in-memory journal that can be told to fail, like a full disk.
public final class MemoryJournal: JournalSink {
  public var records: [JournalRecord] = []
  public var failing = false

  public init() {}

  public func append(_ records: [JournalRecord]) throws(StorageError) {
    if failing { throw StorageError(reason: "No space left on device") }
    self.records += records
  }
}

public final class FakeUsers: UserDirectory {
  public var names: Set<String>
  /// How many lookups there were (each is a getpwnam_r on a real host).
  public private(set) var lookups = 0
  public init(_ names: Set<String>) { self.names = names }
  public func userExists(_ name: String) -> Bool {
    lookups += 1
    return names.contains(name)
  }
}

/// Unix groups as a test says: each user's groups, changed at will (a
/// user taken out of a group is out at their next JOIN, new session, or
/// read once the engine's answer is 60 s old).
public final class FakeGroups: GroupDirectory {
  public var members: [String: Set<String>] = [:]
  /// How many lookups there were.
  public private(set) var lookups = 0
  public init() {}
  public func groups(of user: String) -> Set<String> {
    lookups += 1
    return Set(members.compactMap { $0.value.contains(user) ? $0.key : nil })
  }
}

/// An engine with fake connections: `connect("alice")` gives a connection
/// id, `say(conn, "JOIN #a")` feeds a line and returns what came back to it.
public final class EngineHarness {
  public let clock: TestClock
  public let output = RecordingOutput()
  public let journal: MemoryJournal
  public let users = FakeUsers(["alice", "bob", "carol"])
  /// Group `ops` holds alice and bob, not carol.
  public let groups = FakeGroups()
  public let engine: Engine
  private var nextConnection = 1

  public init(
    limits: Limits = Limits(), clock: TestClock = TestClock(),
    journal: MemoryJournal = MemoryJournal(), log: Logger = Logger(sink: nil)
  ) {
    self.clock = clock
    self.journal = journal
    groups.members = ["ops": ["alice", "bob"]]
    engine = Engine(
      limits: limits, clock: clock, users: users, journal: journal, groups: groups, log: log)
    engine.attach(output)
  }

  /// Opens a connection for `user` and drops its HELLO.
  @discardableResult
  public func connect(_ user: String) -> ConnectionID {
    let id = ConnectionID(nextConnection)
    nextConnection += 1
    engine.connect(id, user: user)
    _ = output.take(id)
    return id
  }

  /// Sends one request line, decoded by the line protocol's codec as the
  /// shell does; returns the lines the same connection got.
  @discardableResult
  public func send(_ connection: ConnectionID, _ line: String) -> [String] {
    feed(.line(line), from: connection)
    return output.take(connection)
  }

  /// One framed input (a line or a framing error) through the line codec.
  public func feed(_ frame: Frame, from connection: ConnectionID) {
    switch LineCodec.request(from: frame, maximumLineBytes: engine.limits.lineBytes) {
    case .success(let request): engine.receive(request, from: connection)
    case .failure(let error): engine.refuse(error, from: connection)
    }
  }

  /// Moves the clock and fires the timer as the shell would when armed:
  /// again while it is armed for what is due already, as the engine asks
  /// when a step's budget did not reach all that fell due.
  public func advance(to time: String) {
    clock.set(time)
    var fired = 0
    while let armed = output.armed, armed <= clock.now, fired < 100_000 {
      let count = output.armCount
      engine.timerFired()
      fired += 1
      if output.armCount == count { break }  // not armed again
    }
  }

  /// A fresh engine replaying this one's journal, as a restart would.
  public func restarted() -> EngineHarness {
    let copy = MemoryJournal()
    let harness = EngineHarness(limits: engine.limits, clock: clock, journal: copy)
    for record in journal.records { harness.engine.replay(record) }
    copy.records = journal.records
    harness.engine.finishReplay()
    return harness
  }
}

/// The fields of an `OK SAY <id> <time>` or `OK SAYAT <id> <due>` reply.
public func okID(_ reply: [String]) -> String {
  let words = reply.last?.split(separator: " ") ?? []
  return words.count > 2 ? String(words[2]) : ""
}

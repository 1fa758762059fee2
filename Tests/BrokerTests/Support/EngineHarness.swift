import Broker
import Foundation
import LineProtocol

/// Virtual time for the engine: tests set `now` and nothing ever sleeps.
final class TestClock: WallClock {
  var now: Timestamp
  let timeZone: TimeZone

  init(_ now: String = "2026-11-30T17:00:00.000Z", timeZone: String = "Europe/Berlin") {
    self.now = Timestamp(rfc3339: now)!
    self.timeZone = TimeZone(identifier: timeZone)!
  }

  func set(_ time: String) {
    now = Timestamp(rfc3339: time)!
  }
}

/// Records every effect the engine produces, line by line per connection.
final class RecordingOutput: EngineOutput {
  var lines: [ConnectionID: [String]] = [:]
  var closed: Set<ConnectionID> = []
  var armed: Timestamp?
  var armCount = 0

  /// What each line shows of the journal, by its text, latest first wins.
  var kinds: [String: LineKind] = [:]

  /// The events themselves, per connection, for tests of other codecs.
  var events: [ConnectionID: [BrokerEvent]] = [:]

  /// The last event object each connection got, to check what is shared.
  var lastOutgoing: [ConnectionID: Outgoing] = [:]
  /// Connections with their own wire format (IRC): encoded as they are
  /// sent, as the shell does, and kept here instead of in `lines`.
  var encoders: [ConnectionID: (Outgoing) -> [UInt8]] = [:]
  var encoded: [ConnectionID: [UInt8]] = [:]

  func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind) {
    if let encoder = encoders[connection] {
      encoded[connection, default: []] += encoder(outgoing)
      return
    }
    events[connection, default: []].append(outgoing.event)
    lastOutgoing[connection] = outgoing
    let text = String(decoding: outgoing.line.dropLast(), as: UTF8.self)
    lines[connection, default: []].append(text)
    kinds[text] = kind
  }

  func close(_ connection: ConnectionID) {
    closed.insert(connection)
  }

  func armTimer(at due: Timestamp?) {
    armed = due
    armCount += 1
  }

  /// Everything sent to `connection` since the last call.
  func take(_ connection: ConnectionID) -> [String] {
    defer { lines[connection] = [] }
    return lines[connection] ?? []
  }
}

/// An in-memory journal that can be told to fail, like a full disk.
final class MemoryJournal: JournalSink {
  var records: [JournalRecord] = []
  var failing = false

  func append(_ records: [JournalRecord]) throws(StorageError) {
    if failing { throw StorageError(reason: "No space left on device") }
    self.records += records
  }
}

final class FakeUsers: UserDirectory {
  var names: Set<String>
  init(_ names: Set<String>) { self.names = names }
  func userExists(_ name: String) -> Bool { names.contains(name) }
}

/// An engine with fake connections: `connect("alice")` gives a connection
/// id, `say(conn, "JOIN #a")` feeds a line and returns what came back to it.
final class EngineHarness {
  let clock: TestClock
  let output = RecordingOutput()
  let journal: MemoryJournal
  let users = FakeUsers(["alice", "bob", "carol"])
  let engine: Engine
  private var nextConnection = 1

  init(
    limits: Limits = Limits(), clock: TestClock = TestClock(),
    journal: MemoryJournal = MemoryJournal()
  ) {
    self.clock = clock
    self.journal = journal
    engine = Engine(limits: limits, clock: clock, users: users, journal: journal)
    engine.output = output
  }

  /// Opens a connection for `user` and drops its HELLO.
  @discardableResult
  func connect(_ user: String) -> ConnectionID {
    let id = ConnectionID(nextConnection)
    nextConnection += 1
    engine.connect(id, user: user)
    _ = output.take(id)
    return id
  }

  /// Sends one request line, decoded by the line protocol's codec as the
  /// shell does; returns the lines the same connection got.
  @discardableResult
  func send(_ connection: ConnectionID, _ line: String) -> [String] {
    feed(.line(line), from: connection)
    return output.take(connection)
  }

  /// One framed input (a line or a framing error) through the line codec.
  func feed(_ frame: Frame, from connection: ConnectionID) {
    switch LineCodec.request(from: frame, maximumLineBytes: engine.limits.lineBytes) {
    case .success(let request): engine.receive(request, from: connection)
    case .failure(let error): engine.refuse(error, from: connection)
    }
  }

  /// Moves the clock and fires the timer as the shell would when armed.
  func advance(to time: String) {
    clock.set(time)
    if let armed = output.armed, armed <= clock.now {
      engine.timerFired()
    }
  }

  /// A fresh engine replaying this one's journal, as a restart would.
  func restarted() -> EngineHarness {
    let copy = MemoryJournal()
    let harness = EngineHarness(limits: engine.limits, clock: clock, journal: copy)
    for record in journal.records { harness.engine.replay(record) }
    copy.records = journal.records
    harness.engine.finishReplay()
    return harness
  }
}

/// The fields of an `OK SAY <id> <time>` or `OK SAYAT <id> <due>` reply.
func okID(_ reply: [String]) -> String {
  let words = reply.last?.split(separator: " ") ?? []
  return words.count > 2 ? String(words[2]) : ""
}

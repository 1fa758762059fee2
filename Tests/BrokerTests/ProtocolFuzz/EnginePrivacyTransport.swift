import Broker
import Foundation
import LineProtocol
import ProtocolFuzz
import TestSupport

/// The privacy scenario of `chatfuzz --privacy` on the engine itself, on
/// virtual time: line sessions on an ``EngineHarness``, IRC sessions on an
/// ``IRCHarness`` over it, Unix groups in its ``FakeGroups``, a restart as
/// a replay of its journal. Every request moves the clock a millisecond, so
/// that what the model records comes in order; after each, every session's
/// lines go to the oracle.
final class EnginePrivacyTransport: PrivacyTransport {
  private(set) var engine: EngineHarness
  private var irc: IRCHarness
  let oracle: PrivacyOracle
  private var sessions: [Int: (session: PrivacySession, connection: ConnectionID)] = [:]
  private var nextSession = 1

  init(oracle: PrivacyOracle, users: [String]) {
    self.oracle = oracle
    engine = EngineHarness()
    engine.users.names.formUnion(users + ["root"])
    irc = IRCHarness(engine)
  }

  var now: Double { Double(engine.clock.now.milliseconds) / 1000 }
  var stopping: Bool { false }
  var epoch: Int { 0 }

  func open(_ user: String, _ wire: PrivacyWire, capabilities: [String]) -> PrivacySession? {
    tick()
    let session = PrivacySession(id: nextSession, user: user, wire: wire)
    nextSession += 1
    oracle.opened(session, at: now)
    switch wire {
    case .line:
      sessions[session.id] = (session, engine.connect(user))
    case .irc:
      let connection = irc.open(user)
      sessions[session.id] = (session, connection)
      // Registration as `chatfuzz --privacy` does it, every line checked:
      // the burst, and the JOIN of each of the user's rooms.
      for line in IRCGenerator.registration(nick: user, capabilities: capabilities) {
        deliver(irc.send(connection, String(decoding: line, as: UTF8.self)), to: session)
      }
    }
    drain()
    return session
  }

  func request(_ line: String, on session: PrivacySession) -> [String]? {
    guard let (_, connection) = sessions[session.id] else { return nil }
    tick()
    oracle.sent(line, on: session, at: now)
    let lines =
      session.wire == .line ? engine.send(connection, line) : irc.send(connection, line)
    deliver(lines, to: session)
    oracle.answered(session)
    drain()
    tick()
    return lines
  }

  func isOpen(_ session: PrivacySession) -> Bool { sessions[session.id] != nil }

  func close(_ session: PrivacySession) {
    guard let (_, connection) = sessions.removeValue(forKey: session.id) else { return }
    drain()
    engine.engine.disconnect(connection)
    oracle.closed(session)
  }

  /// Moves the clock on, firing the timer as the shell would.
  func pass(_ seconds: Double) {
    guard seconds > 0 else { return }
    engine.clock.now = Timestamp(
      milliseconds: engine.clock.now.milliseconds + Int64((seconds * 1000).rounded()))
    if let armed = engine.output.armed, armed <= engine.clock.now { engine.engine.timerFired() }
    drain()
  }

  func makeGroup(_ name: String) -> Bool {
    engine.groups.members[name] = []
    return true
  }

  func setMember(_ user: String, of group: String, _ member: Bool) -> Bool {
    tick()
    if member {
      engine.groups.members[group, default: []].insert(user)
    } else {
      engine.groups.members[group]?.remove(user)
    }
    tick()
    return true
  }

  /// A restart: every session ends, and a new engine replays the journal
  /// (the groups and the users are the system's, and stay).
  func quiet(restart: Bool) -> Bool {
    for (session, _) in sessions.values { close(session) }
    guard restart else { return true }
    let groups = engine.groups.members
    let users = engine.users.names
    engine = engine.restarted()
    engine.groups.members = groups
    engine.users.names = users
    irc = IRCHarness(engine)
    return true
  }

  func loud() {}

  private func tick() { pass(0.001) }

  private func deliver(_ lines: [String], to session: PrivacySession) {
    for line in lines { oracle.received(Array(line.utf8), on: session, at: now) }
  }

  /// What every session got besides its own answers.
  private func drain() {
    for (session, connection) in sessions.values.sorted(by: { $0.session.id < $1.session.id }) {
      let lines =
        session.wire == .line ? engine.output.take(connection) : irc.take(connection)
      deliver(lines, to: session)
    }
  }
}

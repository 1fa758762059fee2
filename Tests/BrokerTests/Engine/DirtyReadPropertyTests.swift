import Broker
import LineProtocol
import ProtocolFuzz
import TestSupport
import Testing

/// "Nothing is shown before it is durable" (chatbroker(7), "Order and
/// durability"), as a property of the engine and the shell together, on
/// virtual time: the dirty-read oracle's scenes (``DirtyReadScene``) play
/// against the engine while this test plays the committer, confirming or
/// failing each sync at random; a line the shell would have delivered
/// (``ShellDelivery``) may never show the fingerprint of a request whose
/// records were rolled back, and every message acknowledged is in the
/// history of the engine a restart replays.
@Suite("Engine: no dirty reads when syncs fail at random")
struct DirtyReadPropertyTests {
  @Test("no delivered line shows a rolled-back change; what was acknowledged survives a restart")
  func noDirtyReads() {
    var findings: [String] = []
    for seed in UInt64(1)...12 {
      findings += play(seed: seed, scenes: 24)
    }
    #expect(findings.isEmpty, "\(findings.count) findings:\n\(findings.joined(separator: "\n"))")
  }

  /// Plays `scenes` scenes, three at a time, with the shell's delivery
  /// and random sync outcomes; returns what went wrong.
  private func play(seed: UInt64, scenes total: Int) -> [String] {
    var random = SeededGenerator(seed: seed)
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let shell = ShellDelivery(engine: chat.engine, journal: chat.journal)
    chat.engine.attach(shell)
    let ledger = DirtyReadLedger(enabled: true)
    let users = ["alice", "bob", "carol"]
    var playing: [(scene: DirtyReadScene, sessions: [ConnectionID])] = []
    var sessionOf: [ConnectionID: (scene: DirtyReadScene, index: Int)] = [:]
    var userOf: [ConnectionID: String] = [:]
    var queue: [(ConnectionID, String)] = []
    shell.delivered = { connection, line in
      let bytes = Array(line.utf8)
      let viewer = userOf[connection] ?? "?"
      ledger.saw(
        bytes, viewer: viewer, session: "\(viewer)'s connection \(connection) (seed \(seed))")
      guard let (scene, index) = sessionOf[connection] else { return }
      let sessions = playing.first { $0.scene === scene }?.sessions ?? []
      queue += scene.received(bytes, on: index).map { (sessions[$0.session], $0.line) }
    }
    var started = 0
    for _ in 0..<100_000 {
      while playing.count < 3 && started < total {
        started += 1
        var cast = users.shuffled(using: &random)
        if random.chance(20) { cast[2] = cast[0] }
        let scene = DirtyReadScene(
          cast: cast.map { DirtyReadRole(user: $0, irc: false) }, ledger: ledger, random: &random)
        let sessions = cast.map { chat.connect($0) }
        for (index, session) in sessions.enumerated() {
          sessionOf[session] = (scene, index)
          userOf[session] = cast[index]
        }
        playing.append((scene, sessions))
        queue += scene.begin().map { (sessions[$0.session], $0.line) }
      }
      if playing.isEmpty { break }
      // A few requests reach the engine, then maybe a sync returns.
      for _ in 0..<Int.random(in: 1...4, using: &random) where !queue.isEmpty {
        let (connection, line) = queue.removeFirst()
        chat.feed(.line(line), from: connection)
      }
      if queue.isEmpty || random.chance(40) {
        if random.chance(25) { shell.syncFailed() } else { shell.synced() }
      }
      playing.removeAll { $0.scene.finished }
    }
    var findings = ledger.findings.all.map { "[\($0.category)] \($0.summary): \($0.detail)" }
    findings += missingAfterRestart(ledger.acknowledgedMessages, chat)
    return findings
  }

  /// The acknowledged messages a restarted engine's HISTORY lacks.
  private func missingAfterRestart(
    _ messages: [DirtyReadLedger.AcknowledgedMessage], _ chat: EngineHarness
  ) -> [String] {
    let restarted = chat.restarted()
    var missing: [String] = []
    for message in messages {
      let reader = restarted.connect(message.reader)
      let history = restarted.send(reader, "HISTORY \(message.room) 1000")
      if !history.contains(where: { $0.hasPrefix("HIST ") && $0.hasSuffix(message.token) }) {
        missing.append("[durability] \(message.token) in \(message.room) is lost: \(history)")
      }
    }
    return missing
  }
}

/// The shell's delivery (Server+Output), by each line's ``LineKind``: a
/// line is delivered at once when nothing of its connection is held and
/// it waits for nothing (stateless); otherwise it is held, to leave
/// once the journal's records written before it are durable
/// (``synced()``). When a sync fails (``syncFailed()``) the engine rolls
/// the unsynced records back and every held line is settled in order:
/// stateless and lasting lines leave, revealing ones are dropped, a
/// request's outcome becomes `ERR <VERB> STORAGE`, and a request that
/// wrote nothing is answered again.
final class ShellDelivery: EngineOutput {
  private struct Held {
    var journalCount: Int
    var kind: LineKind
    var line: String
  }

  private let engine: Engine
  private let journal: MemoryJournal
  private var held: [ConnectionID: [Held]] = [:]
  private var durableCount = 0
  /// Called with each line the shell would write to its connection.
  var delivered: (ConnectionID, String) -> Void = { _, _ in }

  init(engine: Engine, journal: MemoryJournal) {
    self.engine = engine
    self.journal = journal
  }

  func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind) {
    guard !outgoing.line.isEmpty else { return }
    enqueue(String(decoding: outgoing.line.dropLast(), as: UTF8.self), to: connection, kind: kind)
  }

  private func enqueue(_ line: String, to connection: ConnectionID, kind: LineKind) {
    let required = kind.waitsForSync ? journal.records.count : 0
    if held[connection, default: []].isEmpty && required <= durableCount {
      delivered(connection, line)
    } else {
      held[connection, default: []].append(Held(journalCount: required, kind: kind, line: line))
    }
  }

  func close(_ connection: ConnectionID) {}
  func armTimer(at due: Timestamp?) {}

  /// The sync covering every record written returned.
  func synced() {
    engine.recordsSynced(engine.unsyncedRecordCount)
    durableCount = journal.records.count
    for connection in held.keys.sorted() {
      var lines = held[connection] ?? []
      while let first = lines.first, first.journalCount <= durableCount {
        lines.removeFirst()
        delivered(connection, first.line)
      }
      held[connection] = lines.isEmpty ? nil : lines
    }
  }

  /// The sync failed: the unsynced records are cut off the journal and
  /// undone, and the held lines settled.
  func syncFailed() {
    let unsynced = engine.unsyncedRecordCount
    engine.rollBack(unsynced)
    journal.records.removeLast(unsynced)
    durableCount = journal.records.count
    let settling = held
    held = [:]
    for connection in settling.keys.sorted() {
      for line in settling[connection] ?? [] {
        switch line.kind {
        case .stateless, .lasting:
          enqueue(line.line, to: connection, kind: .stateless)
        case .revealing:
          continue
        case .outcome(let verb):
          let refusal = BrokerEvent.error(
            verb: verb.rawValue, code: .storage,
            text:
              "the journal could not be synced (Input/output error); nothing was accepted, try again"
          )
          enqueue(
            String(decoding: Outgoing(refusal).line.dropLast(), as: UTF8.self), to: connection,
            kind: .stateless)
        case .answer(let request):
          engine.answerAgain(request, for: connection)
        }
      }
    }
  }
}

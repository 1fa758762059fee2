import Broker
import Glibc

/// The dirty-read oracle of `chatfuzz --failing-syncs`: while the
/// fuzzing clients stress a broker whose syncs fail at random
/// (``FailingSyncs``), it plays ``DirtyReadScene``s, a few at a time, each
/// with three fresh sessions of the fuzzer's users on the run's wires, and
/// checks every line they and the fuzzing clients get against the
/// ``DirtyReadLedger``. At the end it restarts the broker on its journal
/// and looks for every message that was acknowledged
/// (``checkDurability(_:switchPath:)``).
final class DirtyReadOracle: @unchecked Sendable {
  let shared: SharedState
  let socketPath: String
  let ircSocketPath: String
  /// The fuzzer's own user first, then the others it may speak as.
  let users: [String]
  let ircShare: Int
  private var random: SplitMix64
  private var scenes: [Playing] = []
  private var generation = 0
  private(set) var scenesPlayed = 0
  private(set) var scenesAbandoned = 0
  /// The fuzzer's own login name, looked up once: every line of a
  /// session of its own is checked for it.
  static let ownUser = ownUserName()
  /// Scenes at once: enough that syncs carry several at a time.
  static let concurrentScenes = 4
  /// A scene with no line for this long is given up (the freeze is
  /// another oracle's business).
  static let patience = 20.0

  /// A scene and its sessions' connections.
  private final class Playing {
    let scene: DirtyReadScene
    let connections: [FuzzConnection]
    var lastProgress = monotonicSeconds()

    init(scene: DirtyReadScene, connections: [FuzzConnection]) {
      self.scene = scene
      self.connections = connections
    }
  }

  init(
    shared: SharedState, socketPath: String, ircSocketPath: String, users: [String],
    ircShare: Int, random: SplitMix64
  ) {
    self.shared = shared
    self.socketPath = socketPath
    self.ircSocketPath = ircSocketPath
    self.users = users
    self.ircShare = ircShare
    self.random = random
  }

  var ledger: DirtyReadLedger { shared.dirtyReads }

  func run() {
    generation = shared.generation.load(ordering: .relaxed)
    while !shared.stopping.load(ordering: .relaxed) {
      let now = shared.generation.load(ordering: .relaxed)
      if shared.paused.load(ordering: .relaxed) || now != generation {
        // The broker crashed: what it acknowledged may be in a journal
        // the run no longer uses.
        abandonAll()
        ledger.forgetAcknowledged()
        generation = now
        sleepSeconds(0.02)
        continue
      }
      while scenes.count < Self.concurrentScenes, let playing = startScene() {
        scenes.append(playing)
      }
      pollOnce()
      let deadline = monotonicSeconds() - Self.patience
      for playing in scenes where !playing.scene.finished && playing.lastProgress < deadline {
        playing.scene.abandon()
        scenesAbandoned += 1
      }
      scenesPlayed += scenes.filter(\.scene.finished).count
      scenes.removeAll { $0.scene.finished }
      if scenes.isEmpty { sleepSeconds(0.01) }
    }
    abandonAll()
  }

  private func abandonAll() {
    for playing in scenes { playing.scene.abandon() }
    scenes.removeAll()
  }

  /// Three roles from the users, other users where there are, each on
  /// IRC with the run's share.
  private func startScene() -> Playing? {
    let owner = random.pick(users)
    let others = users.filter { $0 != owner }
    let member = others.isEmpty ? owner : random.pick(others)
    let rest = others.filter { $0 != member }
    let outsider = rest.isEmpty ? random.pick(users) : random.pick(rest)
    let cast = [owner, member, outsider].map {
      DirtyReadRole(user: $0, irc: Int.random(in: 0..<100, using: &random) < ircShare)
    }
    var connections: [FuzzConnection] = []
    for role in cast {
      let user = role.user == users[0] ? nil : role.user
      guard
        let connection = try? FuzzConnection(
          path: role.irc ? ircSocketPath : socketPath, behaviour: .chatter, user: user,
          generation: generation, lifetime: .infinity, wire: role.irc ? .irc : .line)
      else {
        sleepSeconds(0.01)
        return nil
      }
      connections.append(connection)
    }
    let playing = Playing(
      scene: DirtyReadScene(cast: cast, ledger: ledger, random: &random), connections: connections)
    send(playing.scene.begin(), in: playing)
    return playing
  }

  private func send(_ sends: [DirtyReadScene.Send], in playing: Playing) {
    for send in sends {
      let connection = playing.connections[send.session]
      connection.outbox += Array(send.line.utf8) + (connection.wire.isIRC ? [0x0D, 0x0A] : [0x0A])
    }
    for connection in Set(sends.map(\.session)).map({ playing.connections[$0] }) {
      connection.writeSome()
    }
  }

  private func pollOnce() {
    let all = scenes.flatMap { playing in playing.connections.indices.map { (playing, $0) } }
    var pollers = all.map { playing, session in
      let connection = playing.connections[session]
      return pollfd(
        fd: connection.fd,
        events: Int16(POLLIN) | (connection.hasOutput ? Int16(POLLOUT) : 0), revents: 0)
    }
    guard poll(&pollers, nfds_t(pollers.count), 10) > 0 else { return }
    for ((playing, session), poller) in zip(all, pollers) where poller.revents != 0 {
      guard !playing.scene.finished else { continue }
      let connection = playing.connections[session]
      connection.writeSome()
      var lines: [[UInt8]] = []
      let ended = connection.readSome(into: &lines)
      let role = playing.scene.cast[session]
      for line in lines {
        playing.lastProgress = monotonicSeconds()
        ledger.saw(
          line, viewer: role.user,
          session:
            "\(role.user)'s \(role.irc ? "IRC" : "line protocol") session \(session) of the scene in \(playing.scene.room)"
        )
        send(playing.scene.received(line, on: session), in: playing)
      }
      if ended || connection.sendFailed { playing.scene.abandon() }
    }
  }

  // MARK: - After the run

  /// Every acknowledged message is durable: the broker is stopped (the
  /// disk fails no more), started again on the same journal, and each
  /// room's HISTORY, read by a user who may, holds every message whose
  /// `OK` came, with its id; its lines pass the ledger too, so a refused
  /// message found there is a dirty read. Leaves the broker running.
  func checkDurability(_ owned: OwnedBroker, switchPath: String) {
    FailingSyncs.turnOff(switchPath)
    owned.stopCleanly(recordingIn: shared.findings)
    guard owned.startAgain(after: "the dirty-read run", recordingIn: shared.findings) else {
      return
    }
    let messages = ledger.acknowledgedMessages
    for (reader, mine) in Dictionary(grouping: messages, by: \.reader) {
      guard
        let connection = try? FuzzConnection(
          path: owned.socketPath, behaviour: .chatter, user: reader == users[0] ? nil : reader,
          generation: 0, lifetime: .infinity)
      else { continue }
      for (room, expected) in Dictionary(grouping: mine, by: \.room) {
        let lines = ask(connection, "HISTORY \(room) 1000")
        for line in lines {
          ledger.saw(line, viewer: reader, session: "\(reader)'s HISTORY after the restart")
        }
        let texts = lines.map { String(decoding: $0, as: UTF8.self) }
        for message in expected where !texts.contains(where: { Self.shows($0, message) }) {
          shared.findings.record(
            Finding(
              category: "durability",
              summary: "an acknowledged message is missing after a restart",
              detail:
                "\(message.token) (id \(message.id ?? "not told")) in \(room): HISTORY answered \(texts.suffix(3))"
            ))
        }
      }
    }
  }

  /// Whether a HISTORY line is `message`: its text ends with the token,
  /// and its id is the one acknowledged, when that was told.
  private static func shows(_ line: String, _ message: DirtyReadLedger.AcknowledgedMessage) -> Bool
  {
    guard line.hasPrefix("HIST "), line.hasSuffix(message.token) else { return false }
    guard let id = message.id else { return true }
    return line.split(separator: " ").dropFirst(2).first == Substring(id)
  }

  /// Sends `request` and reads up to its final reply (bounded: 10 s).
  private func ask(_ connection: FuzzConnection, _ request: String) -> [[UInt8]] {
    connection.outbox += Array(request.utf8) + [0x0A]
    var received: [[UInt8]] = []
    let deadline = monotonicSeconds() + 10
    while monotonicSeconds() < deadline {
      connection.writeSome()
      var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&poller, 1, 50)
      var lines: [[UInt8]] = []
      let ended = connection.readSome(into: &lines)
      for line in lines where !line.starts(with: Array("HELLO ".utf8)) {
        received.append(line)
        if line.starts(with: Array("OK ".utf8)) || line.starts(with: Array("ERR ".utf8)) {
          return received
        }
      }
      if ended { break }
    }
    return received
  }
}

import Broker
import Glibc

/// One thread's share of the fuzzing connections, served with `poll(2)`:
/// it keeps `slots` connections open, each with a random behaviour and a
/// short life, feeds them requests and checks every line that comes back.
final class Worker: @unchecked Sendable {
  let socketPath: String
  let slots: Int
  /// The Unix user of each slot; nil is the fuzzer's own.
  let users: [String?]
  let shared: SharedState
  let behaviours: [Behaviour]
  private var generator: RequestGenerator
  /// IRC clients: what share of the connections, where, and their lines.
  private var irc: IRCWorkerSettings?
  /// Checks every line against who may read what (`chatfuzz --privacy`).
  private let privacy: PrivacyOracle?
  /// Line-protocol clients over the web door: what share, and its port.
  private let web: WebWorkerSettings?
  private var connections: [FuzzConnection?]
  /// Findings about connections that ended, held back a moment: if the
  /// broker crashed meanwhile, the crash is the finding, not these.
  private var heldBack:
    [(
      at: Double, generation: Int, violation: Violation, behaviour: String,
      capabilities: [String], tcp: Bool
    )] = []

  init(
    socketPath: String, slots: Int, users: [String?], shared: SharedState,
    behaviours: [Behaviour], generator: RequestGenerator, irc: IRCWorkerSettings? = nil,
    privacy: PrivacyOracle? = nil, web: WebWorkerSettings? = nil
  ) {
    self.irc = irc
    self.web = web
    self.privacy = privacy
    self.behaviours = behaviours
    self.socketPath = socketPath
    self.slots = slots
    self.users = users
    self.shared = shared
    self.generator = generator
    connections = Array(repeating: nil, count: slots)
  }

  func run() {
    while !shared.stopping.load(ordering: .relaxed) {
      if shared.paused.load(ordering: .relaxed) {
        connections = Array(repeating: nil, count: slots)
        heldBack.removeAll()
        sleepSeconds(0.02)
        continue
      }
      openMissing()
      for connection in connections.compactMap({ $0 }) { feed(connection) }
      pollOnce()
      endDue()
      releaseHeldBack(olderThan: 1.0)
    }
    connections = Array(repeating: nil, count: slots)
    releaseHeldBack(olderThan: 0)
  }

  // MARK: - Opening and feeding

  private func openMissing() {
    let generation = shared.generation.load(ordering: .relaxed)
    for slot in 0..<slots {
      if let connection = connections[slot], connection.generation != generation {
        connections[slot] = nil
      }
      guard connections[slot] == nil else { continue }
      let behaviour = Behaviour.random(from: behaviours, using: &generator.random)
      let lifetime = Double.random(in: 0.2...4, using: &generator.random)
      let user = users[slot % users.count]
      do {
        if var irc, Int.random(in: 0..<100, using: &generator.random) < irc.share {
          // Only the fuzzer's own user connects over TCP: connecting as
          // another is for Unix sockets (``connectUnixSocket(_:as:)``).
          let tcp = irc.endpoints.tcpPort != nil && user == nil && generator.random.chance(50)
          let capabilities = irc.generator.capabilitySet()
          let connection = try FuzzConnection(
            path: irc.endpoints.socketPath, behaviour: behaviour, user: user,
            generation: generation, lifetime: lifetime, wire: tcp ? .ircTCP : .irc,
            tcpPort: irc.endpoints.tcpPort ?? 0, capabilities: capabilities, users: irc.users)
          let nick = user ?? irc.users[0]
          connection.queue(
            IRCGenerator.registration(nick: nick, capabilities: capabilities), shared: shared)
          self.irc = irc
          if var checker = connection.checker as? IRCReplyChecker {
            checker.wantsSuspects = { [shared] kind in
              shared.ircSuspects.withLock { $0[kind] == nil }
            }
            connection.checker = checker
          }
          connections[slot] = connection
        } else if let web, let user, Int.random(in: 0..<100, using: &generator.random) < web.share {
          // A page of one of the users (root's and the fuzzer's own are
          // refused at the door), with a token of theirs made just now.
          let token = try WebDoorToken.mint(socketPath: socketPath, user: user)
          connections[slot] = try FuzzConnection(
            path: socketPath, behaviour: behaviour, user: user, generation: generation,
            lifetime: lifetime, wire: .web, tcpPort: web.port, webToken: token)
          shared.webConnectionsOpened.add(1, ordering: .relaxed)
        } else {
          connections[slot] = try FuzzConnection(
            path: socketPath, behaviour: behaviour, user: user,
            generation: generation, lifetime: lifetime)
        }
        shared.connectionsOpened.add(1, ordering: .relaxed)
      } catch {
        shared.connectFailures.add(1, ordering: .relaxed)
        sleepSeconds(0.01)
      }
    }
  }

  private func feed(_ connection: FuzzConnection) {
    let now = monotonicSeconds()
    if !connection.windingDown && now >= connection.windDownAt {
      windDown(connection, now: now)
      return
    }
    guard !connection.windingDown, !connection.hasOutput else { return }
    if connection.wire.isIRC, var irc {
      irc.generator.speaker = speaker(of: connection, in: irc)
      feed(connection, with: &irc.generator)
      self.irc = irc
      return
    }
    feed(connection, with: &generator)
  }

  /// Whose tokens `connection` sends: its Unix user's (the fuzzer's own is 0).
  private func speaker(of connection: FuzzConnection, in irc: IRCWorkerSettings) -> Int {
    connection.user.flatMap { irc.users.firstIndex(of: $0) } ?? 0
  }

  private func feed(_ connection: FuzzConnection, with generator: inout some LineSource) {
    switch connection.behaviour {
    case .chatter:
      if connection.checker.unanswered < 100 {
        let count = Int.random(in: 1...20, using: &generator.random)
        connection.queue((0..<count).map { _ in generator.line() }, shared: shared)
      }
    case .trickling:
      // One short line at a time, sent a few bytes every 10 ms: a longer
      // queue would outlast the connection's life many times over.
      connection.queue([generator.shortLine()], shared: shared)
    case .flooder:
      if connection.checker.unanswered < 2000 {
        let flood = generator.flood()
        connection.lastFlood = describe(flood)
        connection.queue(flood, shared: shared, rememberAll: false)
      }
    case .nonReading:
      if connection.outbox.count < 4 << 20 {
        let flood = generator.flood()
        connection.lastFlood = describe(flood)
        connection.queue(flood, shared: shared, rememberAll: false)
      }
    case .halfClosing, .vanishing:
      if connection.outbox.isEmpty {
        let count = Int.random(in: 1...50, using: &generator.random)
        connection.queue((0..<count).map { _ in generator.line() }, shared: shared)
      }
    }
  }

  private func describe(_ flood: [[UInt8]]) -> String {
    guard let first = flood.first else { return "nothing" }
    return "\(flood.count) pipelined requests like \(String(decoding: first, as: UTF8.self))"
  }

  /// The end of a connection's life: readers shut down their writing side
  /// and wait for the broker to answer everything and close; the others just
  /// go away.
  private func windDown(_ connection: FuzzConnection, now: Double) {
    connection.windingDown = true
    if connection.behaviour == .halfClosing && generator.random.chance(40) {
      // A last line without LF still counts as a line (chatbroker(7)).
      var last = generator.line()
      if connection.wire.isIRC, var irc {
        // In this connection's user's name, like every line it sends: its
        // token must be its own, or the identity check sees a forgery.
        irc.generator.speaker = speaker(of: connection, in: irc)
        last = irc.generator.next()
        self.irc = irc
      }
      connection.queue([last], shared: shared, lastWithoutNewline: true)
    }
    if connection.behaviour.reads {
      connection.silence.windDown(at: now)
    } else {
      connection.finished = true
    }
  }

  // MARK: - I/O

  private func pollOnce() {
    let live = connections.indices.filter { connections[$0] != nil }
    var pollers = live.map { slot -> pollfd in
      let connection = connections[slot]!
      var events: Int32 = 0
      if connection.behaviour.reads { events |= Int32(POLLIN) }
      if connection.hasOutput && !connection.sendFailed { events |= Int32(POLLOUT) }
      return pollfd(fd: connection.fd, events: Int16(events), revents: 0)
    }
    let ready = poll(&pollers, nfds_t(pollers.count), 10)
    guard ready > 0 else { return }
    trickle()
    for (index, slot) in live.enumerated() where pollers[index].revents != 0 {
      guard let connection = connections[slot] else { continue }
      let events = Int32(pollers[index].revents)
      if connection.behaviour != .trickling
        && (events & Int32(POLLOUT) != 0 || events & Int32(POLLERR | POLLHUP) != 0)
      {
        connection.writeSome()
      }
      if connection.behaviour.reads && events & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
        read(connection)
        trickle()
      }
    }
    // A reader winding down with nothing left to send half-closes at once.
    for connection in connections.compactMap({ $0 })
    where connection.windingDown && connection.behaviour.reads && !connection.halfClosed
      && !connection.hasOutput
    {
      halfClose(connection)
    }
  }

  /// Trickling clients send their next 1 to 3 bytes, each at most every
  /// 10 ms: called between the reads of the other connections, so that
  /// their pace does not depend on how long checking a flood takes.
  private func trickle() {
    let now = monotonicSeconds()
    for connection in connections.compactMap({ $0 })
    where connection.behaviour == .trickling && connection.hasOutput
      && now - connection.lastTrickle >= 0.01
    {
      connection.lastTrickle = now
      connection.writeSome(limit: Int.random(in: 1...3, using: &generator.random))
    }
  }

  /// Shuts the writing side; the broker has 15 s of silence from now to
  /// answer the rest and close.
  private func halfClose(_ connection: FuzzConnection) {
    shutdown(connection.fd, Int32(SHUT_WR))
    connection.silence.halfClose(at: monotonicSeconds())
  }

  private func read(_ connection: FuzzConnection) {
    var lines: [[UInt8]] = []
    let ended = connection.readSome(into: &lines)
    if let violation = connection.webViolation {
      connection.webViolation = nil
      shared.findings.record(
        Finding(
          category: "contract", summary: "the web door broke the WebSocket's rules",
          detail: "\(violation) (a \(connection.kind) client)"))
    }
    // A reader that still gets answers is not frozen, however much it asked
    // for: the bound is on silence, not on the size of a flood (checking a
    // million HISTORY lines takes this process longer than the broker).
    if !lines.isEmpty { connection.silence.received(at: monotonicSeconds()) }
    shared.linesReceived.add(lines.count, ordering: .relaxed)
    let checkedBefore = connection.checker.repliesChecked
    for line in lines {
      privacy?.received(line, on: connection)
      if connection.wire.isIRC {
        irc?.generator.learn(line)
      } else {
        generator.learn(line)
      }
      shared.dirtyReads.saw(
        line, viewer: connection.user ?? DirtyReadOracle.ownUser,
        session: "a \(connection.kind) client")
      for violation in connection.checker.received(line) {
        report(violation, on: connection)
      }
    }
    shared.repliesChecked.add(
      connection.checker.repliesChecked - checkedBefore, ordering: .relaxed)
    if connection.inbox.count > 1 << 20 {
      shared.findings.record(
        Finding(
          category: "contract", summary: "a line from the broker longer than 1 MiB",
          detail: String(decoding: connection.inbox.prefix(100), as: UTF8.self)))
      connection.inbox.removeAll()
    }
    if ended { streamEnded(connection) }
  }

  /// Records a violation; for IRC, whose replies name no request, keeps
  /// the first sighting's suspects to find the line that shows it again.
  private func report(_ violation: Violation, on connection: FuzzConnection) {
    shared.findings.record(violation, behaviour: connection.kind)
    guard connection.wire.isIRC, !violation.suspects.isEmpty else { return }
    shared.ircSuspects.withLock { known in
      if known[violation.kind] == nil {
        known[violation.kind] = IRCSuspects(
          violation: violation, capabilities: connection.capabilities,
          tcp: connection.wire == .ircTCP)
      }
    }
  }

  private func streamEnded(_ connection: FuzzConnection) {
    connection.finished = true
    let now = monotonicSeconds()
    var violations = connection.checker.endOfStream(halfClosed: connection.halfClosed)
    if let bye = connection.checker.bye, !connection.checker.quitWasAnswered {
      // A client that reads was dropped: chatbroker(7) promises such a
      // client is only read less often.
      violations.append(
        Violation(
          kind: connection.wire.isIRC
            ? "IRC: a client that reads was sent ERROR and dropped"
            : "a client that reads was sent BYE and dropped",
          detail: "\(bye) after \(connection.lastFlood)",
          request: connection.checker.oldestWaiting))
    }
    for violation in violations {
      heldBack.append(
        (
          now, connection.generation, violation, connection.kind, connection.capabilities,
          connection.wire == .ircTCP
        ))
    }
  }

  /// Closes connections that are done, and reports readers the broker
  /// failed to close in time after they half-closed.
  private func endDue() {
    let now = monotonicSeconds()
    for slot in connections.indices {
      guard let connection = connections[slot] else { continue }
      if !connection.finished && connection.silence.isOverdue(at: now) {
        // Findings about time are freezes, not broken replies: the request
        // that waits is a victim, not a cause.
        let unsent = connection.outbox.count - connection.outboxOffset
        shared.findings.record(
          Finding(
            category: "freeze",
            summary: connection.halfClosed
              ? "a reader that half-closed got nothing for 15 s, yet not every answer"
              : "a reader winding down could neither send nor receive for 15 s",
            detail:
              "\(connection.checker.unanswered) requests unanswered, \(unsent) bytes unsent (a \(connection.kind) client)"
          ))
        connection.finished = true
      }
      if connection.finished {
        connections[slot] = nil
      }
    }
  }

  private func releaseHeldBack(olderThan age: Double) {
    let now = monotonicSeconds()
    guard heldBack.contains(where: { now - $0.at >= age }) else { return }
    let generation = shared.generation.load(ordering: .relaxed)
    // A broker that no longer accepts connections died: its crash is the
    // finding, not what its connections saw as it went.
    let alive = UnixSocket.isLive(socketPath)
    heldBack.removeAll { held in
      guard now - held.at >= age else { return false }
      if alive && held.generation == generation && !shared.paused.load(ordering: .relaxed) {
        shared.findings.record(held.violation, behaviour: held.behaviour)
        if !held.violation.suspects.isEmpty {
          shared.ircSuspects.withLock { known in
            if known[held.violation.kind] == nil {
              known[held.violation.kind] = IRCSuspects(
                violation: held.violation, capabilities: held.capabilities, tcp: held.tcp)
            }
          }
        }
      }
      return true
    }
  }
}

/// The IRC share of a worker's connections (`chatfuzz --wire irc`,
/// `--irc-share`): in percent, where to connect, the users its tokens name
/// (the fuzzer's own first), and its generator.
struct IRCWorkerSettings {
  var share: Int
  var endpoints: IRCEndpoints
  var users: [String]
  var generator: IRCGenerator
}

/// The web door's share of a worker's connections (`chatfuzz --web-share`):
/// in percent of those of the other users, and the door's port.
struct WebWorkerSettings {
  var share: Int
  var port: UInt16
}

/// Where a worker's lines come from: the line protocol's generator or
/// IRC's.
protocol LineSource {
  var random: SplitMix64 { get set }
  mutating func line() -> [UInt8]
  mutating func shortLine(maximumBytes: Int) -> [UInt8]
  mutating func flood() -> [[UInt8]]
}

extension LineSource {
  mutating func shortLine() -> [UInt8] { shortLine(maximumBytes: 256) }
}

extension RequestGenerator: LineSource {}

extension IRCGenerator: LineSource {
  mutating func line() -> [UInt8] { next() }
}

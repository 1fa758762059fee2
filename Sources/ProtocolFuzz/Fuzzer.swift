import Broker
import Foundation
import Glibc
import LineProtocol

/// What to fuzz and for how long.
public struct FuzzConfiguration: Sendable {
  /// The socket of a running broker; or, with `brokerBinary`, where the
  /// fuzzer's own broker listens (chosen by the fuzzer).
  public var socketPath: String?
  /// A chatbroker to start (and restart after a crash) for the run.
  public var brokerBinary: String?
  /// Extra arguments for that broker.
  public var brokerArguments = ["--no-sync"]
  public var seconds = 30.0
  public var connections = 24
  public var seed: UInt64 = 1
  /// Other Unix users some connections speak as (each connection made by
  /// a child with that user's ids, see Posix's `connectUnixSocket`; root
  /// only).
  public var users: [String] = []
  /// The broker's log to scan for traps at the end, for a broker the
  /// fuzzer did not start.
  public var logPath: String?
  /// PING's 99th percentile must stay below this.
  public var latencyLimit = 0.050
  /// The longest step the broker logs must stay below this (seconds):
  /// its bound, chatbroker(8) LOGGING (see ``FreezeOracle``).
  public var stepLimit = 0.010
  public var maximumLineBytes = 4096
  /// Keep the started broker's directory (logs with backtraces, journals).
  public var keepFiles = false
  /// The kinds of misbehaving clients to use, by name (see `behaviourNames`);
  /// all when empty.
  public var behaviours: [String] = []

  /// The percentage of connections that speak IRC (`--wire irc` is 100,
  /// `--irc-share`); the others speak the line protocol.
  public var ircShare = 0
  /// The broker's IRC socket; irc.sock beside `socketPath` when nil.
  public var ircSocketPath: String?
  /// Some IRC clients over loopback TCP: the fuzzer's own broker is started
  /// with `--irc-listen 127.0.0.1:<a free port>`.
  public var tcp = false
  /// The TCP port of a running broker's `--irc-listen`, for `tcp`.
  public var ircTCPPort: UInt16?

  /// The percentage of the other users' connections that speak the line
  /// protocol over the web door (`--web-share`): the fuzzer's own broker
  /// is started with `--web-listen 127.0.0.1:<a free port>`. Root, with
  /// `users`: the door refuses root and the broker's own user.
  public var webShare = 0
  /// The port of a running broker's `--web-listen`, for `webShare`.
  public var webPort: UInt16?

  /// The percentage of the broker's syncs that fail (`--failing-syncs`),
  /// for the dirty-read oracle (``DirtyReadOracle``); nil for none.
  public var failingSyncs: Double?

  /// The privacy oracle (``PrivacyRun``): the users make private and
  /// secret rooms, invite, kick, ban and change groups, and every line any
  /// of them gets must show only what they may read. Root, two users at
  /// least.
  public var privacy = false

  /// The names `behaviours` accepts.
  public static let behaviourNames = Behaviour.allCases.map(\.rawValue)

  public init() {}
}

/// The outcome of a run: counts, PING latency, and the findings.
public struct FuzzReport: Sendable {
  public var configuration: FuzzConfiguration
  public var findings: [Finding]
  public var requestsSent = 0
  public var linesReceived = 0
  public var repliesChecked = 0
  public var connectionsOpened = 0
  /// Of those, the pages opened through the web door (`--web-share`).
  public var webConnectionsOpened = 0
  public var crashes = 0
  /// What the privacy oracle's scenario did (`privacy`).
  public var privacySummary: String?
  /// The started broker's directory, when kept.
  public var brokerDirectory: String?
  /// PING round trips of the well-behaved client, in seconds, sorted.
  public var latencies: [Double] = []
  /// What the oracles did, a line each (scenes played, requests refused).
  public var oracleNotes: [String] = []

  public func latency(percentile: Double) -> Double? {
    guard !latencies.isEmpty else { return nil }
    let index = min(
      latencies.count - 1, Int((Double(latencies.count) * percentile).rounded(.up)) - 1)
    return latencies[max(0, index)]
  }

  public var passed: Bool { findings.isEmpty }

  /// Findings in a category, e.g. `crash` or `contract`.
  public func findings(_ category: String) -> [Finding] {
    findings.filter { $0.category == category }
  }

  /// What a person reads at the end of a run.
  public var summary: String {
    var lines: [String] = []
    let who =
      configuration.users.isEmpty ? "" : " (also as \(configuration.users.joined(separator: ", ")))"
    var wire =
      configuration.ircShare == 0
      ? ""
      : ", \(configuration.ircShare)% of them IRC" + (configuration.tcp ? " (some over TCP)" : "")
    if configuration.webShare > 0 {
      wire += ", \(configuration.webShare)% of the other users' through the web door"
    }
    lines.append(
      "chatfuzz: seed \(configuration.seed), \(Int(configuration.seconds)) s, \(configuration.connections) connections\(who)\(wire)"
    )
    let web = webConnectionsOpened > 0 ? " (\(webConnectionsOpened) through the web door)" : ""
    lines.append(
      "sent \(requestsSent) requests on \(connectionsOpened) connections\(web); checked \(repliesChecked) replies in \(linesReceived) lines; broker crashes: \(crashes)"
    )
    func ms(_ seconds: Double?) -> String {
      seconds.map { String(format: "%.2f ms", $0 * 1000) } ?? "none"
    }
    if let privacySummary { lines.append(privacySummary) }
    lines.append(
      "PING latency over \(latencies.count) probes: p50 \(ms(latency(percentile: 0.5))), p99 \(ms(latency(percentile: 0.99))), max \(ms(latencies.last)) (p99 limit \(ms(configuration.latencyLimit)))"
    )
    lines += oracleNotes
    if let brokerDirectory {
      lines.append("the broker's logs and state are kept in \(brokerDirectory)")
    }
    if findings.isEmpty {
      lines.append("no findings: PASS")
      return lines.joined(separator: "\n")
    }
    lines.append("\(findings.count) findings: FAIL")
    for (number, finding) in findings.enumerated() {
      lines.append(
        "\(number + 1). [\(finding.category)] \(finding.summary) (seen \(finding.count)x)")
      lines.append("   \(finding.detail)")
      if let reproducer = finding.reproducer { lines.append("   reproduce: \(reproducer)") }
    }
    return lines.joined(separator: "\n")
  }
}

/// Runs the fuzzing threads and the latency probe against a broker for a
/// bounded time, and collects what broke.
public enum Fuzzer {
  /// Seconds left for replaying suspects after crashes, in this run.
  private static let minimizingBudget = Locked<Double>(0)

  /// The logs of the brokers that crashed, already reported with the crash.
  private static let crashedLogs = Locked<Set<String>>([])

  public static func run(_ configuration: FuzzConfiguration) throws -> FuzzReport {
    var configuration = configuration
    if configuration.tcp && configuration.brokerBinary != nil && configuration.ircShare > 0 {
      let port = try LoopbackSocket.freePort()
      configuration.ircTCPPort = port
      configuration.brokerArguments += ["--irc-listen", "127.0.0.1:\(port)"]
    }
    if configuration.webShare > 0 && configuration.brokerBinary != nil {
      let port = try LoopbackSocket.freePort()
      configuration.webPort = port
      configuration.brokerArguments += ["--web-listen", "127.0.0.1:\(port)"]
    }
    let failing = try configuration.failingSyncs.map {
      try FailingSyncs(percent: $0, seed: configuration.seed)
    }
    if let failing {
      configuration.brokerArguments = failing.brokerArguments(configuration.brokerArguments)
    }
    let owned = try configuration.brokerBinary.map {
      try OwnedBroker(binary: $0, arguments: configuration.brokerArguments)
    }
    let failingSwitch = owned.map { $0.directory + "/failing-syncs" }
    if let failing, let owned, let failingSwitch {
      owned.environment = failing.environment(switchPath: failingSwitch)
    }
    defer {
      if configuration.keepFiles {
        owned?.kill9()
      } else {
        owned?.removeFiles()
      }
    }
    if let owned {
      try owned.start()
      configuration.socketPath = owned.socketPath
    }
    guard let socketPath = configuration.socketPath else {
      throw FuzzError("give a socket or a broker to start")
    }
    let shared = SharedState(failingSyncs: failing != nil)
    let behaviours =
      configuration.behaviours.isEmpty
      ? Behaviour.allCases : configuration.behaviours.compactMap(Behaviour.init(rawValue:))
    guard !behaviours.isEmpty else { throw FuzzError("no such behaviours") }
    var random = SplitMix64(seed: configuration.seed)
    let threadCount = max(1, min(4, configuration.connections / 6))
    let perThread = max(1, configuration.connections / threadCount)
    var slotUsers: [String?] = [nil]
    if getuid() == 0 { slotUsers += configuration.workerUsers.map { Optional($0) } + [nil] }
    let endpoints = IRCEndpoints(
      socketPath: configuration.ircSocketPath
        ?? (socketPath.split(separator: "/", omittingEmptySubsequences: false).dropLast()
          .joined(separator: "/") + "/irc.sock"),
      tcpPort: configuration.tcp ? configuration.ircTCPPort : nil)
    let ircUsers = [ownUserName()] + (getuid() == 0 ? configuration.users : [])
    let privacy =
      configuration.privacy
      ? try PrivacyRun(
        configuration: configuration, socketPath: socketPath,
        ircSocketPath: endpoints.socketPath, owned: owned, shared: shared,
        random: SplitMix64(seed: configuration.seed ^ PrivacyRun.seedSalt))
      : nil
    let workers = (0..<threadCount).map { _ in
      Worker(
        socketPath: socketPath, slots: perThread, users: slotUsers, shared: shared,
        behaviours: behaviours,
        generator: RequestGenerator(
          random: random.split(), users: configuration.users,
          maximumLineBytes: configuration.maximumLineBytes),
        irc: configuration.ircShare == 0
          ? nil
          : IRCWorkerSettings(
            share: configuration.ircShare, endpoints: endpoints, users: ircUsers,
            generator: IRCGenerator(random: random.split(), users: ircUsers)),
        privacy: privacy?.oracle,
        web: configuration.webShare == 0 || getuid() != 0
          ? nil
          : configuration.webPort.map { WebWorkerSettings(share: configuration.webShare, port: $0) }
      )
    }
    let probe = LatencyProbe(socketPath: socketPath, shared: shared)
    let oracle = failing.map { _ in
      DirtyReadOracle(
        shared: shared, socketPath: socketPath, ircSocketPath: endpoints.socketPath,
        users: ircUsers, ircShare: configuration.ircShare, random: random.split())
    }
    if let failingSwitch { FailingSyncs.turnOn(failingSwitch) }
    var bodies: [@Sendable () -> Void] =
      workers.map { worker in { worker.run() } } + [{ probe.run() }]
    if let oracle { bodies.append { oracle.run() } }
    if let privacy { bodies.append { privacy.run() } }
    let finished = DispatchGroup()
    for body in bodies {
      finished.enter()
      Thread.detachNewThread {
        body()
        finished.leave()
      }
    }
    var crashes = 0
    var nextLivenessCheck = 0.0
    minimizingBudget.withLock { $0 = min(60, max(20, configuration.seconds / 2)) }
    let end = monotonicSeconds() + configuration.seconds
    while monotonicSeconds() < end {
      sleepSeconds(0.05)
      if shared.plannedPause.load(ordering: .sequentiallyConsistent) {
        continue  // the privacy oracle restarts the broker
      } else if let owned, !owned.isRunning {
        crashes += 1
        handleCrash(owned, shared: shared, configuration: configuration)
      } else if owned == nil, monotonicSeconds() >= nextLivenessCheck {
        // Someone else's broker: a socket nobody accepts on means it died.
        // What its connections saw as it died is not held against it.
        nextLivenessCheck = monotonicSeconds() + 0.25
        if !UnixSocket.isLive(socketPath) {
          shared.generation.add(1, ordering: .relaxed)
          crashes += 1
          sleepSeconds(0.5)  // for the backtrace to reach the log
          let log = configuration.logPath.flatMap {
            try? String(contentsOfFile: $0, encoding: .utf8)
          }
          let report = CrashReport(log: log ?? "")
          shared.findings.record(
            Finding(
              category: "crash", summary: "the broker died: \(report.summary ?? "see its log")",
              detail: report.frames.prefix(5).joined(separator: " < "),
              reproducer:
                "chatfuzz --broker <chatbroker> --seed \(configuration.seed) finds the request"))
          if let path = configuration.logPath { _ = crashedLogs.withLock { $0.insert(path) } }
          break
        }
      }
    }
    shared.stopping.store(true, ordering: .relaxed)
    finished.wait()
    if let owned, !owned.isRunning {
      crashes += 1
      handleCrash(owned, shared: shared, configuration: configuration)
    }
    if configuration.ircShare > 0 {
      IRCCulprits.find(shared, endpoints: endpoints, users: ircUsers, budget: 20)
    }
    if let oracle, let owned, let failingSwitch {
      oracle.checkDurability(owned, switchPath: failingSwitch)
    }
    try finalChecks(owned, socketPath: socketPath, shared: shared, configuration: configuration)
    let freezeNote = FreezeOracle.check(
      owned, socketPath: socketPath, shared: shared, configuration: configuration)

    var report = FuzzReport(configuration: configuration, findings: [])
    report.requestsSent = shared.requestsSent.load(ordering: .relaxed)
    report.linesReceived = shared.linesReceived.load(ordering: .relaxed)
    report.repliesChecked = shared.repliesChecked.load(ordering: .relaxed)
    report.connectionsOpened = shared.connectionsOpened.load(ordering: .relaxed)
    report.webConnectionsOpened = shared.webConnectionsOpened.load(ordering: .relaxed)
    report.privacySummary = privacy?.summary
    report.crashes = crashes
    if configuration.keepFiles { report.brokerDirectory = owned?.directory }
    report.latencies = probe.samples.withLock { $0 }.sorted()
    if let p99 = report.latency(percentile: 0.99), p99 > configuration.latencyLimit {
      shared.findings.record(
        Finding(
          category: "latency", summary: "PING p99 above the limit",
          detail: String(
            format: "p99 %.1f ms, max %.1f ms, limit %.0f ms", p99 * 1000,
            (report.latencies.last ?? 0) * 1000, configuration.latencyLimit * 1000)))
    }
    report.findings = shared.findings.all + shared.dirtyReads.findings.all
    if let freezeNote { report.oracleNotes.append(freezeNote) }
    if let oracle {
      report.oracleNotes.append(
        "dirty reads: \(oracle.scenesPlayed) scenes played (\(oracle.scenesAbandoned) given up), \(shared.dirtyReads.refusedCount) requests refused STORAGE, \(shared.dirtyReads.acknowledgedMessages.count) acknowledged messages looked for after a restart"
      )
    }
    return report
  }

  /// The broker died: record it with its log, find the request that did
  /// it, check it restarts on its own journal, and go on with a fresh one.
  private static func handleCrash(
    _ owned: OwnedBroker, shared: SharedState, configuration: FuzzConfiguration
  ) {
    shared.paused.store(true, ordering: .relaxed)
    shared.generation.add(1, ordering: .relaxed)
    sleepSeconds(0.1)  // the workers drop their connections
    let crash = CrashOfOwnedBroker(owned)
    let suspects = shared.takeRecent()
    let endpoints = IRCEndpoints(
      socketPath: configuration.ircSocketPath ?? owned.directory + "/irc.sock",
      tcpPort: nil)
    var finding = Finding(
      category: "crash", summary: "\(crash.cause), the request not found", detail: crash.detail)
    owned.startAgain(after: crash.cause, recordingIn: shared.findings)
    let known = shared.findings.all.first {
      $0.category == "crash" && $0.summary.hasPrefix("\(crash.cause) on ")
    }
    if let known {
      // Seen and reproduced before: count it, without searching again.
      finding.summary = known.summary
    } else if minimizingBudget.withLock({ $0 > 0 }),
      owned.isRunning || (try? owned.start(fresh: true)) != nil
    {
      let started = monotonicSeconds()
      defer { minimizingBudget.withLock { $0 -= monotonicSeconds() - started } }
      if let culprit = findCulprit(
        owned, suspects, crash.cause, shared: shared, endpoints: endpoints)
      {
        finding.reproducer = reproducer(culprit, endpoints)
        finding.summary = "\(crash.cause) on \(crashKey(culprit))"
      } else {
        finding.reproducer =
          "no single line of the last \(suspects.count) does it alone; rerun with --keep and this seed"
      }
    }
    shared.findings.record(finding)
    if !owned.isRunning { try? owned.start(fresh: true) }
    shared.paused.store(false, ordering: .relaxed)
  }

  /// Why the broker the fuzzer started died, from its log's backtrace.
  private struct CrashOfOwnedBroker {
    let cause: String
    let detail: String

    init(_ owned: OwnedBroker) {
      let log = owned.currentLog
      let died = owned.exitDescription
      let report = CrashReport(log: log)
      cause = report.summary ?? LogScan.alarms(in: log).first ?? "no trap in the log (\(died))"
      detail = "\(died); \(report.frames.prefix(5).joined(separator: " < "))"
      _ = crashedLogs.withLock { $0.insert(owned.logPaths.last ?? "") }
    }
  }

  /// Replays suspects one by one, newest first, each on its own connection
  /// followed by a PING, until one kills the broker the same way; restarts
  /// it after each death. A suspect that kills it another way is a finding
  /// of its own.
  private static func findCulprit(
    _ owned: OwnedBroker, _ suspects: [Suspect], _ cause: String, shared: SharedState,
    endpoints: IRCEndpoints
  ) -> Suspect? {
    let deadline = monotonicSeconds() + minimizingBudget.withLock { $0 }
    for suspect in suspects where monotonicSeconds() < deadline {
      if suspect.irc {
        // Registered with every capability, as most of the IRC clients.
        guard
          let probe = try? IRCProbe(
            endpoints, tcp: false, capabilities: IRCGenerator.capabilities, users: [])
        else { break }
        if probe.exchange(suspect.bytes).answered { continue }
      } else {
        guard let connection = try? ProbeConnection(path: owned.socketPath) else { break }
        // The suspect as it was found, then a well-formed PING as a fence.
        try? connection.send(suspect.bytes + [0x0A] + LineCodec.encode(.ping(token: "culprit")))
        var answered = false
        while let line = try? connection.readLine(timeout: 2) {
          if line == Array("OK PING culprit".utf8) {
            answered = true
            break
          }
        }
        if answered { continue }
      }
      let gone = monotonicSeconds() + 1
      while owned.isRunning && monotonicSeconds() < gone { sleepSeconds(0.01) }
      guard !owned.isRunning else { continue }
      let crash = CrashOfOwnedBroker(owned)
      try? owned.start(fresh: true)
      if crash.cause == cause { return suspect }
      shared.findings.record(
        Finding(
          category: "crash", summary: "\(crash.cause) on \(crashKey(suspect))",
          detail: crash.detail, reproducer: reproducer(suspect, endpoints)))
    }
    return nil
  }

  /// At the end: the broker answers, its log holds no trap, and (when the
  /// fuzzer started it) it stops cleanly and replays its journal.
  private static func finalChecks(
    _ owned: OwnedBroker?, socketPath: String, shared: SharedState,
    configuration: FuzzConfiguration
  ) throws {
    // Alive: it answers a new connection's PING, at once or at least after
    // it has worked off what the run left behind.
    let started = monotonicSeconds()
    var answered = false
    var lastError = ""
    while !answered && monotonicSeconds() - started < 60 {
      do {
        let connection = try ProbeConnection(path: socketPath, greetingTimeout: 60)
        _ = try connection.ping("alive", 60)
        answered = true
      } catch {
        lastError = "\(error)"
        if !UnixSocket.isLive(socketPath) { break }  // dead, not busy
        sleepSeconds(0.1)
      }
    }
    let waited = monotonicSeconds() - started
    if !answered {
      shared.findings.record(
        Finding(
          category: "liveness", summary: "the broker does not answer after the run",
          detail: "no HELLO and PING: \(lastError)"))
    } else if waited > 5 {
      shared.findings.record(
        Finding(
          category: "freeze",
          summary: "the broker answers a new connection only long after the run",
          detail: String(format: "HELLO and PING took %.1f s once the fuzzing stopped", waited)))
    }
    var logs: [String] = []
    if let path = configuration.logPath, !crashedLogs.withLock({ $0.contains(path) }) {
      logs.append((try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
    }
    if let owned {
      owned.stopCleanly(recordingIn: shared.findings)
      if owned.startAgain(after: "the run", recordingIn: shared.findings) { _ = owned.stop() }
      // The logs of the runs that crashed were reported with the crash.
      let crashed = crashedLogs.withLock { $0 }
      logs += owned.logPaths.filter { !crashed.contains($0) }.map {
        (try? String(contentsOfFile: $0, encoding: .utf8)) ?? ""
      }
    }
    for alarm in logs.flatMap(LogScan.alarms(in:)) {
      shared.findings.record(
        Finding(category: "log", summary: normalise(alarm), detail: alarm))
    }
  }

  /// One finding per kind of request that crashes the broker: its verb,
  /// and for SAYAT and HISTORY the argument that is not a name or a text.
  static func crashKey(_ suspect: Suspect) -> String {
    suspect.irc ? "IRC " + crashKey(suspect.bytes) : crashKey(suspect.bytes)
  }

  /// The shell command that sends a suspect again: on the line protocol
  /// as it is, on IRC after a registration with every capability.
  static func reproducer(_ suspect: Suspect, _ endpoints: IRCEndpoints) -> String {
    guard suspect.irc else { return Reproducer.shell([suspect.bytes]) }
    let registration = IRCGenerator.registration(
      nick: ownUserName(), capabilities: IRCGenerator.capabilities)
    return Reproducer.shell(
      registration + [suspect.bytes], lineEnd: "\\r\\n",
      connect: endpoints.connectCommand(tcp: false))
  }

  static func crashKey(_ line: [UInt8]) -> String {
    let words = line.split(separator: 0x20, maxSplits: 4).map {
      String(decoding: $0, as: UTF8.self)
    }
    guard let verb = words.first?.asciiUppercased else { return "an empty line" }
    switch verb {
    case "SAYAT" where words.count > 2: return "SAYAT <target> \(words[2].prefix(60)) <text>"
    case "HISTORY" where words.count > 2:
      return "HISTORY <target> " + words[2...].joined(separator: " ").prefix(60)
    default: return String(verb.prefix(20))
    }
  }

  /// A log line without what differs per run (addresses), so that one bug
  /// is one finding.
  static func normalise(_ line: String) -> String {
    let words = line.split(separator: " ").map { word in
      word.hasPrefix("0x") ? "0x..." : String(word)
    }
    return String(words.joined(separator: " ").prefix(200))
  }
}

/// The fuzzer's own login name, as the broker names its connections.
func ownUserName() -> String {
  guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else {
    return "uid\(geteuid())"
  }
  return String(cString: name)
}

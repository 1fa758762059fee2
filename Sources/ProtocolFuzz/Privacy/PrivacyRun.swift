import Glibc

/// `chatfuzz --privacy`: the privacy scenario on its own thread beside the
/// fuzzing workers, round after round (at most one every 2 s, so that its
/// creators' allowance of new rooms lasts), with once, after the first
/// round, a quiet moment in which the started broker is restarted on its
/// state: kicks and bans must hold across it, and IRC's LUSERS is counted
/// against LIST.
/// When the run is long enough for the staleness bound of group lookups
/// (60 s), a session opened before a user left a group looks again past it.
final class PrivacyRun: @unchecked Sendable {
  let oracle: PrivacyOracle
  private let transport: SocketPrivacyTransport
  private let scenario: PrivacyScenario
  private let seconds: Double
  private let restarts: Bool

  /// Who plays: every user of `--users`, and root (the fuzzer's user).
  /// The fuzzer's other clients speak only as the first of three or more
  /// (``FuzzConfiguration/workerUsers``): the others' allowances of new
  /// rooms, and the last one's group lookups, are the scenario's alone.
  init(
    configuration: FuzzConfiguration, socketPath: String, ircSocketPath: String,
    owned: OwnedBroker?, shared: SharedState, random: SplitMix64
  ) throws {
    guard getuid() == 0, configuration.users.count >= 2 else {
      throw FuzzError("--privacy needs root and at least two --users")
    }
    let users = configuration.users
    oracle = PrivacyOracle(
      names: PrivacyNames(run: PrivacyNames.freshRun()), origin: monotonicSeconds(),
      findings: shared.findings,
      rerun:
        "chatfuzz --broker <chatbroker> --privacy --users \(users.joined(separator: ",")) --seed \(configuration.seed)"
        + (configuration.ircShare > 0 ? " --irc-share \(configuration.ircShare)" : ""))
    transport = SocketPrivacyTransport(
      socketPath: socketPath, ircSocketPath: ircSocketPath, oracle: oracle, shared: shared,
      owned: owned)
    let others = Set(configuration.workerUsers)
    scenario = PrivacyScenario(
      transport: transport, oracle: oracle, random: random, users: users,
      creators: users.filter { !others.contains($0) }, superuser: ownUserName())
    seconds = configuration.seconds
    restarts = owned != nil
  }

  /// Mixed into the run's seed for the scenario's own generator, so that
  /// the other clients draw what they draw without `--privacy` too.
  static let seedSalt: UInt64 = 0x7072_6976_6163_7921

  /// What the run did so far, for the summary: rounds, whether the quiet
  /// moment came (with a restart) and whether a session was looked at past
  /// the staleness bound.
  private let progress = Locked((rounds: 0, quiet: false, stale: false))

  var summary: String {
    let (rounds, quiet, stale) = progress.withLock { $0 }
    var parts = ["\(rounds) rounds of its scenario"]
    parts.append(
      quiet
        ? (restarts ? "the broker restarted after its first round" : "a quiet moment")
        : "no quiet moment (no restart, no LUSERS count)")
    parts.append(
      stale
        ? "a session looked again past the staleness bound"
        : "no look past the staleness bound (runs of 90 s and more)")
    return "privacy oracle: " + parts.joined(separator: "; ")
  }

  func run() {
    defer { transport.finish() }
    let start = transport.now
    scenario.runsUntil = start + seconds
    var quieted = false
    while !transport.stopping {
      let began = transport.now
      scenario.round()
      let looked = scenario.checkStaleWatch()
      progress.withLock {
        $0.rounds = scenario.rounds
        $0.stale = $0.stale || looked
      }
      // Once there is a kick, a ban and rooms to hide, and no session
      // waits for the staleness bound: the rounds after it play on the
      // restarted broker.
      if !quieted && scenario.staleWatch == nil {
        quieted = true
        if transport.quiet(restart: restarts) {
          scenario.lookWhileQuiet()
          transport.loud()
          progress.withLock { $0.quiet = true }
        }
      }
      transport.pass(2 - (transport.now - began))
    }
  }
}

extension FuzzConfiguration {
  /// The Unix users the fuzzer's other clients speak as: with `--privacy`
  /// only the first of three or more, none of two, so that the scenario's
  /// room creators and the user it takes out of groups are its own.
  var workerUsers: [String] {
    guard privacy else { return users }
    return users.count >= 3 ? [users[0]] : []
  }
}

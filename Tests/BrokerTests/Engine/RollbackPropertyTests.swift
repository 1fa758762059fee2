import Foundation
import TestSupport
import Testing

/// The property every rollback keeps (chatbroker(8), "JOURNAL": a failed
/// sync refuses what it held, nothing of it stays): users with several
/// sessions send random requests of every verb on virtual time, timers
/// fire, and at random points a sync fails and the engine undoes the
/// unsynced records (``RollbackWorld``). After each rollback
/// - the durable state is what a fresh engine replaying the records that
///   stayed builds, and every user is shown the same by both;
/// - each session is in the rooms it was in before the rolled-back
///   requests, where those requests are what changed them.
///
/// The suite runs seeds 1 to 8 for 400 steps each (about 0.3 s of CPU a
/// seed). For a longer run, or other seeds (a debug build takes about
/// 2 ms a step):
///
///     SWIFT_DETERMINISTIC_HASHING=1 \
///     CHATBROKER_ROLLBACK_SEEDS=100,101 CHATBROKER_ROLLBACK_STEPS=20000 \
///       swift test --skip-build --filter RollbackPropertyTests
///
/// A failure names its seed and the steps since the last good sync (`*`
/// marks those that wrote records); `CHATBROKER_ROLLBACK_TRACE=1` adds
/// every step from the start, and `CHATBROKER_ROLLBACK_CHECK_SYNCS=1`
/// checks the durable state at every good sync too, so that a difference
/// shows right after the steps that made it. A seed gives the same steps
/// again only with `SWIFT_DETERMINISTIC_HASHING=1`: the engine walks some
/// sets and dictionaries, whose order otherwise changes from run to run.
@Suite("Engine: every rollback returns to what the kept records replay to")
struct RollbackPropertyTests {
  static let seeds: [UInt64] = {
    let text = ProcessInfo.processInfo.environment["CHATBROKER_ROLLBACK_SEEDS"] ?? ""
    let chosen = text.split(separator: ",").compactMap { UInt64($0) }
    return chosen.isEmpty ? Array(1...8) : chosen
  }()

  static let steps: Int = {
    let text = ProcessInfo.processInfo.environment["CHATBROKER_ROLLBACK_STEPS"] ?? ""
    return Int(text) ?? 400
  }()

  @Test(
    "after every rollback: the state a replay of the kept records gives, sessions where they were",
    arguments: seeds)
  func everyRollbackReturns(seed: UInt64) {
    let world = RollbackWorld(seed: seed)
    for step in 0..<Self.steps {
      guard let broken = world.step() else { continue }
      let trace =
        ProcessInfo.processInfo.environment["CHATBROKER_ROLLBACK_TRACE"] == nil
        ? "" : "\nevery step:\n" + world.trace.joined(separator: "\n")
      Issue.record("seed \(seed), step \(step), rollback \(world.rollbacks): \(broken)\(trace)")
      return
    }
  }
}

import LineProtocol
import ProtocolFuzz
import TestSupport
import Testing

extension Tag {
  /// Cases that hold once the broker keeps every rule of the privacy
  /// oracle (chatbroker(7), "Private rooms" and "Moderation"): `+s` hides
  /// a room from who is not in it on every verb, a KICK or ban takes the
  /// room away for good, a banned user reads nothing, and groups are looked
  /// up at each new session and again after 60 s.
  @Tag static var needsPrivacyFix: Self
}

/// The scenario and oracle of `chatfuzz --privacy` against the engine
/// itself, on virtual time, with Unix groups changed in a fake directory:
/// fast and deterministic, the privacy oracle's guard in the normal suite.
/// Each case plays some parts of the scenario with a few seeds, on both
/// wires (line protocol and IRC), and expects no finding.
@Suite("Privacy oracle on the engine (virtual time)")
struct PrivacyOracleEngineTests {
  static let users = ["alice", "bob", "carol"]
  static let seeds: [UInt64] = [1, 2, 3]

  /// A scenario of `parts` on a fresh engine; carol is the user taken out
  /// of groups, as the last of `chatfuzz --users` is.
  static func scenario(_ parts: Set<PrivacyScenario.Part>, seed: UInt64)
    -> (PrivacyScenario, EnginePrivacyTransport)
  {
    // Times in findings count from the engine clock's start.
    let start = Double(TestClock().now.milliseconds) / 1000
    let oracle = PrivacyOracle(
      names: PrivacyNames(run: "test"), origin: start,
      rerun: "PrivacyOracleEngineTests, seed \(seed)")
    let transport = EnginePrivacyTransport(oracle: oracle, users: users)
    let scenario = PrivacyScenario(
      transport: transport, oracle: oracle, random: SplitMix64(seed: seed), users: users,
      superuser: "root", parts: parts)
    return (scenario, transport)
  }

  /// The findings, one per line with its first sighting, for a failure.
  static func describe(_ findings: [Finding]) -> Comment {
    Comment(
      rawValue: findings.map { "[\($0.category)] \($0.summary)\n   \($0.detail)" }.joined(
        separator: "\n"))
  }

  @Test(
    "a +s room shows nobody who never joined it its name, members, topic or lines",
    .tags(.needsPrivacyFix), arguments: seeds)
  func secretRooms(seed: UInt64) {
    let (scenario, transport) = Self.scenario([.secret], seed: seed)
    for _ in 0..<3 { scenario.round() }
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
    #expect(transport.oracle.model { $0.hiddenRooms(from: "alice", at: transport.now) }.count > 0)
  }

  @Test(
    "a banned invitee reads nothing of the room, not even with its sessions still open",
    .tags(.needsPrivacyFix), arguments: seeds)
  func bannedInvitee(seed: UInt64) {
    let (scenario, transport) = Self.scenario([.ban], seed: seed)
    for _ in 0..<3 { scenario.round() }
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }

  @Test(
    "a kicked invitee stays out: a new session's JOIN, an IRC client's registration and a restart let it in no more",
    .tags(.needsPrivacyFix), arguments: seeds)
  func kickedInvitee(seed: UInt64) {
    let (scenario, transport) = Self.scenario([.kick], seed: seed)
    for _ in 0..<2 { scenario.round() }
    #expect(transport.quiet(restart: true))
    scenario.lookWhileQuiet()
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }

  @Test(
    "a user taken out of the room's group reads nothing of it in a session opened after, while an older one stays open",
    .tags(.needsPrivacyFix), arguments: seeds)
  func groupRemovalNewSession(seed: UInt64) {
    let (scenario, transport) = Self.scenario([.group], seed: seed)
    for _ in 0..<3 { scenario.round() }
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }

  @Test(
    "a session opened before its user left the group reads nothing of the room once 60 s have passed",
    .tags(.needsPrivacyFix), arguments: seeds)
  func groupRemovalPastStaleness(seed: UInt64) throws {
    let (scenario, transport) = Self.scenario([.group], seed: seed)
    // Nothing of the user's between the removal and the look past the
    // bound: no new session, no JOIN that would look the groups up again.
    scenario.looksRightAfterGroupChange = false
    scenario.round()
    let watch = try #require(scenario.staleWatch, "the old session is kept to look again")
    transport.pass(watch.due - transport.now)
    scenario.checkStaleWatch()
    #expect(scenario.staleWatch == nil)
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }

  @Test(
    "direct messages reach no third user, root either, and a redacted line's text is never shown again",
    arguments: seeds)
  func directMessagesAndRedactions(seed: UInt64) {
    let (scenario, transport) = Self.scenario([.direct, .redaction], seed: seed)
    for _ in 0..<3 { scenario.round() }
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }

  @Test(
    "the whole scenario, as chatfuzz --privacy plays it: rounds, a restart, and more rounds",
    .tags(.needsPrivacyFix), arguments: seeds)
  func wholeScenario(seed: UInt64) {
    let (scenario, transport) = Self.scenario(Set(PrivacyScenario.Part.allCases), seed: seed)
    for _ in 0..<2 { scenario.round() }
    #expect(transport.quiet(restart: true))
    scenario.lookWhileQuiet()
    scenario.round()
    #expect(scenario.rounds == 3)
    #expect(transport.oracle.all.isEmpty, Self.describe(transport.oracle.all))
  }
}

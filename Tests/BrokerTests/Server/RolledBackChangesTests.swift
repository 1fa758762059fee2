import Foundation
import Posix
import ProtocolFuzz
import TestSupport
import Testing

/// "Nothing is shown before it is durable" through the real broker as
/// real Unix users, on a disk whose syncs fail (chatbroker(7), "Order and
/// durability"): while cbtest1's change waits for a sync that hangs and
/// then fails, cbtest2 asks about it, and must never see it, neither in
/// the answer nor in an event. The disk is the FaultySync library in the
/// broker's `LD_PRELOAD`: every sync fails, after 400 ms, while the switch
/// file exists; the broker has no hook for it.
@Suite("Rolled-back changes, as real users")
struct RolledBackChangesTests {
  /// One broker, syncs on, with the failing disk in reach.
  final class World {
    let broker: BrokerProcess
    let switchPath: String
    let op: LineClient
    let member: LineClient
    /// Who makes the failing sync before each change, so that the one after
    /// it runs on the sync thread (a slow sync is never made on the engine's
    /// thread) and the engine answers cbtest2 while it hangs.
    let warmer: LineClient

    init() throws {
      try UnixUsers.ensure()
      broker = try BrokerProcess()
      switchPath = broker.path("failing-syncs")
      let failing = try FailingSyncs(percent: 100, seed: 1, delayMilliseconds: 400)
      try broker.start(["--verbose"], environment: failing.environment(switchPath: switchPath))
      op = try broker.connect(as: "cbtest1")
      member = try broker.connect(as: "cbtest2")
      warmer = try broker.connect()
      #expect(try op.request("JOIN #m") == ["OK JOIN #m 1"])
      #expect(try member.request("JOIN #m") == ["OK JOIN #m 2"])
      _ = try op.expect("JOIN #m cbtest2")
    }

    /// Sends `change` as cbtest1 while every sync fails, and `query` as
    /// cbtest2 once the broker has read the change (its `--verbose` log
    /// names it), before its sync fails; returns cbtest1's answer and every
    /// line cbtest2 got up to its answer's last line, `until`.
    func whileSyncFails(
      _ change: String, then query: String, until last: String
    ) throws -> (change: String?, seen: [String]) {
      FailingSyncs.turnOn(switchPath)
      defer { FailingSyncs.turnOff(switchPath) }
      #expect(try warmer.request("SAY #warm x").first?.hasPrefix("ERR SAY STORAGE ") == true)
      let verb = String(change.prefix { $0 != " " })
      let before = requests(of: "cbtest1", verb: verb)
      try op.line(change)
      try waitForRequest(of: "cbtest1", verb: verb, after: before)
      try member.line(query)
      let answer = try op.readLine()
      var seen: [String] = []
      while let line = try member.readLine() {
        seen.append(line)
        if line.hasPrefix(last) { break }
      }
      return (answer, seen)
    }

    /// An IRC session of `user`, registered, its burst read.
    func ircSession(as user: String) throws -> LineClient {
      let irc = try ircConnection(as: user)
      try irc.expect(":\(Host.name) 422 \(user) ")
      return irc
    }

    /// An IRC connection of `user` that has sent its registration.
    func ircConnection(as user: String) throws -> LineClient {
      let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: user))
      try irc.send("NICK \(user)\r\nUSER \(user) 0 * :\(user)\r\n")
      return irc
    }

    /// Waits until the broker has read one more `verb` request of `user`
    /// than `before`.
    func waitForRequest(of user: String, verb: String, after before: Int) throws {
      try waitUntil(timeout: 10, "the broker to read \(user)'s \(verb)") {
        requests(of: user, verb: verb) > before
      }
    }

    func requests(of user: String, verb: String) -> Int {
      broker.log.components(separatedBy: "\n").filter {
        $0.contains("msg=request") && $0.contains("user=\(user) ") && $0.hasSuffix("verb=\(verb)")
      }.count
    }
  }

  @Test(
    "a rolled-back MODE, ban, invitation and KICK are shown to nobody", UnixUsers.required)
  func rolledBackChangesAreNeverShown() throws {
    let world = try World()

    let moderated = try world.whileSyncFails("MODE #m +m", then: "MODE #m", until: "OK MODE")
    #expect(moderated.change?.hasPrefix("ERR MODE STORAGE ") == true)
    #expect(moderated.seen == ["OK MODE #m +"], "bob saw a mode that never was")

    let banned = try world.whileSyncFails(
      "MODE #m +b nobody!*@*", then: "MODE #m +b", until: "OK MODE")
    #expect(banned.change?.hasPrefix("ERR MODE STORAGE ") == true)
    #expect(banned.seen == ["OK MODE #m +b 0"], "bob saw a ban that never was")

    #expect(try world.op.request("JOIN #cbp invite") == ["OK JOIN #cbp 1"])
    let invited = try world.whileSyncFails("INVITE #cbp cbtest2", then: "ROOMS", until: "OK ROOMS")
    #expect(invited.change?.hasPrefix("ERR INVITE STORAGE ") == true)
    #expect(
      !invited.seen.contains { $0.hasPrefix("ROOM #cbp ") }, "bob saw an invitation that never was")

    let kicked = try world.whileSyncFails("KICK #m cbtest2 :bye", then: "WHO #m", until: "OK WHO")
    #expect(kicked.change?.hasPrefix("ERR KICK STORAGE ") == true)
    #expect(
      kicked.seen == ["MEMBER #m cbtest1", "MEMBER #m cbtest2", "OK WHO #m 2"],
      "bob saw a KICK that never was, or is out of the room after it")
    #expect(try world.member.request("SAY #m still here").first?.hasPrefix("OK SAY ") == true)
    #expect(try world.op.expect("MSG #m ").hasSuffix(" cbtest2 :still here"))
  }

  /// An IRC session joins its user's rooms as it registers, as a bouncer
  /// does (chatbroker(7), "IRC"): only those that are durably the user's.
  /// One whose creation was still being synced was once joined again by
  /// the new session, which made the room anew once the sync failed.
  @Test(
    "an IRC session registering while its user's new room is synced is not joined to it",
    UnixUsers.required)
  func registrationDoesNotJoinARolledBackRoom() throws {
    let world = try World()
    let first = try world.ircSession(as: "cbtest1")
    FailingSyncs.turnOn(world.switchPath)
    defer { FailingSyncs.turnOff(world.switchPath) }
    #expect(try world.warmer.request("SAY #warm x").first?.hasPrefix("ERR SAY STORAGE ") == true)
    let joins = world.requests(of: "cbtest1", verb: "JOIN")
    try first.send("JOIN #cbfresh\r\n")
    try world.waitForRequest(of: "cbtest1", verb: "JOIN", after: joins)
    let second = try world.ircConnection(as: "cbtest1")
    #expect(
      try first.expect(":\(Host.name) NOTICE cbtest1 :JOIN ").contains("nothing was accepted"))
    FailingSyncs.turnOff(world.switchPath)

    try second.send("PING :fence\r\n")
    var seen: [String] = []
    while let line = try second.readLine(), !line.contains("PONG") { seen.append(line) }
    #expect(
      seen.contains { $0.contains(" JOIN #m") }, "the new session is joined to cbtest1's room #m")
    #expect(
      !seen.contains { $0.contains("#cbfresh") }, "the new session joined a room that never was")
    #expect(
      !(try world.member.request("ROOMS")).contains { $0.hasPrefix("ROOM #cbfresh ") },
      "the room whose creation was rolled back exists")
  }
}

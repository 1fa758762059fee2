import Broker
import LineProtocol
import TestSupport
import Testing

/// Who is in a shared room on the other hosts (chatbroker(8), "Presence"),
/// on virtual time: announcements in, `WHO` out, and what this host has to
/// announce.
@Suite("Engine: members of shared rooms on every host")
struct EngineFederatedPresenceTests {
  let lines = EngineFederationTests()
  let ops = RoomName("#ops")!

  @Test("WHO of a shared room lists this host's members, then the other hosts' as user@node")
  func whoListsEveryHost() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    #expect(harness.engine.remotePresence(room: ops, node: "h3", users: ["carol"]))
    #expect(harness.engine.remotePresence(room: ops, node: "h2", users: ["dave", "bob"]))
    #expect(
      harness.send(alice, "WHO #ops") == [
        "MEMBER #ops alice", "MEMBER #ops bob@h2", "MEMBER #ops dave@h2", "MEMBER #ops carol@h3",
        "OK WHO #ops 4",
      ])
    // An empty announcement: nobody of h2 is left.
    harness.engine.remotePresence(room: ops, node: "h2", users: [])
    #expect(
      harness.send(alice, "WHO #ops") == [
        "MEMBER #ops alice", "MEMBER #ops carol@h3", "OK WHO #ops 2",
      ])
  }

  @Test("a host's announcement counts for 90 s: the members of a host that went quiet leave WHO")
  func announcementsTimeOut() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    harness.engine.remotePresence(room: ops, node: "h2", users: ["bob"])
    harness.clock.set("2026-11-30T17:01:30.000Z")
    #expect(harness.send(alice, "WHO #ops").contains("MEMBER #ops bob@h2"), "90 s: still counts")
    harness.clock.set("2026-11-30T17:01:30.001Z")
    #expect(harness.send(alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
    // The next announcement brings bob back.
    harness.engine.remotePresence(room: ops, node: "h2", users: ["bob"])
    #expect(harness.send(alice, "WHO #ops").contains("MEMBER #ops bob@h2"))
  }

  @Test("announcements for rooms this host does not share, or from its own node, are passed over")
  func foreignAnnouncementsArePassedOver() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #lunch")
    #expect(harness.engine.remotePresence(room: RoomName("#lunch")!, node: "h2", users: ["bob"]))
    #expect(harness.engine.remotePresence(room: ops, node: "h1", users: ["mallory"]))
    #expect(harness.send(alice, "WHO #lunch") == ["MEMBER #lunch alice", "OK WHO #lunch 1"])
    harness.send(alice, "JOIN #ops")
    #expect(harness.send(alice, "WHO #ops") == ["MEMBER #ops alice", "OK WHO #ops 1"])
  }

  @Test(
    "an announcement with a name that is not a login name, or past the limit of users, is ignored")
  func badAnnouncementsAreIgnored() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    harness.send(alice, "JOIN #ops")
    #expect(!harness.engine.remotePresence(room: ops, node: "h2", users: ["bob", "\u{1b}[2J"]))
    #expect(!harness.engine.remotePresence(room: ops, node: "H2!", users: ["bob"]))
    let limit = Engine.presenceUsersLimit
    let many = (0...limit).map { "user\($0)" }
    #expect(!harness.engine.remotePresence(room: ops, node: "h2", users: many))
    #expect(harness.engine.remotePresence(room: ops, node: "h2", users: Array(many.prefix(limit))))
    #expect(harness.send(alice, "WHO #ops").last == "OK WHO #ops \(limit + 1)")
  }

  @Test("a member joining or leaving a shared room, and only a shared one, is to be announced")
  func localChangesAreAnnounced() {
    let harness = lines.federatedHarness()
    let alice = harness.connect("alice")
    let again = harness.connect("alice")
    let bob = harness.connect("bob")
    harness.send(alice, "JOIN #ops")
    harness.send(alice, "JOIN #lunch")
    #expect(harness.engine.takePresenceChanges().map(\.room) == [ops])
    #expect(harness.engine.takePresenceChanges().isEmpty, "told once")
    // A second session of alice changes nobody's presence.
    harness.send(again, "JOIN #ops")
    #expect(harness.engine.takePresenceChanges().isEmpty)
    harness.send(bob, "JOIN #ops")
    #expect(harness.engine.takePresenceChanges().map(\.users) == [["alice", "bob"]])
    #expect(harness.engine.localPresence().map(\.users) == [["alice", "bob"]])
    harness.send(bob, "PART #ops")
    harness.engine.disconnect(alice)
    harness.engine.disconnect(again)
    #expect(harness.engine.takePresenceChanges().map(\.users) == [[]])
    #expect(harness.engine.localPresence().isEmpty)
  }
}

extension EngineFederatedPresenceTests {
  @Test("IRC NAMES and WHO show the members of other hosts as nick alice|h2")
  func ircShowsOtherHostsMembers() {
    let harness = lines.federatedHarness()
    let irc = IRCHarness(harness)
    let carol = irc.connect("carol")
    irc.send(carol, "JOIN #ops")
    _ = irc.take(carol)
    harness.engine.remotePresence(room: ops, node: "h2", users: ["alice"])
    let names = irc.send(carol, "NAMES #ops") + irc.take(carol)
    #expect(names.first?.hasSuffix(" = #ops :carol alice|h2") == true, "\(names)")
    let who = irc.send(carol, "WHO #ops") + irc.take(carol)
    #expect(who.contains { $0.contains(" #ops alice|h2 ") }, "\(who)")
  }
}

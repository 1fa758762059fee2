import Foundation
import Glibc
import TestSupport
import Testing

/// chatsh reads who answers on the socket (SO_PEERCRED) before it sends
/// anything, and believes only root, the user themself, the chatbroker user
/// and whoever --trust-user or CHATBROKER_TRUST_USER names: chatsh(1),
/// SECURITY. Exit 69 otherwise.
@Suite("chatsh believes only a trusted broker", UnixUsers.required)
struct BrokerTrustTests {
  /// bob (cbtest2) runs a listener of his own where alice (cbtest1) will
  /// look for the broker; carol (cbtest3) is who alice writes to.
  @Test("alice's chatsh refuses bob's listener, says who answered, and sends it nothing")
  func impostorIsRefused() throws {
    try UnixUsers.ensure()
    let directory = try makeShortTemporaryDirectory("cbt")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let bobs = directory + "/bob"
    #expect(mkdir(bobs, 0o755) == 0)
    try AsUser.give(bobs, to: "cbtest2", mode: 0o755)
    let socket = bobs + "/chatbroker.sock"
    let impostor = try UserBroker(user: "cbtest2", socket: socket, stateDirectory: bobs + "/state")
    let chatsh = BuiltProducts.path("chatsh")

    let refused = try AsUser.run(
      "cbtest1", [chatsh, "--socket", socket, "say", "@cbtest3", "my password is hunter2"])
    #expect(refused.status == 69, "\(refused.errors)")
    #expect(refused.errors.contains("runs as cbtest2 (uid "), "\(refused.errors)")
    #expect(refused.errors.contains("nothing was sent"), "\(refused.errors)")
    #expect(refused.errors.contains("--trust-user cbtest2"), "\(refused.errors)")
    #expect(refused.errors.contains("CHATBROKER_TRUST_USER=cbtest2"), "\(refused.errors)")

    // What bob's broker holds for carol, read by carol who trusts it: nothing.
    let carol = try AsUser.run(
      "cbtest3", [chatsh, "--socket", socket, "--trust-user", "cbtest2", "history", "@cbtest1"])
    #expect(carol.status == 0, "\(carol.errors)")
    #expect(carol.output.isEmpty, "\(carol.output)")

    // Trusting bob, by option, uid or environment, alice talks to his broker.
    let uid = String(try AsUser.uid("cbtest2"))
    for (arguments, environment) in [
      (["--trust-user", "cbtest2"], [:]), (["--trust-user=\(uid)"], [:]),
      ([], ["CHATBROKER_TRUST_USER": "cbtest2"]),
    ] as [([String], [String: String])] {
      let trusted = try AsUser.run(
        "cbtest1", [chatsh, "--socket", socket] + arguments + ["say", "@cbtest3", "hello"],
        environment: environment)
      #expect(trusted.status == 0, "\(arguments) \(environment): \(trusted.errors)")
    }
    _ = impostor
  }

  @Test("chatsh believes a broker run by the user themself, and root's")
  func ownAndRootBrokers() throws {
    try UnixUsers.ensure()
    let directory = try makeShortTemporaryDirectory("cbt")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try AsUser.give(directory, to: "cbtest1", mode: 0o755)
    let socket = directory + "/chatbroker.sock"
    let own = try UserBroker(user: "cbtest1", socket: socket, stateDirectory: directory + "/state")
    let chatsh = BuiltProducts.path("chatsh")
    let mine = try AsUser.run("cbtest1", [chatsh, "--socket", socket, "say", "#ops", "mine"])
    #expect(mine.status == 0, "\(mine.errors)")

    let root = try BrokerProcess().start()
    let toRoot = try AsUser.run(
      "cbtest1", [chatsh, "--socket", root.socketPath, "say", "#ops", "root's"])
    #expect(toRoot.status == 0, "\(toRoot.errors)")
    _ = own
  }
}

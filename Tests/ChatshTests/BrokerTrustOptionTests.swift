import ChatClient
import Testing

/// Whom chatsh believes to be the broker, from its options and environment:
/// chatsh(1), SECURITY.
@Suite struct BrokerTrustOptionTests {
  @Test("--trust-user may be given several times, and CHATBROKER_TRUST_USER adds names")
  func trustedUsers() throws {
    let invocation = try OptionParser.parse([
      "--trust-user", "bob", "--trust-user=1234", "say", "#ops", "hi",
    ])
    #expect(invocation.trustUsers == ["bob", "1234"])
    let trust = BrokerTrust(
      options: invocation.trustUsers, environment: ["CHATBROKER_TRUST_USER": "carol,dave"])
    #expect(trust.users == ["bob", "1234", "carol", "dave"])
    #expect(throws: UsageError.self) { try OptionParser.parse(["--trust-user"]) }
    #expect(throws: UsageError.self) { try OptionParser.parse(["--trust-user", "", "rooms"]) }
  }

  @Test("root, the user themself and chatbroker are believed; anyone else only when named")
  func whoIsBelieved() {
    let trust = BrokerTrust(users: ["bob", "4242"])
    #expect(trust.trusts(uid: 0, name: "root", me: 1000))
    #expect(trust.trusts(uid: 1000, name: "alice", me: 1000))
    #expect(trust.trusts(uid: 998, name: "chatbroker", me: 1000))
    #expect(trust.trusts(uid: 1001, name: "bob", me: 1000))
    #expect(trust.trusts(uid: 4242, name: nil, me: 1000))
    #expect(!trust.trusts(uid: 1002, name: "mallory", me: 1000))
    #expect(!trust.trusts(uid: 1003, name: nil, me: 1000))
    #expect(!BrokerTrust().trusts(uid: 1001, name: "bob", me: 1000))
  }
}

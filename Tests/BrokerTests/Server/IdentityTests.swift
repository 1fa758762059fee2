import TestSupport
import Testing

/// Who is connected comes from the kernel, and direct conversations are
/// readable by their two parties only. Needs real Unix users.
@Suite("Identity", UnixUsers.required)
struct IdentityTests {
  @Test("HELLO names the Unix user who connected", arguments: UnixUsers.names)
  func helloNamesUser(user: String) throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let client = try broker.connect(as: user)
    #expect(client.greeting.words == ["HELLO", client.greeting.words[1], user])
    #expect(client.greeting.freeText?.contains(user) == true)
    #expect(try broker.connect().greeting.words[2] == "root")
  }

  @Test("a uid without a passwd entry is named uid<number>, and can be written to")
  func uidWithoutName() throws {
    let broker = try BrokerProcess().start()
    let stranger = try broker.connect(as: "54321")
    #expect(stranger.greeting.words[2] == "uid54321")
    let root = try broker.connect()
    let said = try #require(root.request("SAY @uid54321 who are you").last)
    #expect(said.hasPrefix("OK SAY "), "\(said)")
    #expect(try stranger.expect("MSG ").hasPrefix("MSG @root \(said.words[2]) "))
  }

  @Test("a direct message is seen by its two parties only")
  func directMessagePrivacy() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let alice = try broker.connect(as: "cbtest1")
    let bob = try broker.connect(as: "cbtest2")
    let eve = try broker.connect(as: "cbtest3")
    let root = try broker.connect()

    let said = try #require(alice.request("SAY @cbtest2 the secret").last)
    #expect(said.words[0...1] == ["OK", "SAY"])
    let (id, time) = (said.words[2], said.words[3])
    let hist = "HIST @cbtest1 \(id) \(time) cbtest1 :the secret"
    #expect(try bob.readLine() == "MSG @cbtest1 \(id) \(time) cbtest1 :the secret")
    #expect(try bob.request("HISTORY @cbtest1") == [hist, "OK HISTORY @cbtest1 1"])
    #expect(
      try alice.request("HISTORY @cbtest2") == [
        "HIST @cbtest2 \(id) \(time) cbtest1 :the secret", "OK HISTORY @cbtest2 1",
      ])

    // Nobody else received it, and nobody else can read it back.
    for outsider in [eve, root] {
      #expect(try outsider.request("PING") == ["OK PING"])
      #expect(try outsider.request("HISTORY @cbtest1") == ["OK HISTORY @cbtest1 0"])
      #expect(try outsider.request("HISTORY @cbtest2") == ["OK HISTORY @cbtest2 0"])
      let anchored = try outsider.request("HISTORY @cbtest1 AFTER \(id)")
      #expect(anchored.count == 1 && anchored[0].hasPrefix("ERR HISTORY NOSUCHMSG :"))
    }
  }
}

import Foundation
import TestSupport
import Testing

/// Chatting through the real broker, as people and scripts do.
@Suite("Chat")
struct ChatTests {
  @Test(
    "two users see each other join, talk, part and disconnect; nobody gets their own MSG back",
    UnixUsers.required)
  func eventsBetweenTwoUsers() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let alice = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")

    #expect(try alice.request("JOIN #lobby") == ["OK JOIN #lobby 1"])
    #expect(try bob.request("join #Lobby") == ["OK JOIN #lobby 2"])
    #expect(try alice.readLine() == "JOIN #lobby cbtest1")

    let said = try #require(bob.request("SAY #lobby hello there").last)
    #expect(said.words.count == 4 && said.words[0...1] == ["OK", "SAY"])
    let id = said.words[2]
    let time = said.words[3]
    #expect(try alice.readLine() == "MSG #lobby \(id) \(time) cbtest1 :hello there")
    // Requests are answered in order, so an echoed MSG would come first.
    #expect(try bob.request("PING after-say") == ["OK PING after-say"])

    #expect(
      try alice.request("WHO #lobby") == [
        "MEMBER #lobby cbtest1", "MEMBER #lobby root", "OK WHO #lobby 2",
      ])
    #expect(try bob.request("ROOMS") == ["ROOM #lobby 2", "OK ROOMS 1"])

    #expect(try bob.request("PART #lobby") == ["OK PART #lobby"])
    #expect(try alice.readLine() == "PART #lobby cbtest1")
    #expect(try bob.request("PART #lobby").first?.hasPrefix("ERR PART NOTJOINED :") == true)

    // A second session of a user already there is no news to the room.
    let alice2 = try broker.connect()
    #expect(try alice2.request("JOIN #lobby") == ["OK JOIN #lobby 1"])
    #expect(try alice.request("PING quiet") == ["OK PING quiet"])

    #expect(try bob.request("JOIN #lobby") == ["OK JOIN #lobby 2"])
    #expect(try alice.readLine() == "JOIN #lobby cbtest1")
    #expect(try alice2.readLine() == "JOIN #lobby cbtest1")
    bob.finishWriting()  // nc -N then closes the connection
    #expect(try alice.readLine() == "PART #lobby cbtest1")
    #expect(try alice2.readLine() == "PART #lobby cbtest1")
    #expect(try alice.request("WHO #lobby") == ["MEMBER #lobby root", "OK WHO #lobby 1"])
  }

  @Test("HISTORY returns the latest, BEFORE and AFTER an id, oldest first")
  func history() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    let user = client.greeting.words[2]
    var ids: [String] = []
    var times: [String] = []
    for number in 1...6 {
      let reply = try #require(client.request("SAY #h :m\(number)").last)
      #expect(reply.words[0...1] == ["OK", "SAY"])
      ids.append(reply.words[2])
      times.append(reply.words[3])
    }
    func hist(_ numbers: ClosedRange<Int>) -> [String] {
      numbers.map { "HIST #h \(ids[$0 - 1]) \(times[$0 - 1]) \(user) :m\($0)" }
    }
    let cases: [(request: String, lines: [String])] = [
      ("HISTORY #h", hist(1...6) + ["OK HISTORY #h 6"]),
      ("history #H 2", hist(5...6) + ["OK HISTORY #h 2"]),
      ("HISTORY #h 2 BEFORE \(ids[3])", hist(2...3) + ["OK HISTORY #h 2"]),
      ("HISTORY #h 10 BEFORE \(ids[1])", hist(1...1) + ["OK HISTORY #h 1"]),
      ("HISTORY #h AFTER \(ids[1])", hist(3...6) + ["OK HISTORY #h 4"]),
      ("HISTORY #h 1 AFTER \(ids[1])", hist(3...3) + ["OK HISTORY #h 1"]),
      ("HISTORY #h AFTER \(ids[5])", ["OK HISTORY #h 0"]),
      ("HISTORY #elsewhere", ["OK HISTORY #elsewhere 0"]),
    ]
    for (request, lines) in cases {
      #expect(try client.request(request) == lines, "\(request)")
    }
    let unknown = try client.request("HISTORY #h BEFORE zz99")
    #expect(unknown.count == 1 && unknown[0].hasPrefix("ERR HISTORY NOSUCHMSG :"))
  }

  @Test("a direct message reaches the user's other sessions, named by the other party")
  func directMessageBetweenSessions() throws {
    let broker = try BrokerProcess().start()
    let first = try broker.connect()
    let second = try broker.connect()
    let user = first.greeting.words[2]
    let said = try #require(first.request("SAY @\(user) note to self").last)
    #expect(said.words[0...1] == ["OK", "SAY"])
    let (id, time) = (said.words[2], said.words[3])
    #expect(try second.readLine() == "MSG @\(user) \(id) \(time) \(user) :note to self")
    #expect(try first.request("PING") == ["OK PING"])
    #expect(
      try second.request("HISTORY @\(user)") == [
        "HIST @\(user) \(id) \(time) \(user) :note to self", "OK HISTORY @\(user) 1",
      ])
  }

  @Test("direct messages between two users: each names the other", UnixUsers.required)
  func directMessageBetweenUsers() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let alice = try broker.connect()
    let aliceElsewhere = try broker.connect()
    let bob = try broker.connect(as: "cbtest1")

    let toBob = try #require(alice.request("SAY @cbtest1 hi bob").last)
    let (id1, time1) = (toBob.words[2], toBob.words[3])
    #expect(try bob.readLine() == "MSG @root \(id1) \(time1) root :hi bob")
    #expect(try aliceElsewhere.readLine() == "MSG @cbtest1 \(id1) \(time1) root :hi bob")

    let toAlice = try #require(bob.request("say @root :hi alice").last)
    let (id2, time2) = (toAlice.words[2], toAlice.words[3])
    #expect(try alice.readLine() == "MSG @cbtest1 \(id2) \(time2) cbtest1 :hi alice")
    #expect(try aliceElsewhere.readLine() == "MSG @cbtest1 \(id2) \(time2) cbtest1 :hi alice")

    #expect(
      try alice.request("HISTORY @cbtest1") == [
        "HIST @cbtest1 \(id1) \(time1) root :hi bob",
        "HIST @cbtest1 \(id2) \(time2) cbtest1 :hi alice", "OK HISTORY @cbtest1 2",
      ])
    #expect(
      try bob.request("HISTORY @root") == [
        "HIST @root \(id1) \(time1) root :hi bob", "HIST @root \(id2) \(time2) cbtest1 :hi alice",
        "OK HISTORY @root 2",
      ])
  }

  @Test("pipelined requests are answered one by one, in order")
  func pipelining() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    let count = 2000
    var requests: [String] = []
    for number in 0..<count {
      requests.append(number % 2 == 0 ? "PING p\(number)" : "say #pipe n\(number)")
    }
    let replies = try client.pipeline(requests)
    var ids: [String] = []
    for (number, reply) in replies.enumerated() {
      if number % 2 == 0 {
        #expect(reply == ["OK PING p\(number)"])
      } else {
        #expect(reply.count == 1 && reply[0].words[0...1] == ["OK", "SAY"])
        ids.append(reply[0].words[2])
      }
    }
    // History holds the messages in the order they were sent, with the ids
    // their replies gave.
    let history = try client.request("HISTORY #pipe 1000")
    #expect(history.dropLast().map { $0.words[2] } == ids)
    #expect(history.dropLast().map { $0.freeText } == ids.indices.map { "n\(2 * $0 + 1)" })
    #expect(history.last == "OK HISTORY #pipe 1000")
  }

  @Test(
    "a shell pipeline posts with one command and prints both replies",
    arguments: ["nc -N -U ", "socat - UNIX-CONNECT:"], [["--no-sync"], []])
  func shellClient(command: String, options: [String]) throws {
    let broker = try BrokerProcess().start(options)
    // The last line has no LF: it is still processed, then the broker closes.
    let result = try runShell("printf 'JOIN #a\\nSAY #a hi' | \(command)\(broker.socketPath)")
    #expect(result.status == 0, "\(result.errors)")
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 4, "\(result.output)")
    #expect(lines.first?.hasPrefix("HELLO ") == true)
    #expect(lines.dropFirst().first == "OK JOIN #a 1")
    #expect(lines.dropFirst(2).first?.hasPrefix("OK SAY ") == true)
    #expect(lines.last == "", "the output ends with a LF")
    let client = try broker.connect()
    #expect(try client.request("HISTORY #a").last == "OK HISTORY #a 1")
  }

  @Test(
    "a line longer than 4096 bytes is refused and skipped; the connection goes on",
    arguments: [4097, 4100, 70_000])
  func tooLong(length: Int) throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    let prefix = "SAY #long "
    try client.line(prefix + String(repeating: "x", count: length - prefix.utf8.count))
    let reply = try #require(try client.readLine())
    #expect(reply.hasPrefix("ERR - TOOLONG :"))
    #expect(try client.request("PING still-here") == ["OK PING still-here"])
    #expect(try client.request("HISTORY #long") == ["OK HISTORY #long 0"])
  }

  @Test("a line of exactly 4096 bytes is accepted")
  func longestLine() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    let prefix = "SAY #long "
    let text = String(repeating: "y", count: 4096 - prefix.utf8.count)
    #expect(try client.request(prefix + text).first?.hasPrefix("OK SAY ") == true)
    #expect(try client.request("HISTORY #long").first?.freeText == text)
  }

  /// A stray byte, an overlong form, a surrogate, a cut sequence, a 5-byte form.
  static let invalidUTF8: [[UInt8]] = [
    [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF8, 0x88, 0x80, 0x80],
  ]

  @Test("a line that is not UTF-8 is refused; the connection goes on", arguments: invalidUTF8)
  func badUTF8(bytes: [UInt8]) throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    try client.sendBytes(Array("SAY #utf ab".utf8) + bytes + Array("cd\n".utf8))
    let reply = try #require(try client.readLine())
    #expect(reply.hasPrefix("ERR - BADUTF8 :"))
    #expect(try client.request("PING") == ["OK PING"])
    #expect(try client.request("HISTORY #utf") == ["OK HISTORY #utf 0"])
  }
}

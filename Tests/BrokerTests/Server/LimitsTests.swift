import Broker
import Dispatch
import Foundation
import Glibc
import TestSupport
import Testing

/// Limits and fairness: one client's excess never hurts the others
/// (chatbroker(7), Limits).
@Suite("Limits")
struct LimitsTests {
  @Test("the session past --sessions-per-user gets ERR - LIMIT and is closed")
  func sessionsPerUser() throws {
    let broker = try BrokerProcess().start(["--no-sync", "--sessions-per-user", "3"])
    var sessions = try (1...3).map { _ in try broker.connect() }
    let fourth = try LineClient(path: broker.socketPath)
    let refusal = try #require(try fourth.readLine())
    #expect(refusal.hasPrefix("ERR - LIMIT :"))
    #expect(try fourth.readLine() == nil, "the broker closes the refused connection")
    for session in sessions { #expect(try session.request("PING") == ["OK PING"]) }

    // Once one leaves, there is room again.
    #expect(try sessions.removeLast().request("QUIT") == ["OK QUIT"])
    let again = try LineClient(path: broker.socketPath)
    #expect(try again.readLine()?.hasPrefix("HELLO ") == true)
  }

  @Test(
    "--history-bytes-per-conversation keeps the newest texts within it, the newest always, across a compacting restart; 0 is refused"
  )
  func historyBytesPerConversation() throws {
    let broker = try BrokerProcess()
    let refused = try broker.runToExit([
      "--socket", broker.socketPath, "--state-dir", broker.stateDirectory,
      "--history-bytes-per-conversation", "0",
    ])
    #expect(refused.status == 64)
    #expect(refused.errors.contains("--history-bytes-per-conversation needs a whole number from 1"))

    let options = ["--no-sync", "--history-bytes-per-conversation", "100"]
    try broker.start(options)
    let alice = try broker.connect()
    let line = { (letter: String) in String(repeating: letter, count: 40) }
    for letter in ["a", "b", "c"] {
      #expect(try alice.request("SAY #notes \(line(letter))").first?.hasPrefix("OK SAY ") == true)
    }
    func kept(_ client: LineClient) throws -> [String] {
      try client.request("HISTORY #notes").dropLast().map { $0.freeText ?? "" }
    }
    #expect(try kept(alice) == [line("b"), line("c")])
    let long = String(repeating: "L", count: 150)
    _ = try alice.request("SAY #notes \(long)")
    #expect(try kept(alice) == [long])

    // Started again with a journal over --compact-min-size, which it
    // compacts soon after start-up.
    _ = try broker.stop()
    #expect(broker.journal.contains(line("c")), "the journal holds what was said until compacted")
    try broker.start(options + ["--compact-min-size", "200"])
    #expect(try kept(try broker.connect()) == [long])
    try broker.waitForLog("journal compacted")
    #expect(
      !broker.journal.contains(line("c")), "what history dropped, the journal drops when compacted")
  }

  @Test(
    "a reader that stops reading slows nobody (each batch within a second), and is closed past --output-limit (real time)"
  )
  func stalledReaderRealTime() throws {
    let broker = try BrokerProcess().start(["--no-sync", "--output-limit", "65536"])
    let stalled = try broker.connect()
    let reader = try broker.connect()
    let writer = try broker.connect()
    #expect(try stalled.request("JOIN #busy") == ["OK JOIN #busy 1"])
    #expect(try reader.request("JOIN #busy") == ["OK JOIN #busy 1"])

    // Far more than the socket buffers and the output limit together hold.
    let text = String(repeating: "z", count: 300)
    let batches = 30
    let perBatch = 100
    var slowest = 0.0
    for batch in 0..<batches {
      let started = Date()
      let numbers = (batch * perBatch)..<((batch + 1) * perBatch)
      _ = try writer.pipeline(numbers.map { "SAY #busy \($0) \(text)" })
      for number in numbers {
        let line = try reader.expect("MSG #busy ", timeout: 2)
        #expect(line.freeText == "\(number) \(text)")
      }
      slowest = max(slowest, Date().timeIntervalSince(started))
    }
    #expect(slowest < 1, "a batch of \(perBatch) reached the reader after \(slowest) s")
    try broker.waitForLog("limit reached\" limit=output")

    // When it reads at last: what was queued, in order and without gaps,
    // then BYE, then the end.
    let lines = try stalled.readToEnd()
    let messages = lines.filter { $0.hasPrefix("MSG ") }.map { $0.freeText ?? "" }
    #expect(!messages.isEmpty && messages.count < batches * perBatch)
    #expect(messages == (0..<messages.count).map { "\($0) \(text)" })
    #expect(lines.last?.hasPrefix("BYE :") == true)
    #expect(try reader.request("WHO #busy") == ["MEMBER #busy root", "OK WHO #busy 1"])
  }

  /// A client that quit is no session any more, so the sessions limit
  /// does not bound it; while its replies wait in the broker for it to
  /// read, its connection stays open (chatbroker(8), `--sessions-per-user`).
  @Test(
    "a client that asks for much, quits and never reads is closed after 5 s of taking nothing, and a user has at most as many such as sessions (real time)"
  )
  func quitWithoutReadingRealTime() throws {
    let broker = try BrokerProcess().start(["--no-sync", "--verbose", "--sessions-per-user", "2"])
    let writer = try broker.connect()
    let text = String(repeating: "h", count: 300)
    _ = try writer.pipeline((0..<1000).map { "SAY #big \($0) \(text)" })
    #expect(try writer.request("QUIT") == ["OK QUIT"])
    func count(_ text: String) -> Int { broker.log.components(separatedBy: text).count - 1 }
    /// 300 KB of history, more than the socket holds, under the 256 KiB
    /// that would keep its QUIT unread, then its QUIT; it reads nothing.
    func quitter() throws -> LineClient {
      let client = try LineClient(path: broker.socketPath)
      let quits = count("verb=QUIT")
      try client.send("HISTORY #big 1000\nQUIT\n")
      try waitUntil("its QUIT") { count("verb=QUIT") == quits + 1 }
      return client
    }
    /// The broker closed its end (a Unix socket says so at once, before
    /// what waits in it is read).
    func closedByBroker(_ client: LineClient) -> Bool {
      var watched = pollfd(fd: client.fd, events: 0, revents: 0)
      return poll(&watched, 1, 0) == 1 && watched.revents & Int16(POLLHUP) != 0
    }
    let quit = Date()
    let quitters = try (0..<2).map { _ in try quitter() }
    #expect(!broker.log.contains("limit=closing"), "two closing are within the limit")
    let third = try quitter()
    try broker.waitForLog("limit=closing")
    #expect(broker.log.contains("user=root closing=2"))
    try waitUntil(timeout: 2, "the third closed at once") { closedByBroker(third) }
    #expect(!quitters.contains(where: closedByBroker), "the two wait to be read")
    try waitUntil(timeout: 15, "the two closed") { quitters.allSatisfy(closedByBroker) }
    #expect(
      Date().timeIntervalSince(quit) >= Double(Server.lingerMilliseconds) / 1000,
      "closed before they took nothing for 5 s")
    // What the kernel took before the close stays readable, then the end
    // (inside a line: the rest of it was not taken).
    var taken: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while case let count = Glibc.read(quitters[0].fd, &buffer, buffer.count), count > 0 {
      taken += buffer[0..<count]
    }
    let read = String(decoding: taken, as: UTF8.self)
    #expect(read.hasPrefix("HELLO ") && read.contains("\nHIST #big "))
    #expect(!read.contains("OK QUIT"), "all of it was taken after all")
    withExtendedLifetime(third) {}
  }

  @Test("a client flooding pipelined SAYs without reading does not slow another's PING (real time)")
  func floodingSenderRealTime() throws {
    let broker = try BrokerProcess().start()
    let flooder = try broker.connect()
    let other = try broker.connect()
    #expect(try other.request("JOIN #flood") == ["OK JOIN #flood 1"])
    let count = 30_000
    let sent = DispatchSemaphore(value: 0)
    let flood = (0..<count).map { "SAY #flood f\($0)\n" }.joined()
    Thread.detachNewThread {
      try? flooder.send(flood)
      sent.signal()
    }
    // The PINGs go in while the broker works through the flood: the other
    // client sees its MSGs before, between and after the PING replies.
    var received = [try other.expect("MSG #flood ")]
    var slowest = 0.0
    for round in 0..<20 {
      let started = Date()
      let lines = try other.request("PING \(round)")
      slowest = max(slowest, Date().timeIntervalSince(started))
      #expect(lines.last == "OK PING \(round)")
      received += lines.dropLast()
    }
    #expect(slowest < 0.5, "a PING took \(slowest) s during the flood")
    #expect(received.count < count, "the PINGs were answered while the flood went on")

    // Back-pressure slows the flooder; it never loses or refuses a line.
    for number in 0..<count {
      let reply = try #require(try flooder.readLine())
      #expect(reply.hasPrefix("OK SAY "), "reply \(number): \(reply)")
    }
    #expect(sent.wait(timeout: .now() + 10) == .success)
    while received.count < count { received.append(try #require(try other.readLine())) }
    #expect(received.map { $0.freeText ?? $0 } == (0..<count).map { "f\($0)" })
  }
}

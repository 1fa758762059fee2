import Broker
import Dispatch
import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// IRC through a failed journal sync (chatbroker(7), "Order and
/// durability"): the lines held for the sync are settled as on the line
/// protocol, and each still reads as the answer to the IRC command that
/// asked it. The real Server and FileJournal in this process, with the
/// tests' flaky disk in place of fdatasync; the IRC client is this
/// process's user, so its nick is that user's login name.
@Suite("IRC through a failed journal sync")
struct IRCSyncFailureTests {
  let nick = SystemUsers().name(of: getuid())
  var mask: String { "\(nick)!\(nick)@host.test" }
  /// What the broker says of a sync that failed (the tests' disk fails
  /// with EIO).
  let storageError =
    "the journal could not be synced (Input/output error); nothing was accepted, try again"

  @Test("a PRIVMSG whose sync fails is answered 404 naming its room, and is never echoed or shown")
  func privmsg() throws {
    let broker = try FailingDiskBroker()
    defer { broker.stop() }
    let reader = try broker.lineClient()
    #expect(try reader.request("JOIN #a") == ["OK JOIN #a 1"])
    let irc = try broker.ircClient(nick: nick, caps: ["echo-message"])
    try irc.ircLine("JOIN #a")
    _ = try irc.expectIRC(" 366 ")

    broker.disk.fails = true
    try irc.ircLine("PRIVMSG #a :lost")
    try irc.ircLine("PING :after")
    let answer = try irc.linesUntil(" PONG ")
    #expect(
      answer == [
        ":host.test 404 \(nick) #a :\(storageError)",
        ":host.test PONG host.test :after",
      ], "the error names the room it was sent to; no echo of what was not kept")
    broker.disk.fails = false
    #expect(try reader.request("HISTORY #a") == ["OK HISTORY #a 0"], "nobody sees it")
  }

  @Test("a labeled PRIVMSG held for its sync carries its label, whether the sync fails or not")
  func labeled() throws {
    let broker = try FailingDiskBroker()
    defer { broker.stop() }
    let reader = try broker.lineClient()
    #expect(try reader.request("JOIN #a") == ["OK JOIN #a 1"])
    let irc = try broker.ircClient(
      nick: nick, caps: ["echo-message", "batch", "labeled-response"])
    try irc.ircLine("JOIN #a")
    _ = try irc.expectIRC(" 366 ")

    broker.disk.fails = true
    try irc.ircLine("@label=lost PRIVMSG #a :lost")
    try irc.ircLine("@label=kept PING :after")
    #expect(
      try irc.linesUntil(" PONG ") == [
        "@label=lost :host.test 404 \(nick) #a :\(storageError)",
        "@label=kept :host.test PONG host.test :after",
      ])
    broker.disk.fails = false
    try irc.ircLine("@label=said PRIVMSG #a :kept")
    #expect(try irc.expectIRC(" PRIVMSG ") == "@label=said :\(mask) PRIVMSG #a :kept")
  }

  @Test("a CHATHISTORY that showed an unsynced line is answered again in the same one batch")
  func chathistory() throws {
    let broker = try FailingDiskBroker()
    defer { broker.stop() }
    let writer = try broker.lineClient()
    #expect(try writer.request("SAY #a kept").last?.hasPrefix("OK SAY ") == true)
    let irc = try broker.ircClient(nick: nick, caps: ["batch", "draft/chathistory"])

    broker.disk.fails = true
    broker.disk.hold()
    try writer.line("SAY #a lost")
    try broker.disk.waitForHangingSync()
    try irc.ircLine("CHATHISTORY LATEST #a * 10")
    try irc.ircLine("PING :after")
    broker.disk.release()
    let answer = try irc.linesUntil(" PONG ")
    let writerSource = "\(nick)!\(nick)@host.test"
    #expect(
      answer == [
        ":host.test BATCH +h1 chathistory #a",
        "@batch=h1 :\(writerSource) PRIVMSG #a :kept",
        ":host.test BATCH -h1",
        ":host.test PONG host.test :after",
      ], "one batch, begun and ended once, without the line that was lost")
    #expect(try writer.readLine()?.hasPrefix("ERR SAY STORAGE ") == true)
  }

  @Test(
    "a JOIN whose sync fails is a NOTICE alone: no names, no backlog, and the room is not joined")
  func join() throws {
    let broker = try FailingDiskBroker()
    defer { broker.stop() }
    let writer = try broker.lineClient()
    #expect(try writer.request("SAY #a before").last?.hasPrefix("OK SAY ") == true)
    let irc = try broker.ircClient(nick: nick)

    broker.disk.fails = true
    try irc.ircLine("JOIN #a")
    try irc.ircLine("PING :after")
    let answer = try irc.linesUntil(" PONG ")
    #expect(
      answer == [
        ":host.test NOTICE \(nick) :JOIN #a refused: \(storageError)",
        ":host.test PONG host.test :after",
      ])
    broker.disk.fails = false
    #expect(try writer.request("WHO #a") == ["OK WHO #a 0"], "nobody is in the room")
    try irc.ircLine("JOIN #a")
    try irc.ircLine("PING :joined")
    let joined = try irc.linesUntil(" PONG ")
    #expect(joined.first == ":\(mask) JOIN #a")
    // Without server-time, a backlog line begins with its clock time.
    #expect(
      joined.contains { $0.contains(" PRIVMSG #a :[") && $0.hasSuffix("] before") },
      "the backlog, this time")
  }
}

/// A broker on a disk whose syncs fail on demand, with a line-protocol
/// socket and an IRC socket, in a temporary directory.
private final class FailingDiskBroker {
  let directory: String
  let disk = FlakyDisk()
  private let server: Server

  init() throws {
    directory = try makeShortTemporaryDirectory("cb-ircsync")
    let journal = try FileJournal(directory: directory + "/state")
    let clock = SystemClock()
    _ = try journal.load(repair: false, now: clock.now) { _ in }
    let users = SystemUsers()
    let committer = JournalCommitter(
      journal: journal, synchronize: { [disk] in disk.synchronize($0) })
    let engine = Engine(clock: clock, users: users, journal: committer)
    var options = Server.Options()
    options.serverName = "host.test"
    let queue = DispatchQueue(label: "irc-sync-failure-test")
    server = try Server(
      queue: queue, engine: engine, committer: committer, users: users, options: options,
      log: Logger(sink: nil))
    let line = try UnixSocket.bind(path: directory + "/sock")
    let irc = try UnixSocket.bind(path: directory + "/irc.sock")
    try queue.sync { [server] in
      try server.listen(on: line)
      try server.listen(on: irc, wire: .irc)
      engine.finishReplay()
    }
  }

  func lineClient() throws -> LineClient {
    let client = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try client.expect("HELLO ")
    return client
  }

  /// Registered, with `caps` acknowledged, its welcome burst read.
  func ircClient(nick: String, caps: [String] = []) throws -> LineClient {
    let client = try LineClient(path: directory + "/irc.sock", timeout: 5)
    if !caps.isEmpty {
      try client.ircLine("CAP REQ :\(caps.joined(separator: " "))")
      _ = try client.expectIRC(" CAP * ACK ")
    }
    try client.ircLine("NICK \(nick)")
    try client.ircLine("USER \(nick) 0 * :\(nick)")
    if !caps.isEmpty { try client.ircLine("CAP END") }
    _ = try client.expectIRC(" 422 ")
    return client
  }

  func stop() {
    disk.release()
    try? FileManager.default.removeItem(atPath: directory)
  }
}

extension LineClient {
  /// Sends one IRC line, CR LF ended.
  fileprivate func ircLine(_ line: String) throws {
    try send(line + "\r\n")
  }

  /// Reads IRC lines until one containing `marker`, and returns it.
  fileprivate func expectIRC(_ marker: String) throws -> String {
    try linesUntil(marker).last!
  }

  /// The IRC lines read up to and including the first containing
  /// `marker`, without CR.
  fileprivate func linesUntil(_ marker: String) throws -> [String] {
    var lines: [String] = []
    while let line = try readLine() {
      let text = line.hasSuffix("\r") ? String(line.dropLast()) : line
      lines.append(text)
      if text.contains(marker) { return lines }
    }
    throw TestFailure("the stream ended before a line with \(marker); got \(lines)")
  }
}

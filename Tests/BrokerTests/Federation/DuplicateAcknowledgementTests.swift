import Broker
import Dispatch
import Foundation
import LineProtocol
import Posix
import TestSupport
import Testing

/// The stream de-duplicates by `Nats-Msg-Id` alone, whatever subject a
/// message came under: a line it acknowledges as a duplicate is stored
/// only if the message it kept is that line (chatbroker(8),
/// "FEDERATION"). The broker in process, with a link that records what it
/// is given and the link's reports made by hand: the line's reader tells
/// whether the message kept was the line, and a line that was not is
/// logged and published again under a new key.
@Suite("Federation: a line acknowledged as a duplicate is checked by its reader")
struct DuplicateAcknowledgementTests {
  static let created = Timestamp(rfc3339: "2026-11-30T16:00:00.000Z")!
  let lines = EngineFederationTests()

  /// A link that keeps the lines it is given, keys and all.
  final class KeepingLink: FederationLink, @unchecked Sendable {
    private let lock = NSLock()
    private var given: [OutboxLine] = []
    private var givenAgain: [OutboxLine] = []
    var published: [OutboxLine] { lock.withLock { given } }
    var republished: [OutboxLine] { lock.withLock { givenAgain } }
    func publish(_ lines: [OutboxLine]) { lock.withLock { given += lines } }
    func republish(_ lines: [OutboxLine]) { lock.withLock { givenAgain += lines } }
    func announce(_ room: RoomName, users: [String]) {}
    func restart(after sequences: StreamSequences, epoch: Int) {}
  }

  /// The broker's log, line by line.
  final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var all: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }
  }

  /// Node h1 sharing `#ops`, reading the stream created at ``created``,
  /// and a client of root's.
  struct Host {
    let directory: TemporaryDirectory
    let server: Server
    let link = KeepingLink()
    let log = LogLines()
    let client: LineClient

    init() throws {
      directory = try TemporaryDirectory("cb-dup")
      let journal = try FileJournal(directory: directory.path("state"))
      let clock = SystemClock()
      _ = try journal.load(repair: false, now: clock.now) { _ in }
      let users = SystemUsers()
      let committer = JournalCommitter(journal: journal, syncs: false)
      let engine = Engine(clock: clock, users: users, journal: committer)
      engine.federate(FederationSettings(node: "h1", patterns: ["#ops"]))
      let queue = DispatchQueue(label: "duplicate-acknowledgement-test")
      let log = self.log
      server = try Server(
        queue: queue, engine: engine, committer: committer, users: users,
        options: Server.Options(), log: Logger(sink: { log.append($0) }))
      let fd = try UnixSocket.bind(path: directory.path("sock"))
      try queue.sync { [server, link] in
        try server.listen(on: fd)
        engine.finishReplay()
        server.attachFederation(link)
        engine.streamHoldsOwnLines(upTo: nil)
        engine.streamFound(created: DuplicateAcknowledgementTests.created)
      }
      client = try LineClient(path: directory.path("sock"))
      _ = try client.expect("HELLO ")
    }

    /// Says `text` in `#ops` and answers the outbox line the link got.
    func say(_ text: String) throws -> OutboxLine {
      #expect(try client.request("SAY #ops :\(text)").last?.hasPrefix("OK SAY ") == true)
      var line: OutboxLine?
      try waitUntil(timeout: 10, "the link to be given \(text)") {
        line = link.published.first { $0.text == text }
        return line != nil
      }
      return line!
    }

    /// The warnings about forged duplicates logged so far.
    var forgeryWarnings: [String] {
      log.all.filter { $0.contains("the stream took another node's message for this node's line") }
    }
  }

  @Test(
    "a line whose duplicate is another node's message (its reader read past it, and it did not come back) is logged and published again under a new key"
  )
  func forgedDuplicateIsPublishedAgain() throws {
    let host = try Host()
    let line = try host.say("swallowed")
    #expect(line.dedupKey != nil)
    host.server.duplicateAcknowledged(line, sequence: 5, streamCreated: Self.created)
    // The message the stream kept, at 5: another node's.
    host.server.deliver(
      [lines.line(5, node: "h2", origin: 1, user: "bob", text: "theirs")], reader: .rooms,
      through: 5, epoch: 0)
    try waitUntil(timeout: 10, "the line to be published again") {
      !host.link.republished.isEmpty
    }
    let again = host.link.republished
    #expect(again.map(\.id) == [line.id] && again.map(\.text) == ["swallowed"])
    #expect(again[0].dedupKey != nil && again[0].dedupKey != line.dedupKey, "a new key")
    #expect(
      host.forgeryWarnings == [
        "level=warning msg=\"the stream took another node's message for this node's line: publishing it again\" node=h1 id=\(line.id) to=#ops stream_seq=5\n"
      ])
  }

  @Test("a duplicate whose message the reader had already passed, ignored, is known at once")
  func alreadyPassedDuplicate() throws {
    let host = try Host()
    let line = try host.say("swallowed")
    // The reader read up to 7, a message it ignored, before the
    // acknowledgement came.
    host.server.deliver([], reader: .rooms, through: 7, epoch: 0)
    host.server.duplicateAcknowledged(line, sequence: 7, streamCreated: Self.created)
    try waitUntil(timeout: 10, "the line to be published again") {
      host.link.republished.map(\.id) == [line.id]
    }
    #expect(host.forgeryWarnings.count == 1)
  }

  @Test(
    "a line acknowledged as a duplicate of itself (sent again) is not published again, whether it came back before or after the acknowledgement; nor is a duplicate in a stream since replaced"
  )
  func ownDuplicateIsStored() throws {
    let host = try Host()
    let first = try host.say("sent twice")
    let second = try host.say("sent twice too")
    let third = try host.say("in the old stream")
    host.server.duplicateAcknowledged(first, sequence: 3, streamCreated: Self.created)
    host.server.deliver(
      [EngineFederationScheduleTests.echo(first, sequence: 3)], reader: .rooms, through: 3, epoch: 0
    )
    host.server.deliver(
      [EngineFederationScheduleTests.echo(second, sequence: 4)], reader: .rooms, through: 4,
      epoch: 0)
    host.server.duplicateAcknowledged(second, sequence: 4, streamCreated: Self.created)
    host.server.duplicateAcknowledged(
      third, sequence: 2, streamCreated: Timestamp(rfc3339: "2026-11-30T15:00:00.000Z")!)
    // A last line back from the stream: once it is shown, the reports
    // before it have been dealt with.
    let last = try host.say("last")
    host.server.deliver(
      [EngineFederationScheduleTests.echo(last, sequence: 5)], reader: .rooms, through: 5, epoch: 0)
    try waitUntil(timeout: 10, "the last line to come back") {
      try host.client.request("HISTORY #ops").count == 4
    }
    #expect(host.link.republished.isEmpty)
    #expect(host.forgeryWarnings.isEmpty)
  }
}

import Broker
import Dispatch
import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// A disk whose fdatasync can be made to fail, as a dying disk's does, and
/// made to hang until released, so a test can act while a sync runs.
final class FlakyDisk: @unchecked Sendable {
  private let condition = NSCondition()
  private var failing = false
  private var holding = false
  private var blocked = 0
  private var breaking = false
  private var delay: useconds_t = 0

  var fails: Bool {
    get { condition.withLock { failing } }
    set { condition.withLock { failing = newValue } }
  }

  /// A failing sync also leaves the journal's descriptor on a device that
  /// cannot be cut back (`ftruncate` fails), as a disk gone for good would.
  var breaksFile: Bool {
    get { condition.withLock { breaking } }
    set { condition.withLock { breaking = newValue } }
  }

  /// From now on each sync takes at least this many milliseconds, as on
  /// a slow disk.
  var slowness: Int {
    get { condition.withLock { Int(delay / 1000) } }
    set { condition.withLock { delay = useconds_t(newValue * 1000) } }
  }

  /// From now on each sync waits until ``release()``.
  func hold() {
    condition.withLock { holding = true }
  }

  func release() {
    condition.withLock {
      holding = false
      condition.broadcast()
    }
  }

  /// Waits (bounded) until a sync hangs in ``hold()``: then every record
  /// written before it started is in the journal.
  func waitForHangingSync(timeout: Double = 10) throws {
    try waitUntil(timeout: timeout, "a sync to start") { condition.withLock { blocked > 0 } }
  }

  func synchronize(_ fd: Int32) -> Int32 {
    condition.lock()
    blocked += 1
    while holding { condition.wait() }
    blocked -= 1
    let fail = failing
    let breaks = breaking
    let delay = delay
    condition.unlock()
    if delay > 0 { usleep(delay) }
    if fail && breaks {
      let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
      dup2(null, fd)
      close(null)
    }
    if fail {
      errno = EIO
      return -1
    }
    return fdatasync(fd)
  }
}

@Suite("A failed journal sync")
struct SyncFailureTests {
  /// The real Server and FileJournal in this process, with fdatasync
  /// replaced by one that fails on demand.
  @Test("answers STORAGE to the requests it held, shows nothing unsaved, and the broker goes on")
  func refusesWhatItHeld() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    let reader = try startServer(in: directory, disk: disk)
    let writer = try LineClient(path: directory + "/sock")
    _ = try writer.expect("HELLO ")
    #expect(try reader.request("JOIN #a").last == "OK JOIN #a 1")
    #expect(try writer.request("SAY #a one").last?.hasPrefix("OK SAY ") == true)
    #expect(try reader.expect("MSG #a ").hasSuffix(":one"))

    disk.fails = true
    let refused = try writer.request("SAY #a two")
    #expect(refused.count == 1)
    #expect(refused.first?.hasPrefix("ERR SAY STORAGE :the journal could not be synced") == true)
    let refusedLater = try writer.request("SAYAT #a +1h three")
    #expect(refusedLater.first?.hasPrefix("ERR SAYAT STORAGE :") == true)

    disk.fails = false
    #expect(try writer.request("PING still") == ["OK PING still"], "the broker goes on")
    #expect(try writer.request("SCHEDULED") == ["OK SCHEDULED 0"])
    #expect(try writer.request("SAY #a four").last?.hasPrefix("OK SAY ") == true)
    // The reader never saw "two": the next line it gets is "four".
    #expect(try reader.expect("MSG #a ").hasSuffix(":four"))
    let history = try reader.request("HISTORY #a").dropLast().map { $0.split(separator: ":").last! }
    #expect(history == ["one", "four"])
    let journal = try String(contentsOfFile: directory + "/state/journal.jsonl", encoding: .utf8)
    #expect(journal.contains("\"one\"") && journal.contains("\"four\""))
    #expect(!journal.contains("\"two\"") && !journal.contains("\"three\""))
  }

  /// With one connection waiting, the engine's thread syncs itself
  /// (chatbroker(8)'s journal committer): on a slow disk it must stop, or
  /// everyone would wait for every sync.
  @Test("on a slow disk a writer's syncs run beside the engine, and others are answered meanwhile")
  func slowDiskSyncsOnTheThread() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    disk.slowness = 20
    let writer = try startServer(in: directory, disk: disk)
    let other = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try other.expect("HELLO ")
    #expect(try writer.request("SAY #a slow").last?.hasPrefix("OK SAY ") == true)

    disk.hold()
    defer { disk.release() }
    try writer.line("SAY #a held")
    try disk.waitForHangingSync()
    #expect(try other.request("PING meanwhile") == ["OK PING meanwhile"])
    disk.release()
    #expect(try writer.expect("OK SAY ").hasPrefix("OK SAY "))
  }

  @Test(
    "while a sync hangs, a newcomer is greeted and PING answered at once; what else is asked waits, and after the failure is answered from what was kept"
  )
  func failureHarmsOnlyWhatItHeld() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    let reader = try startServer(in: directory, disk: disk)
    let writer = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try writer.expect("HELLO ")
    let member = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try member.expect("HELLO ")
    #expect(try reader.request("JOIN #a").last == "OK JOIN #a 1")
    #expect(try writer.request("SAY #a one").last?.hasPrefix("OK SAY ") == true)
    #expect(try reader.expect("MSG #a ").hasSuffix(":one"))
    #expect(try writer.request("SAY #b saved").last?.hasPrefix("OK SAY ") == true)
    #expect(try member.request("JOIN #b") == ["OK JOIN #b 1"])

    // "two" is written, and its sync hangs, then fails.
    disk.fails = true
    disk.hold()
    try writer.send("SAY #a two\nPING behind\n")
    try disk.waitForHangingSync()
    let newcomer = try LineClient(path: directory + "/sock", timeout: 5)
    #expect(try newcomer.expect("HELLO ").hasPrefix("HELLO "), "greeted at once")
    #expect(try newcomer.request("PING") == ["OK PING"], "PING shows no state: at once")
    // Every other reply waits for the records before it (chatbroker(7),
    // "Order and durability"), and is answered again after the failure.
    try newcomer.line("HISTORY #b")
    try member.send("JOIN #b\nPART #b\n")
    try reader.line("HISTORY #a")
    disk.release()

    let saved = [try newcomer.readLine(), try newcomer.readLine()]
    #expect(saved.first??.hasSuffix(":saved") == true)
    #expect(saved.last == "OK HISTORY #b 1")
    #expect(try member.readLine() == "OK JOIN #b 1", "#b is member's: asked again, the same")
    #expect(
      try member.readLine()?.hasPrefix("ERR PART STORAGE ") == true,
      "its leave record was written while the sync hung: rolled back with it")
    // The SAY is refused; the PING behind it is answered, after it.
    let refused = try writer.readLine()
    #expect(refused?.hasPrefix("ERR SAY STORAGE :the journal could not be synced") == true)
    #expect(try writer.readLine() == "OK PING behind")
    let history = try reader.expect("OK HISTORY #a")
    #expect(history == "OK HISTORY #a 1")

    disk.fails = false
    #expect(try writer.request("SAY #a three").last?.hasPrefix("OK SAY ") == true)
    #expect(try reader.expect("MSG #a ").hasSuffix(":three"), "\"two\" never reached anyone")
    let texts = try member.dataLines("HISTORY #a").filter { $0.hasPrefix("HIST ") }.map {
      $0.freeText ?? ""
    }
    #expect(texts == ["one", "three"])
    let restarted = try replayed(directory)
    let alice = restarted.connect("alice")
    #expect(restarted.send(alice, "HISTORY #a").dropLast().map { $0.freeText } == ["one", "three"])
  }

  @Test(
    "a JOIN whose room a failed sync loses is answered STORAGE and leaves nobody in it; the lost SAY leaves nothing"
  )
  func roomWithMembersSurvives() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    let reader = try startServer(in: directory, disk: disk)
    let writer = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try writer.expect("HELLO ")

    disk.fails = true
    disk.hold()
    try writer.line("SAY #lost hello")
    try disk.waitForHangingSync()
    // Making #kept the reader's is a record: the reply waits for its sync.
    try reader.line("JOIN #kept")
    disk.release()
    #expect(try writer.readLine()?.hasPrefix("ERR SAY STORAGE ") == true)
    #expect(try reader.readLine()?.hasPrefix("ERR JOIN STORAGE ") == true)
    disk.fails = false

    let rooms = try reader.dataLines("ROOMS")
    #expect(!rooms.contains { $0.hasPrefix("ROOM #kept ") })
    #expect(!rooms.contains { $0.hasPrefix("ROOM #lost ") })
    #expect(try reader.dataLines("WHO #kept").isEmpty)
    #expect(try reader.request("JOIN #kept") == ["OK JOIN #kept 1"], "the sync works again")
    let restarted = try replayed(directory)
    let alice = restarted.connect("alice")
    let replayedRooms = restarted.send(alice, "ROOMS")
    #expect(!replayedRooms.contains { $0.hasPrefix("ROOM #lost ") })
    #expect(replayedRooms.contains { $0.hasPrefix("ROOM #kept ") }, "joined once the sync worked")
    #expect(restarted.send(alice, "HISTORY #lost") == ["OK HISTORY #lost 0"])
    let journal = try String(contentsOfFile: directory + "/state/journal.jsonl", encoding: .utf8)
    #expect(!journal.contains("hello"))
  }

  /// The engine a restart would build from the journal as it is on disk.
  private func replayed(_ directory: String) throws -> EngineHarness {
    let harness = EngineHarness()
    let contents = try String(contentsOfFile: directory + "/state/journal.jsonl", encoding: .utf8)
    // The records end where the zeros written ahead of them begin.
    for line in contents.prefix(while: { $0 != "\0" }).split(separator: "\n") {
      let bytes = Array(line.utf8)
      let record = try bytes.withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
      harness.engine.replay(record)
      harness.journal.records.append(record)
    }
    harness.engine.finishReplay()
    return harness
  }

  @Test(
    "a journal that cannot even be cut back after a failed sync is reported to the caller, and what it held is never shown"
  )
  func unrecoverableJournalIsReported() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    let reported = NSCondition()
    nonisolated(unsafe) var failure: String?
    let reader = try startServer(in: directory, disk: disk) { unrecoverable in
      reported.withLock { failure = unrecoverable.description }
    }
    let writer = try LineClient(path: directory + "/sock")
    _ = try writer.expect("HELLO ")
    #expect(try reader.request("JOIN #a").last == "OK JOIN #a 1")

    disk.breaksFile = true
    disk.fails = true
    try writer.line("SAY #a lost")
    try waitUntil(timeout: 10, "the failure to be reported") {
      reported.withLock { failure != nil }
    }
    let text = try #require(reported.withLock { failure })
    #expect(text.contains("journal.jsonl cannot be recovered"))
    // Neither the author's OK nor the reader's MSG: nothing unsaved shows.
    #expect(throws: TestFailure.self) { try writer.readLine(timeout: 0.3) }
    #expect(throws: TestFailure.self) { try reader.readLine(timeout: 0.3) }
  }

  /// The committer's durable count is the one the federation outbox waits
  /// for too (chatbroker(8), "FEDERATION"): a line published and then
  /// rolled back would reach other hosts though its author was told
  /// `STORAGE`.
  @Test(
    "a shared room's line is published only once the committer counts it durable, and never after its sync failed"
  )
  func outboxWaitsForTheDurableCount() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    let link = RecordingLink()
    let writer = try startServer(in: directory, disk: disk, federation: link)

    disk.hold()
    defer { disk.release() }
    try writer.line("SAY #ops held")
    try disk.waitForHangingSync()
    #expect(throws: TestFailure.self) { try writer.readLine(timeout: 0.3) }
    #expect(link.published == [], "nothing is published before its sync returns")
    disk.release()
    #expect(try writer.expect("OK SAY ").hasPrefix("OK SAY "))
    try waitUntil(timeout: 10, "the line to be published") { link.published == ["held"] }

    disk.fails = true
    #expect(try writer.request("SAY #ops lost").first?.hasPrefix("ERR SAY STORAGE ") == true)
    disk.fails = false
    #expect(try writer.request("SAY #ops kept").last?.hasPrefix("OK SAY ") == true)
    try waitUntil(timeout: 10, "the next line to be published") { link.published.count >= 2 }
    #expect(link.published == ["held", "kept"])
  }

  /// A link that only records what it is given to publish.
  final class RecordingLink: FederationLink, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var published: [String] { lock.withLock { lines } }
    func publish(_ lines: [OutboxLine]) { lock.withLock { self.lines += lines.map(\.text) } }
    func republish(_ lines: [OutboxLine]) { publish(lines) }
    func announce(_ room: RoomName, users: [String]) {}
    func restart(after sequences: StreamSequences, epoch: Int) {}
  }

  @Test(
    "a client that half-closed while its replies waited for a failed sync still gets one reply per request, in order"
  )
  func halfClosedDuringFailedSync() throws {
    let directory = try makeShortTemporaryDirectory("cb-sync")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let disk = FlakyDisk()
    var sessions: () -> Int = { 0 }
    let writer = try startServer(in: directory, disk: disk, sessions: &sessions)
    let client = try LineClient(path: directory + "/sock", timeout: 5)
    _ = try client.expect("HELLO ")
    // A slow sync first, so that the next one runs on the sync thread and
    // the engine's queue stays free to be asked how many sessions it has.
    disk.slowness = 20
    #expect(try writer.request("SAY #a slow").last?.hasPrefix("OK SAY ") == true)
    disk.slowness = 0
    disk.fails = true
    disk.hold()
    try writer.send("SAY #a x\n")
    try disk.waitForHangingSync()
    // Each reply waits for "x"; the client is gone from the engine before
    // the sync fails, so these can no longer be answered again.
    try client.send("CANCEL 1z\nHISTORY #a 5 BEFORE 1\nPING end\n")
    client.finishWriting()
    try waitUntil(timeout: 5, "the client's session to end") { sessions() == 1 }
    disk.release()
    var lines: [String] = []
    while let line = try client.readLine() { lines.append(line) }
    #expect(lines.count == 3, "\(lines)")
    #expect(lines.first?.hasPrefix("ERR CANCEL STORAGE ") == true)
    #expect(lines.dropFirst().first?.hasPrefix("ERR HISTORY STORAGE ") == true)
    #expect(lines.last == "OK PING end")
  }

  private func startServer(
    in directory: String, disk: FlakyDisk,
    federation link: FederationLink? = nil,
    onJournalFailure: ((JournalUnrecoverable) -> Void)? = nil,
    sessions: UnsafeMutablePointer<() -> Int>? = nil
  ) throws -> LineClient {
    let journal = try FileJournal(directory: directory + "/state")
    let clock = SystemClock()
    _ = try journal.load(repair: false, now: clock.now) { _ in }
    let users = SystemUsers()
    let committer = JournalCommitter(journal: journal, synchronize: { disk.synchronize($0) })
    let engine = Engine(clock: clock, users: users, journal: committer)
    if link != nil { engine.federate(FederationSettings(node: "h1", patterns: ["#ops"])) }
    let queue = DispatchQueue(label: "sync-failure-test")
    let server = try Server(
      queue: queue, engine: engine, committer: committer, users: users, options: Server.Options(),
      log: Logger(sink: nil))
    server.onJournalFailure = onJournalFailure
    sessions?.pointee = { queue.sync { engine.connectionCount } }
    let fd = try UnixSocket.bind(path: directory + "/sock")
    try queue.sync {
      try server.listen(on: fd)
      engine.finishReplay()
      if let link {
        server.attachFederation(link)
        // What a real link reports first: this node has no line in the
        // stream yet, so shared SAY may hand out ids.
        engine.streamHoldsOwnLines(upTo: nil)
      }
    }
    let client = try LineClient(path: directory + "/sock")
    _ = try client.expect("HELLO ")
    return client
  }
}

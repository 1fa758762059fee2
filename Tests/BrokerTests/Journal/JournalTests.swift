import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// The journal on the real binary: state survives restarts, damage is
/// handled as the broker says, and a full disk refuses rather than lies
/// (chatbroker(8), FILES). Brokers here sync (no `--no-sync`) where
/// durability is the point.
@Suite("Journal")
struct JournalTests {
  /// What a user can see of the durable state (member counts aside: nobody
  /// is connected after a restart).
  private func durableState(_ client: LineClient, user: String) throws -> [String] {
    var lines = try client.dataLines("ROOMS").map { $0.words[1] }
    for target in ["#a", "#b", "@\(user)"] {
      lines += try client.dataLines("HISTORY \(target)")
    }
    return lines + (try client.dataLines("SCHEDULED"))
  }

  @Test("a restart keeps rooms, history and pending schedules; ids are never reused")
  func restartKeepsState() throws {
    let broker = try BrokerProcess().start([])
    let client = try broker.connect()
    let user = client.greeting.words[2]
    let requests = [
      "JOIN #a", "SAY #a one", "SAY #a :two: with a colon", "SAY #b three", "SAY @\(user) four",
      "SAYAT #a +1h five", "SAYAT @\(user) +2h six", "SAYAT #b +3h seven",
    ]
    let replies = try client.pipeline(requests)
    #expect(replies.allSatisfy { $0.count == 1 && $0[0].hasPrefix("OK ") }, "\(replies)")
    #expect(try client.request("CANCEL \(replies[7][0].words[2])").first?.hasPrefix("OK ") == true)
    let before = try durableState(client, user: user)
    #expect(before.count == 2 + 4 + 2, "\(before)")
    #expect(try broker.stop() == 0)

    try broker.start([])
    let after = try broker.connect()
    #expect(try durableState(after, user: user) == before)
    let usedIDs = Set(replies.map { $0[0].words[2] })
    let fresh = try #require(after.request("SAY #a eight").last)
    #expect(fresh.hasPrefix("OK SAY ") && !usedIDs.contains(fresh.words[2]), "\(fresh)")
  }

  @Test("schedules that fell due while the broker was stopped are delivered once, in due order")
  func dueWhileStopped() throws {
    let broker = try BrokerProcess().start([])
    let author = try broker.connect()
    // Written latest-due first, so id order and due order differ.
    let now = Int64(wallClockMilliseconds())
    var ids: [String] = []
    var latestDue: Int64 = 0
    for (offset, text) in [(600, "third"), (400, "second"), (200, "first")] {
      let due = Timestamp(milliseconds: now + Int64(offset))
      let reply = try #require(author.request("SAYAT #d \(due) :\(text)").last)
      #expect(reply == "OK SAYAT \(reply.words[2]) \(due)")
      ids.insert(reply.words[2], at: 0)
      latestDue = max(latestDue, due.milliseconds)
    }
    #expect(try broker.stop() == 0)
    // Waiting on the clock itself: nothing else can say the instants passed.
    try waitUntil(timeout: 5, "the due instants to pass") {
      wallClockMilliseconds() > Double(latestDue) + 100
    }

    let restarted = wallClockMilliseconds()
    try broker.start([])
    let client = try broker.connect()
    let history = try client.dataLines("HISTORY #d")
    #expect(history.map { $0.words[2] } == ids, "\(history)")
    #expect(history.map(\.freeText) == ["first", "second", "third"])
    for line in history {
      let delivered = try #require(Timestamp(rfc3339: line.words[3])).milliseconds
      #expect(
        Double(delivered) >= restarted - 1 && Double(delivered) < restarted + 5000,
        "delivered at start-up, not while stopped: \(line)")
    }
    #expect(try client.dataLines("SCHEDULED") == [])

    // Not again after another restart.
    #expect(try broker.stop() == 0)
    try broker.start([])
    let again = try broker.connect()
    #expect(try again.dataLines("HISTORY #d") == history)
    #expect(try again.dataLines("SCHEDULED") == [])
  }

  @Test("a journal cut anywhere inside its last record starts with the prefix, with a warning")
  func tornLastRecord() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    for text in ["one", "two", "drei: ünïcødé 🎉 and more"] {
      #expect(try client.request("SAY #t \(text)").first?.hasPrefix("OK SAY ") == true)
    }
    let prefix = try client.dataLines("HISTORY #t").dropLast()
    #expect(try broker.stop() == 0)
    let whole = Array(broker.journal.utf8)
    let lastStart = try #require(whole.dropLast().lastIndex(of: UInt8(ascii: "\n"))) + 1
    #expect(String(decoding: whole[lastStart...], as: UTF8.self).contains("drei"))

    for length in lastStart..<whole.count {
      try Data(whole[..<length]).write(to: URL(fileURLWithPath: broker.journalPath))
      try broker.start()
      let dropped = length - lastStart
      if dropped > 0 {
        #expect(broker.log.contains("bytes_dropped=\(dropped)"), "cut at \(length)")
      } else {
        #expect(!broker.log.contains("bytes_dropped"), "cut at \(length)")
      }
      let client = try broker.connect()
      #expect(try client.dataLines("HISTORY #t").elementsEqual(prefix), "cut at \(length)")
      // What follows is appended after the cut, not after the torn bytes.
      #expect(try client.request("SAY #t after").first?.hasPrefix("OK SAY ") == true)
      #expect(try broker.stop() == 0)
      let bytes = Array(broker.journal.utf8)
      #expect(bytes.prefix(lastStart) == whole.prefix(lastStart), "cut at \(length)")
      let lines = String(decoding: bytes, as: UTF8.self).split(
        separator: "\n", omittingEmptySubsequences: false)
      #expect(lines.count == prefix.count + 4 && lines.last == "", "cut at \(length)")
      #expect(lines.dropLast().last?.contains("\"text\":\"after\"") == true, "cut at \(length)")
    }
  }

  @Test(
    "a damaged line in the middle stops start-up; --repair keeps the rest and sets it aside",
    arguments: [
      "not json at all", "{\"type\":\"message\",\"id\":", "{\"type\":\"mystery\",\"id\":\"9\"}",
      "{\"type\":\"message\",\"id\":\"9\",\"to\":\"#c\"}", "\u{1}\u{2}",
    ])
  func damagedMiddleLine(damage: String) throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    for text in ["one", "two", "three"] {
      #expect(try client.request("SAY #c \(text)").first?.hasPrefix("OK SAY ") == true)
    }
    let history = try client.dataLines("HISTORY #c")
    #expect(try broker.stop() == 0)
    var lines = broker.journal.split(separator: "\n").map(String.init)
    let damagedIndex = try #require(lines.firstIndex { $0.contains("\"text\":\"two\"") })
    lines[damagedIndex] = damage
    let damaged = lines.joined(separator: "\n") + "\n"
    try damaged.write(toFile: broker.journalPath, atomically: false, encoding: .utf8)

    let refused = try broker.runToExit([
      "--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync",
    ])
    #expect(refused.status != 0)
    #expect(refused.errors.contains(broker.journalPath), "\(refused.errors)")
    #expect(refused.errors.contains("line \(damagedIndex + 1)"), "\(refused.errors)")
    #expect(refused.errors.contains("--repair"), "\(refused.errors)")
    #expect(broker.journal == damaged, "a refused start changes nothing")

    try broker.start(["--no-sync", "--repair"])
    #expect(broker.log.contains("set aside"), "\(broker.log)")
    let repaired = try broker.connect()
    #expect(try repaired.dataLines("HISTORY #c") == [history[0], history[2]])
    let files = try FileManager.default.contentsOfDirectory(atPath: broker.stateDirectory)
    let aside = try #require(files.first { $0.hasPrefix("journal.jsonl.damaged") }, "\(files)")
    let asidePath = broker.stateDirectory + "/" + aside
    #expect(try String(contentsOfFile: asidePath, encoding: .utf8) == damage + "\n")
    #expect(try fileMode(asidePath) == 0o600, "the damaged part may hold private messages")
    #expect(try fileMode(broker.journalPath) == 0o600)

    // Repaired for good: a plain start now works and sees the same.
    #expect(try broker.stop() == 0)
    try broker.start()
    #expect(try broker.connect().dataLines("HISTORY #c") == [history[0], history[2]])
  }

  @Test("a new journal is 0600 in a 0700 state directory")
  func permissions() throws {
    let broker = try BrokerProcess().start([])
    #expect(try broker.connect().request("SAY #p hello").first?.hasPrefix("OK SAY ") == true)
    #expect(try fileMode(broker.stateDirectory) == 0o700)
    #expect(try fileMode(broker.journalPath) == 0o600)
  }

  @Test(
    "a full disk answers STORAGE, the broker stays up, and accepts again once space returns",
    UnixUsers.rootOnly("to mount a small tmpfs as the state directory"),
    arguments: [[], ["--no-sync"]])
  func fullDisk(_ arguments: [String]) throws {
    let broker = try BrokerProcess()
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    let mount = try runCommand([
      "/bin/mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", broker.stateDirectory,
    ])
    try #require(mount.status == 0, "mount: \(mount.errors)")
    defer {
      _ = try? broker.stop(signal: SIGKILL)
      umount2(broker.stateDirectory, Int32(MNT_DETACH))
    }
    // Space the journal's zero-filling cannot take before the disk fills up.
    let spare = broker.stateDirectory + "/spare"
    #expect(FileManager.default.createFile(atPath: spare, contents: Data(count: 96 << 10)))
    try broker.start(arguments)
    let client = try broker.connect()
    #expect(try client.request("SAY #d before").first?.hasPrefix("OK SAY ") == true)

    let filler = broker.stateDirectory + "/filler"
    try fillDisk(filler)
    // The zeros written ahead of the records (chatbroker(8), "JOURNAL
    // FORMAT") are taken first; past them nothing fits.
    let big = String(repeating: "b", count: 4000)
    var accepted = ["before"]
    var refused: [String] = []
    for index in 0..<200 where refused.isEmpty {
      let reply = try client.request("SAY #d \(index) \(big)")
      if reply.first?.hasPrefix("OK SAY ") == true {
        accepted.append("\(index) \(big)")
      } else {
        refused = reply
      }
    }
    #expect(refused.count == 1 && refused[0].contains(" STORAGE :"), "\(refused)")
    for request in ["SAYAT #d +1h \(big)", "SAY #new \(big)"] {
      let refused = try client.request(request)
      #expect(refused.count == 1 && refused[0].contains(" STORAGE :"), "\(refused)")
    }
    #expect(try client.request("PING") == ["OK PING"])
    #expect(broker.process?.isRunning == true)
    #expect(try client.dataLines("HISTORY #d 1000").map(\.freeText) == accepted)
    #expect(try client.dataLines("SCHEDULED") == [])
    #expect(try client.dataLines("ROOMS").map { $0.words[1] } == ["#d"], "nothing was accepted")

    #expect(unlink(filler) == 0 && unlink(spare) == 0)
    #expect(try client.request("SAY #d \(big)").first?.hasPrefix("OK SAY ") == true)
    #expect(try client.request("SAY #d after").first?.hasPrefix("OK SAY ") == true)
    let history = try client.dataLines("HISTORY #d 1000")
    #expect(history.map(\.freeText) == accepted + [big, "after"])

    // The failed writes left nothing behind that a restart would trip on.
    #expect(try broker.stop() == 0)
    try broker.start(arguments)
    #expect(try broker.connect().dataLines("HISTORY #d 1000") == history)
  }

  /// Writes to `path` until the file system is full.
  private func fillDisk(_ path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(fd >= 0)
    defer { close(fd) }
    let chunk = [UInt8](repeating: 0x2E, count: 4096)
    while true {
      let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if written < 0 {
        try #require(errno == ENOSPC, "filling: \(String(cString: strerror(errno)))")
        return
      }
    }
  }
}

/// The permission bits of a file.
func fileMode(_ path: String) throws -> mode_t {
  var status = stat()
  guard stat(path, &status) == 0 else { throw TestFailure("stat \(path) failed") }
  return status.st_mode & 0o7777
}

import Broker
import Dispatch
import Foundation
import Glibc
import LineProtocol
import Testing

/// A disk whose fdatasync can be made to fail, as a dying disk's does.
final class FlakyDisk: @unchecked Sendable {
  private let lock = NSLock()
  private var failing = false

  var fails: Bool {
    get { lock.withLock { failing } }
    set { lock.withLock { failing = newValue } }
  }

  func synchronize(_ fd: Int32) -> Int32 {
    if fails {
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

  private func startServer(in directory: String, disk: FlakyDisk) throws -> LineClient {
    let journal = try FileJournal(directory: directory + "/state")
    let clock = SystemClock()
    _ = try journal.load(repair: false, now: clock.now) { _ in }
    let users = SystemUsers()
    let engine = Engine(clock: clock, users: users, journal: journal)
    var options = Server.Options()
    options.synchronize = { disk.synchronize($0) }
    let queue = DispatchQueue(label: "sync-failure-test")
    let server = Server(
      queue: queue, engine: engine, journal: journal, users: users, options: options,
      log: Logger(sink: nil))
    let fd = try UnixSocket.bind(path: directory + "/sock")
    queue.sync {
      server.listen(on: fd)
      engine.finishReplay()
    }
    let client = try LineClient(path: directory + "/sock")
    _ = try client.expect("HELLO ")
    return client
  }
}

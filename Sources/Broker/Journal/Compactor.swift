import CShims
import Foundation
import Glibc
import LineProtocol

/// Compaction without stalling the broker. The engine's durable state is
/// value types (``EngineSnapshot``): taking it on the engine's queue copies
/// no more than the room list, and the histories, pending messages and
/// markers it holds are shared copy-on-write, so the engine goes on
/// changing its own while a background queue writes the snapshot to a new
/// file and syncs it. The engine's queue then only appends what arrived
/// meanwhile and renames the file into place
/// (``FileJournal/finishCompaction(temporary:copiedUpTo:)``).
///
/// Compaction used to replay the journal's first bytes into a scratch
/// engine instead; under a steady stream of messages that parsed every
/// byte ever written once more, a fifth of the machine's CPU under
/// `chatbench durable` at 100 clients (`perf record -g`). Replay is still
/// the truth: ``writeCompacted(journal:length:limits:to:)`` does it that
/// way, and the tests check that both write the same records.
public enum Compactor {
  /// Writes `snapshot` as a journal at `temporary` and syncs it.
  public static func write(_ snapshot: EngineSnapshot, to temporary: String) throws(SystemError) {
    var failure: SystemError?
    // Created afresh (O_EXCL follows no link): one left by a crash goes.
    unlink(temporary)
    let out = try systemCall("open", subject: temporary) {
      open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    defer { close(out) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(1 << 20)
    snapshot.forEachRecord { record in
      guard failure == nil else { return }
      record.appendJSONLine(to: &bytes)
      if bytes.count >= 1 << 20 {
        do throws(SystemError) { try FileJournal.writeAll(out, bytes) } catch { failure = error }
        bytes.removeAll(keepingCapacity: true)
      }
    }
    if let failure { throw failure }
    try FileJournal.writeAll(out, bytes)
    try systemCall("fsync", subject: temporary) { fsync(out) }
  }

  /// The same from the journal itself: its first `length` bytes replayed
  /// into a scratch engine, whose snapshot is written.
  public static func writeCompacted(
    journal path: String, length: Int64, limits: Limits, to temporary: String
  ) throws(SystemError) {
    // The scratch state is as large as the live one: hand its memory back
    // to the system when done, so the broker's footprint stays its own.
    defer { malloc_trim(0) }
    let contents = try JournalReader.read(path, length: length)
    let scratch = Engine(
      limits: limits, clock: SystemClock(), users: NoUsers(), journal: DiscardingJournal())
    if let failure = JournalReader.replay(contents, { scratch.replay($0) }) {
      throw SystemError("compact", errno: EILSEQ, subject: "\(path): \(failure.reason)")
    }
    try write(scratch.snapshot(), to: temporary)
  }
}

private final class NoUsers: UserDirectory {
  func userExists(_ name: String) -> Bool { false }
}

private final class DiscardingJournal: JournalSink {
  func append(_ records: [JournalRecord]) throws(StorageError) {}
}

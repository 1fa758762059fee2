import CShims
import Foundation
import Glibc
import LineProtocol

/// Compaction without stalling the broker. Replay is the truth, so the work
/// is done from the file, not from the live engine: on a background queue the
/// journal's first `length` bytes are replayed into a scratch engine, whose
/// state is written to a new file and synced. The engine's queue then only
/// appends what arrived meanwhile and renames the file into place
/// (``FileJournal/finishCompaction(temporary:copiedUpTo:)``).
public enum Compactor {
  public static func writeCompacted(
    journal path: String, length: Int64, limits: Limits, to temporary: String
  ) throws(SystemError) {
    // The scratch state is as large as the live one: hand its memory back
    // to the system when done, so the broker's footprint stays its own.
    defer { malloc_trim(0) }
    try write(journal: path, length: length, limits: limits, to: temporary)
  }

  private static func write(
    journal path: String, length: Int64, limits: Limits, to temporary: String
  ) throws(SystemError) {
    let contents = try JournalReader.read(path, length: length)
    let scratch = Engine(
      limits: limits, clock: SystemClock(), users: NoUsers(), journal: DiscardingJournal())
    if let failure = JournalReader.replay(contents, { scratch.replay($0) }) {
      throw SystemError("compact", errno: EILSEQ, subject: "\(path): \(failure.reason)")
    }
    var failure: SystemError?

    // Created afresh (O_EXCL follows no link): one left by a crash goes.
    unlink(temporary)
    let out = try systemCall("open", subject: temporary) {
      open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    defer { close(out) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(1 << 20)
    scratch.snapshot().forEachRecord { record in
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
}

private final class NoUsers: UserDirectory {
  func userExists(_ name: String) -> Bool { false }
}

private final class DiscardingJournal: JournalSink {
  func append(_ records: [JournalRecord]) throws(StorageError) {}
}

import Dispatch
import Foundation
import Glibc

/// Keeps the journal file zero-filled ahead of its last record, so that the
/// group commit's `fdatasync` never changes the file's size: on ext4 a sync
/// that does commits the inode as well, every time (measured on the
/// development machine: 200-byte append plus fdatasync 486 µs on a growing
/// file, 210 µs over a zero-filled one, 280 µs over a `fallocate`d range,
/// whose unwritten extents must still be converted). PostgreSQL zero-fills
/// its WAL segments for the same reason.
///
/// The zeros are written on a queue of their own, a step ahead of the
/// records, and synced there, off the acknowledgement path. A record
/// written where zeros are being written must not be overwritten by them:
/// writes that reach into the range being filled take a lock, and the
/// filler never writes below the highest byte they wrote.
final class ZeroFill: @unchecked Sendable {
  /// Zeros written at a time, and how close the records may come to the
  /// end of them before the next step is started.
  static let step: Int64 = 1 << 20
  static let margin: Int64 = 512 << 10

  private let queue = DispatchQueue(label: "chatbroker.journal-zero-fill")
  private let lock = NSLock()
  /// Highest end of a record written while a fill was in flight.
  private var recordsEnd: Int64 = 0

  /// The file's zero-filled end as the engine's loop knows it.
  private(set) var filledEnd: Int64 = 0
  /// The start of the fill in flight, if any.
  private var fillingFrom: Int64?
  /// Counts resets, so that a fill started before one is not believed.
  private var epoch = 0
  /// Whether fills are synced (not with `--no-sync`).
  var syncs = true

  /// The file was opened, cut back or replaced: it ends at `end`.
  func reset(end: Int64) {
    queue.sync {}
    epoch += 1
    filledEnd = end
    fillingFrom = nil
    lock.withLock { recordsEnd = end }
  }

  /// Writes `bytes` at `offset` of `fd`, clear of any fill in flight.
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) {
    let end = offset + Int64(bytes.count)
    if let start = fillingFrom, end > start {
      lock.lock()
      defer { lock.unlock() }
      try Self.writeAll(fd, bytes, at: offset)
      recordsEnd = max(recordsEnd, end)
    } else {
      try Self.writeAll(fd, bytes, at: offset)
    }
  }

  /// After records were written up to `end`: starts the next fill if they
  /// came within ``margin`` of the zeros' end. It reports back through
  /// `post`, in a pass of the engine's loop; the caller need not do
  /// anything with it.
  func fillAhead(_ fd: Int32, after end: Int64, post: @escaping JournalCommitter.Post) {
    guard fillingFrom == nil, end + Self.margin > filledEnd else { return }
    let from = max(filledEnd, end)
    let to = from + Self.step
    fillingFrom = from
    let epoch = self.epoch
    let syncs = self.syncs
    queue.async { [self] in
      let filled: Bool
      do throws(SystemError) {
        try writeZeros(fd, from: from, to: to)
        // The size changes here, once per step, not in the group commit.
        if syncs { _ = fdatasync(fd) }
        filled = true
      } catch {
        // A full disk: the records will extend the file themselves.
        filled = false
      }
      post { [self] in
        guard self.epoch == epoch else { return }
        fillingFrom = nil
        if filled { filledEnd = max(filledEnd, to) }
      }
    }
  }

  /// Writes zeros over `from..<to`, but not below a record written meanwhile.
  private func writeZeros(_ fd: Int32, from: Int64, to: Int64) throws(SystemError) {
    lock.lock()
    defer { lock.unlock() }
    let start = max(from, recordsEnd)
    guard start < to else { return }
    let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(to - start), alignment: 4096)
    defer { zeros.deallocate() }
    zeros.initializeMemory(as: UInt8.self, repeating: 0)
    try Self.writeAll(fd, UnsafeRawBufferPointer(zeros), at: start)
  }

  /// Writes all of `bytes` at `offset`, retrying short writes and EINTR.
  static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64)
    throws(SystemError)
  {
    try FileDescriptor(rawValue: fd).writeAll(bytes, at: offset)
  }
}

import Dispatch
import Foundation
import Glibc
import LineProtocol

/// The journal's side of the shell, "durable before visible": the records
/// of an event are written with one `pwrite(2)` when it ends, the group
/// commit thread (``GroupCommit``) syncs them, and the lines that show
/// them are released when it reports back; a failed write or sync is
/// rolled back; compaction runs in the background (see ``Compactor``).
extension Server {
  /// Wires the journal to the server: called once, from `init`.
  func attachJournal() {
    journal.attach(queue: queue, gathering: options.syncJournal, syncing: options.syncJournal)
    if options.syncJournal { groupCommit.start() }
  }

  /// At the end of an event: writes what the event gathered and asks the
  /// group commit thread to sync it.
  func startSyncIfNeeded() {
    guard options.syncJournal, writeFailure == nil else { return }
    do throws(SystemError) {
      try journal.flush()
    } catch {
      writeFailed(reason: String(cString: strerror(error.errno)))
      return
    }
    guard journal.flushedCount > syncedCount else { return }
    groupCommit.request(
      .init(
        count: journal.flushedCount, size: journal.size, generation: journal.generation,
        fd: journal.fd))
  }

  /// The gathered records could not be written: like a failed sync, what
  /// was not synced is refused, once no sync is running any more.
  func writeFailed(reason: String) {
    writeFailure = reason
    groupCommit.halt()
    if groupCommit.isIdle { refuseUnsynced(reason: reason, written: true) }
  }

  /// What the group commit thread reports, on the queue.
  func syncsFinished(_ outcome: GroupCommit.Outcome) {
    syncCount = groupCommit.syncCount
    if let target = outcome.synced, target.generation == journal.generation {
      markSynced(count: target.count, size: target.size)
      syncRetryDelay = 0
      releaseHeld()
    }
    if let failure = outcome.failure {
      if failure.target.generation == journal.generation {
        refuseUnsynced(reason: String(cString: strerror(failure.errno)))
        return
      }
      // Compaction replaced the file meanwhile, and synced the new one.
      groupCommit.resume()
    }
    if let reason = writeFailure, groupCommit.isIdle {
      refuseUnsynced(reason: reason, written: true)
      return
    }
    afterEvent()
  }

  /// Records up to `count` (ending at `size` in the file) are durable.
  func markSynced(count: UInt64, size: Int64) {
    guard count > syncedCount else { return }
    engine.recordsSynced(Int(count - syncedCount))
    syncedCount = count
    syncedSize = max(syncedSize, size)
  }

  /// After a failed fdatasync nobody can say what reached the disk since the
  /// last good one. Those records are cut off the journal and the engine
  /// undoes them in memory (a few microseconds each, however long the
  /// journal).
  /// Held lines are settled by their kind (``settleHeld(because:)``): a
  /// request whose records were cut is answered `STORAGE`, everything else
  /// as its state now is, and the broker goes on serving. The next sync is
  /// tried after a pause that grows while syncs keep failing. Only if the
  /// journal cannot even be cut back does it stop (exit 74), so that
  /// nothing unsaved is ever acknowledged.
  func refuseUnsynced(reason: String, written: Bool = false) {
    let started = DispatchTime.now()
    let unsyncedCount = journal.writtenCount - syncedCount
    log.error(
      written
        ? "journal write failed, refusing what it held"
        : "journal sync failed, refusing what it held",
      ["path": journal.path, "reason": reason, "records": "\(unsyncedCount)"])
    compactionSpoiled = compacting
    writeFailure = nil
    do throws(SystemError) {
      try journal.discardUnsynced(downTo: syncedSize, count: syncedCount)
      if engine.unsyncedRecordCount == Int(unsyncedCount) {
        engine.rollBack(Int(unsyncedCount))
      } else {
        log.warning(
          "unsynced records do not match the journal, replaying it",
          ["journal": "\(unsyncedCount)", "engine": "\(engine.unsyncedRecordCount)"])
        try replayJournal()
      }
    } catch {
      log.error("journal cannot be recovered, stopping", ["reason": error.description])
      exit(74)  // EX_IOERR
    }
    settleHeld(
      because:
        "the journal could not be \(written ? "written" : "synced") (\(reason)); nothing was accepted, try again"
    )
    log.info(
      "journal rolled back",
      [
        "records": "\(unsyncedCount)",
        "pause_ms": String(
          format: "%.2f",
          Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e6),
      ])
    // A disk that failed once may fail again at once: do not hammer it.
    syncRetryDelay = min(max(2 * syncRetryDelay, 50), 2000)
    groupCommit.halt()
    queue.asyncAfter(deadline: .now() + .milliseconds(syncRetryDelay)) { [unowned self] in
      groupCommit.resume()
      afterEvent()
    }
    afterEvent()
  }

  /// The slow way back, when the engine's record of what is unsynced does
  /// not match the journal's: forget the durable state and replay the whole
  /// file.
  func replayJournal() throws(SystemError) {
    engine.resetDurableState()
    try journal.replayAll { engine.replay($0) }
    engine.finishReplay()
  }

  /// Starts a background compaction when the journal has doubled; see
  /// ``Compactor``. The engine keeps serving meanwhile. Also called once
  /// at start-up, for a journal found over the floor.
  public func compactIfDue() {
    guard journal.shouldCompact, !compacting else { return }
    compacting = true
    let started = DispatchTime.now()
    let length = journal.size
    let path = journal.path
    let temporary = path + ".compacting"
    let limits = options.limits
    runCompactionStep(started: started, temporary: temporary, copied: length) {
      () throws(SystemError) in
      try Compactor.writeCompacted(journal: path, length: length, limits: limits, to: temporary)
    }
  }

  /// Runs one background step of a compaction, then either catches up with
  /// what was appended meanwhile (another background step, while more than
  /// a megabyte is left) or finishes on this queue with a short pause.
  func runCompactionStep(
    started: DispatchTime, temporary: String, copied: Int64,
    _ step: @escaping @Sendable () throws(SystemError) -> Void
  ) {
    compactionQueue.async { [unowned self] in
      let failure: SystemError?
      do throws(SystemError) {
        try step()
        failure = nil
      } catch {
        failure = error
      }
      queue.async { [unowned self] in
        // A failed sync cut the journal back: what was copied may be gone.
        let failure =
          compactionSpoiled
          ? SystemError("compact", errno: ECANCELED, subject: "the journal was cut back") : failure
        let end = journal.size
        if failure == nil && end - copied > 1 << 20 {
          let path = journal.path
          runCompactionStep(started: started, temporary: temporary, copied: end) {
            () throws(SystemError) in
            try FileJournal.copy(path, from: copied, to: end, appendingTo: temporary)
          }
        } else {
          finishCompaction(temporary: temporary, length: copied, started: started, failure: failure)
        }
      }
    }
  }

  func finishCompaction(
    temporary: String, length: Int64, started: DispatchTime, failure: SystemError?
  ) {
    compacting = false
    compactionSpoiled = false
    if options.syncJournal && writeFailure == nil {
      do throws(SystemError) {
        try journal.flush()
      } catch {
        unlink(temporary)
        journal.postponeCompaction()
        writeFailed(reason: String(cString: strerror(error.errno)))
        return
      }
    }
    if writeFailure != nil {
      // What is gathered is being refused: no compaction may cover it.
      unlink(temporary)
      journal.postponeCompaction()
      return
    }
    let before = journal.size
    let pauseStarted = DispatchTime.now()
    do throws(SystemError) {
      if let failure { throw failure }
      let old = try journal.finishCompaction(temporary: temporary, copiedUpTo: length)
      // A sync may still be running on the old descriptor: close it after.
      if options.syncJournal { groupCommit.retire(old) } else { _ = Glibc.close(old) }
    } catch {
      unlink(temporary)
      journal.postponeCompaction()
      log.error("journal compaction failed", ["reason": error.description])
      return
    }
    // The compacted file was synced, and it holds everything appended.
    markSynced(count: journal.writtenCount, size: journal.size)
    syncedSize = journal.size
    releaseHeld()
    let now = DispatchTime.now().uptimeNanoseconds
    log.info(
      "journal compacted",
      [
        "bytes_before": "\(before)", "bytes_after": "\(journal.size)",
        "ms": String(format: "%.1f", Double(now - started.uptimeNanoseconds) / 1e6),
        "pause_ms": String(format: "%.1f", Double(now - pauseStarted.uptimeNanoseconds) / 1e6),
      ])
    afterEvent()
  }
}

extension Server {
  /// The last sync at shutdown, on the queue: everything gathered is
  /// written and synced before the process exits. Returns why it failed.
  public func syncJournalAtShutdown() -> String? {
    guard options.syncJournal else { return nil }
    groupCommit.stop()
    do throws(SystemError) {
      try journal.flush()
    } catch {
      return error.description
    }
    return fdatasync(journal.fd) == 0 ? nil : String(cString: strerror(errno))
  }
}

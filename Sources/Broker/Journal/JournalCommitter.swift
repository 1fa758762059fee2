import Dispatch
import Foundation
import Glibc
import LineProtocol

/// Why the journal can take no more records: after a failed sync or write
/// it could not even be cut back to what was synced. The broker must stop
/// (the daemon exits 74, `EX_IOERR`): nothing more may be acknowledged.
public struct JournalUnrecoverable: Error, CustomStringConvertible, Sendable {
  public let path: String
  public let reason: String
  public var description: String {
    "the journal \(path) cannot be recovered after a failed write or sync (\(reason))"
  }
}

/// What the committer asks of the server it commits for; every call comes
/// inside a pass of the server's poll (``ReadinessPoll``), whose end
/// (``Server/endOfPass()``) finishes whatever the call started.
protocol JournalCommitterDelegate: AnyObject {
  /// A sync the group commit thread made returned, at the start of a pass,
  /// and moved ``JournalCommitter/durableCount``: what it covered may
  /// leave now rather than at the end of the pass, so that clients
  /// waiting for it send their next requests while this pass serves
  /// others (with `chatbench durable` at 10 clients, releasing only at
  /// the end of the pass measured a tenth to a fifth fewer
  /// acknowledgements a second than before; releasing here, as many).
  func journalSynced()
  /// A failed write or sync cut the unsynced records off the journal and
  /// the engine undid them: held lines are settled (answered `STORAGE`),
  /// `text` saying why.
  func journalRolledBack(because text: String)
  /// The journal cannot be recovered: from now on no record becomes
  /// durable. The caller must stop the broker.
  func journalFailed(_ failure: JournalUnrecoverable)
}

/// How the committer's work from other threads, and its work that waits,
/// enters the engine's loop: always inside a pass of the server's poll
/// (``ReadinessPoll``), never on the queue on its own.
protocol JournalLoop: AnyObject, Sendable {
  /// Runs `block` in the next pass, from any thread.
  func post(_ block: @escaping @Sendable () -> Void)
  /// Runs `block` in a pass once `milliseconds` have passed; called in a pass.
  func after(milliseconds: Int, _ block: @escaping @Sendable () -> Void)
}

/// The one owner of "durable before visible" (chatbroker(8), "JOURNAL"),
/// and the engine's ``JournalSink``: the engine appends through it, and
/// nothing else writes the journal file. It owns the file
/// (``FileJournal``), the written and durable counts, the group commit
/// thread (``GroupCommit``), the recovery after a failed write or sync,
/// and compaction; ``JournalReader`` is its one reader, for start-up, the
/// replay after a failed sync and compaction.
///
/// At the end of every pass the server calls ``endOfPass(mayWaitForSync:)``,
/// which writes what the pass gathered with one `pwrite(2)` and asks the
/// group commit thread to sync it. When a sync returns, the engine's loop
/// learns it here, in a pass (``syncsFinished(_:)``), and ``durableCount``
/// moves: the seam of "durable before visible". It is the one count that
/// says what may be shown: lines held for clients, and a shared room's
/// outbox lines waiting to be published to other brokers, wait for it
/// (``Server/endOfPass()`` releases them; what a sync from the thread
/// covered leaves as soon as it returns,
/// ``JournalCommitterDelegate/journalSynced()``). It moves after each
/// group commit, after a compaction (whose file holds everything), and
/// with `--no-sync` as soon as records are written. The engine's record of how
/// to undo what is unsynced (``UnsyncedRecords``) follows it, for the
/// rollback after a failed sync.
/// The sync thread holds this committer weakly. It holds the engine and
/// its delegate (the server) unowned, not weakly: both hold it and live
/// as long, and a weak reference to an object gives it a side table,
/// which sends every retain and release of it down the runtime's slow
/// path. The engine and the server are retained for each line of a
/// fan-out (measured: 10% less of the serving thread per `SAY` to 100
/// receivers, `chatbench fanout --servers durable --receivers 100`).
public final class JournalCommitter: JournalSink, @unchecked Sendable {
  let journal: FileJournal
  /// Set by ``start(engine:loop:)``; the engine holds this committer.
  private unowned var attachedEngine: Engine?
  private var engine: Engine { attachedEngine! }
  private weak var loop: JournalLoop?
  private let syncs: Bool
  private let log: Logger
  unowned var delegate: JournalCommitterDelegate?

  private let groupCommit: GroupCommit
  private let compactionQueue = DispatchQueue(label: "chatbroker.compaction")

  /// Records known to be on stable storage, and where they end in the file.
  private(set) var syncedCount: UInt64 = 0
  private var syncedSize: Int64 = 0
  /// Why gathered records could not be written, until they are refused.
  private var writeFailure: String?
  private var compacting = false
  /// The records the running compaction's snapshot holds.
  private var compactionCovers: UInt64 = 0
  /// Texts taken out of the state that the file must lose, and when the
  /// compaction for them may start (chatbroker(8), `--purge-interval`).
  private var purge: PurgeSchedule
  /// Whether a deadline in the loop waits for ``purge`` to fall due.
  private var purgeDeadlineArmed = false
  /// `--purge-interval`'s default, in seconds (chatbroker(8)).
  public static let defaultPurgeInterval = 60
  /// Set when a failed sync cuts the journal back during a compaction,
  /// whose copy may then hold records that are no longer in the journal.
  private var compactionSpoiled = false
  /// Milliseconds before a sync is tried again after one failed; grows
  /// while they keep failing, back to none after one succeeds.
  private var syncRetryDelay = 0
  /// `fdatasync` calls so far: with group commit, far fewer than records.
  private(set) var syncCount = 0
  /// Set once the journal cannot be recovered: nothing becomes durable.
  private(set) var failure: JournalUnrecoverable?

  /// Runs a block on the engine's loop, from any thread.
  typealias Post = @Sendable (@escaping @Sendable () -> Void) -> Void

  /// Takes over `journal`, syncing unless `syncs` is false (`--no-sync`)
  /// with `synchronize` (`fdatasync`; tests put a failing disk in its
  /// place), compacting for texts taken back at most once per
  /// `purgeInterval` seconds (`--purge-interval`). Idle until the server
  /// starts it; the journal is loaded
  /// (``FileJournal/load(repair:now:_:)``) in between.
  public init(
    journal: FileJournal, syncs: Bool = true, purgeInterval: Int = defaultPurgeInterval,
    synchronize: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) },
    log: Logger = Logger(sink: nil)
  ) {
    self.journal = journal
    self.syncs = syncs
    purge = PurgeSchedule(interval: UInt64(max(0, purgeInterval)) * 1_000_000_000)
    self.log = log
    groupCommit = GroupCommit(synchronize: synchronize)
  }

  /// The server starts serving: what the journal holds now is durable,
  /// from now on the engine remembers how to undo what is not, and the
  /// sync thread's outcomes come back through `loop`
  /// (``ReadinessPoll/post(_:)``).
  func start(engine: Engine, loop: JournalLoop) {
    attachedEngine = engine
    self.loop = loop
    syncedCount = journal.writtenCount
    syncedSize = journal.size
    // A text taken back before the last stop may still be in the file:
    // the start-up's compactIfDue() pays it at once.
    if journal.holdsTakenBackText { purge.noteFound(writtenCount: journal.writtenCount) }
    let post: Post = { [weak loop] block in loop?.post(block) }
    journal.attach(post: post, gathering: syncs, syncing: syncs)
    if syncs {
      engine.trackUnsyncedRecords()
      groupCommit.start(post: post) { [weak self] in
        guard let self else { return }
        let before = durableCount
        syncsFinished($0)
        if durableCount > before { delegate?.journalSynced() }
      }
    }
  }

  deinit {
    if syncs { groupCommit.stop() }
  }

  /// The engine's records, one request at a time: gathered for the end of
  /// the pass (one `pwrite(2)` for all), or with `--no-sync` written at
  /// once, so that a failed write is refused before anything changes.
  /// A record that takes a text out of the state (`REDACT`'s) makes the
  /// file owe a compaction (``PurgeSchedule``): at the end of this pass,
  /// or when `--purge-interval` allows.
  public func append(_ records: [JournalRecord]) throws(StorageError) {
    try journal.append(records)
    purge.noteAppended(records, writtenCount: journal.writtenCount)
  }

  /// Records appended so far: a line showing the newest of them may leave
  /// once ``durableCount`` reaches this.
  var writtenCount: UInt64 { journal.writtenCount }

  /// Records on stable storage (all of them with `--no-sync`): the one
  /// count that decides what may be shown (chatbroker(7), "Order and
  /// durability").
  var durableCount: UInt64 { syncs ? syncedCount : journal.writtenCount }

  // MARK: - Group commit

  /// First at the end of every pass (``Server/endOfPass()``): compacts if
  /// due, writes what the pass gathered and asks the group commit thread
  /// to sync it; with `--no-sync` every record is durable as soon as it
  /// is written.
  /// `mayWaitForSync` (at most one connection waits for this sync) lets
  /// the sync run here when the thread is idle (``GroupCommit/syncNow(_:)``):
  /// with more waiting, the engine gathers the next batch meanwhile.
  func endOfPass(mayWaitForSync: Bool) {
    guard failure == nil else { return }
    guard syncs else {
      compactIfDue()
      return
    }
    guard writeFailure == nil else { return }
    do throws(SystemError) {
      try journal.flush()
    } catch {
      writeFailed(reason: String(cString: strerror(error.errno)))
      return
    }
    // After the flush: the engine's state is then what the file holds.
    compactIfDue()
    guard journal.flushedCount > syncedCount else { return }
    let target = GroupCommit.Target(
      count: journal.flushedCount, size: journal.size, generation: journal.generation,
      fd: journal.fd)
    if mayWaitForSync, let outcome = groupCommit.syncNow(target) {
      syncsFinished(outcome)
    } else {
      groupCommit.request(target)
    }
  }

  /// The gathered records could not be written: like a failed sync, what
  /// was not synced is refused, once no sync is running any more.
  private func writeFailed(reason: String) {
    writeFailure = reason
    groupCommit.halt()
    if groupCommit.isIdle { refuseUnsynced(reason: reason, written: true) }
  }

  /// What the group commit thread reports, in a pass (or a sync made
  /// inline, at the end of one): the end of the pass writes and syncs
  /// whatever was gathered meanwhile.
  private func syncsFinished(_ outcome: GroupCommit.Outcome) {
    syncCount = groupCommit.syncCount
    guard failure == nil else { return }
    if let target = outcome.synced, target.generation == journal.generation {
      markSynced(count: target.count, size: target.size)
      syncRetryDelay = 0
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
    }
  }

  /// Records up to `count` (ending at `size` in the file) are durable:
  /// the engine forgets how to undo them, and the end of the pass
  /// releases what shows them.
  private func markSynced(count: UInt64, size: Int64) {
    guard count > syncedCount else { return }
    syncedSize = max(syncedSize, size)
    engine.recordsSynced(Int(count - syncedCount))
    syncedCount = count
  }

  // MARK: - Recovery

  /// After a failed fdatasync nobody can say what reached the disk since the
  /// last good one. Those records are cut off the journal and the engine
  /// undoes them in memory (a few microseconds each, however long the
  /// journal). The delegate settles the lines held for them, and the
  /// broker goes on serving. The next sync is tried after a pause that
  /// grows while syncs keep failing. Only if the journal cannot even be cut
  /// back is the failure unrecoverable (``JournalUnrecoverable``), so that
  /// nothing unsaved is ever acknowledged.
  private func refuseUnsynced(reason: String, written: Bool = false) {
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
      purge.journalCutBack(to: journal.writtenCount)
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
      groupCommit.halt()
      let failure = JournalUnrecoverable(path: journal.path, reason: error.description)
      self.failure = failure
      delegate?.journalFailed(failure)
      return
    }
    delegate?.journalRolledBack(
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
    // The pass that ends the pause writes and syncs what waited.
    loop?.after(milliseconds: syncRetryDelay) { [weak self] in
      guard let self, failure == nil else { return }
      groupCommit.resume()
    }
  }

  /// The slow way back, when the engine's record of what is unsynced does
  /// not match the journal's: forget the durable state and replay the whole
  /// file.
  private func replayJournal() throws(SystemError) {
    engine.resetDurableState()
    try journal.replayAll { engine.replay($0) }
    engine.finishReplay()
  }

  // MARK: - Compaction

  /// Starts a background compaction when the journal has doubled, or
  /// when a text taken out of the state must leave the file and
  /// `--purge-interval` allows (``PurgeSchedule``); see ``Compactor``. The
  /// engine keeps serving meanwhile. Also called once at start-up, for a
  /// journal found over the floor or holding a text taken back.
  func compactIfDue() {
    // Read the clock only when a debt is owed: this runs at every pass's end.
    let purgeWait =
      purge.isOwed ? purge.nanosecondsUntilDue(now: DispatchTime.now().uptimeNanoseconds) : nil
    guard journal.shouldCompact || purgeWait == 0, !compacting, failure == nil else {
      if let purgeWait, purgeWait > 0, !compacting, failure == nil { armPurgeDeadline(purgeWait) }
      return
    }
    // Every record applied is in the file: the snapshot is what the file's
    // first `length` bytes replay to.
    guard journal.flushedCount == journal.writtenCount else { return }
    compacting = true
    let started = DispatchTime.now()
    purge.compactionStarted(now: started.uptimeNanoseconds)
    compactionCovers = journal.writtenCount
    let length = journal.size
    let temporary = journal.path + ".compacting"
    let snapshot = engine.snapshot()
    runCompactionStep(started: started, temporary: temporary, copied: length) {
      () throws(SystemError) in
      try Compactor.write(snapshot, to: temporary)
    }
  }

  /// Runs one background step of a compaction, then either catches up with
  /// what was appended meanwhile (another background step, while more than
  /// a megabyte is left) or finishes in a pass of the engine's loop with
  /// a short pause.
  private func runCompactionStep(
    started: DispatchTime, temporary: String, copied: Int64,
    _ step: @escaping @Sendable () throws(SystemError) -> Void
  ) {
    let loop = loop
    compactionQueue.async { [weak self] in
      let failure: SystemError?
      do throws(SystemError) {
        try step()
        failure = nil
      } catch {
        failure = error
      }
      loop?.post { [weak self] in
        guard let self else { return }
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

  private func finishCompaction(
    temporary: String, length: Int64, started: DispatchTime, failure: SystemError?
  ) {
    compacting = false
    compactionSpoiled = false
    if syncs && writeFailure == nil {
      do throws(SystemError) {
        try journal.flush()
      } catch {
        unlink(temporary)
        journal.postponeCompaction()
        writeFailed(reason: String(cString: strerror(error.errno)))
        return
      }
    }
    if writeFailure != nil || self.failure != nil {
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
      if syncs { groupCommit.retire(old) } else { _ = Glibc.close(old) }
    } catch {
      unlink(temporary)
      journal.postponeCompaction()
      log.error("journal compaction failed", ["reason": error.description])
      return
    }
    // The compacted file was synced, and it holds everything appended.
    markSynced(count: journal.writtenCount, size: journal.size)
    // The texts taken out before the snapshot are gone from the file;
    // one taken out later is still in the records copied after it.
    purge.compactionFinished(covering: compactionCovers)
    syncedSize = journal.size
    let now = DispatchTime.now().uptimeNanoseconds
    log.info(
      "journal compacted",
      [
        "bytes_before": "\(before)", "bytes_after": "\(journal.size)",
        "ms": String(format: "%.1f", Double(now - started.uptimeNanoseconds) / 1e6),
        "pause_ms": String(format: "%.1f", Double(now - pauseStarted.uptimeNanoseconds) / 1e6),
      ])
  }

  /// A compaction for texts taken out is owed but `--purge-interval`
  /// holds it back: a deadline wakes the loop when it falls due, so it
  /// runs on a broker that nothing else wakes too (the end of that pass
  /// starts it).
  private func armPurgeDeadline(_ nanoseconds: UInt64) {
    guard !purgeDeadlineArmed else { return }
    purgeDeadlineArmed = true
    let milliseconds = Int((nanoseconds + 999_999) / 1_000_000)
    loop?.after(milliseconds: milliseconds) { [weak self] in
      self?.purgeDeadlineArmed = false
    }
  }

  // MARK: - Shutdown

  /// The last sync at shutdown, in a pass: everything gathered is
  /// written and synced before the process exits. Returns why it failed.
  func syncAtShutdown() -> String? {
    if let failure { return failure.description }
    guard syncs else { return nil }
    groupCommit.stop()
    do throws(SystemError) {
      try journal.flush()
    } catch {
      return error.description
    }
    return fdatasync(journal.fd) == 0 ? nil : String(cString: strerror(errno))
  }
}

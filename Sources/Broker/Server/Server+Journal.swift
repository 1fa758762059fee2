import Dispatch

/// The server's side of "durable before visible": the journal committer
/// (``JournalCommitter``) owns the journal, and tells the server when
/// records became durable, when unsynced ones were rolled back, and when
/// the journal failed for good.
extension Server: JournalCommitterDelegate {
  func journalRecordsDurable(upTo count: UInt64) {
    releaseHeld(upTo: count)
  }

  func journalRolledBack(because text: String) {
    settleHeld(because: text)
    federationRolledBack()
  }

  func journalNeedsEndOfEvent() {
    afterEvent()
  }

  /// Nothing held is released any more; the caller decides how to stop.
  func journalFailed(_ failure: JournalUnrecoverable) {
    if let onJournalFailure {
      onJournalFailure(failure)
    } else {
      log.error("journal failed and nobody stops the broker", ["reason": failure.description])
    }
  }

  /// Starts a background compaction when the journal has doubled (see
  /// ``JournalCommitter/compactIfDue()``). Also called once at start-up,
  /// for a journal found over the floor.
  public func compactIfDue() {
    committer.compactIfDue()
  }

  /// The last sync at shutdown, on the queue: everything gathered is
  /// written and synced before the process exits. Returns why it failed.
  public func syncJournalAtShutdown() -> String? {
    committer.syncAtShutdown()
  }
}

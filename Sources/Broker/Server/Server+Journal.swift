import Dispatch

/// The server's side of "durable before visible": the journal committer
/// (``JournalCommitter``) owns the journal and its durable count, which
/// the end of every pass reads (``endOfPass()``); it tells the server
/// when unsynced records were rolled back, and when the journal failed
/// for good.
extension Server: JournalCommitterDelegate {
  /// Lines a sync released leave at once, as a turn's replies do after
  /// the turn; ``endOfPass()`` does the rest.
  func journalSynced() {
    releaseDurable()
    flushDirty()
  }
  /// First what was durable before the failure leaves as usual; every
  /// line still held then waits for a record that is gone.
  func journalRolledBack(because text: String) {
    releaseDurable()
    settleHeld(because: text)
    federationRolledBack()
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

  /// The last sync at shutdown, in a pass: everything gathered is
  /// written and synced before the process exits. Returns why it failed.
  public func syncJournalAtShutdown() -> String? {
    committer.syncAtShutdown()
  }
}

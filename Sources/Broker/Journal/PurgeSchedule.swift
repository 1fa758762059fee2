/// chatbroker(8), `--purge-interval`: a text taken out of the state (a
/// `redact` record) must leave the journal file too, and only a compaction
/// that starts after the record takes it out. What the committer owes the
/// file, and when the compaction that pays it may start: such compactions
/// start at most once per interval, so that a user taking back line after
/// line cannot keep the disk rewriting the journal.
///
/// The debt is durable without a record of its own: the record that took
/// the text out stays in the journal until a compaction writes the state
/// without it, so one found at start-up (``FileJournal/holdsTakenBackText``)
/// is a debt again. And it is timed: while one is owed and the interval
/// holds it back, the committer keeps a deadline in the loop for the
/// instant it is due (``nanosecondsUntilDue(now:)``), so an idle broker
/// pays it too.
struct PurgeSchedule {
  /// The least time between two compactions started while a debt is owed,
  /// in nanoseconds.
  let interval: UInt64
  /// The journal's written count (``FileJournal/writtenCount``) through
  /// the newest record that took a text out and that no finished
  /// compaction covers yet; nil when the file holds no such text.
  private(set) var owedThrough: UInt64?
  /// When the last compaction started while one was owed (monotonic ns).
  private var lastStarted: UInt64?

  init(interval: UInt64) {
    self.interval = interval
  }

  var isOwed: Bool { owedThrough != nil }

  /// Records were appended, the last of them ending at `writtenCount`.
  mutating func noteAppended(_ records: [JournalRecord], writtenCount: UInt64) {
    guard records.contains(where: \.takesTextOut) else { return }
    owedThrough = writtenCount
  }

  /// Start-up found such a record in the file: whatever compacts first
  /// pays it.
  mutating func noteFound(writtenCount: UInt64) {
    owedThrough = max(owedThrough ?? 0, writtenCount)
  }

  /// Nanoseconds until a compaction for the debt may start: 0 when it may
  /// now, nil when nothing is owed.
  func nanosecondsUntilDue(now: UInt64) -> UInt64? {
    guard isOwed else { return nil }
    guard let lastStarted, now &- lastStarted < interval else { return 0 }
    return interval - (now &- lastStarted)
  }

  /// A compaction starts at `now` (for the debt or for the journal's size):
  /// while a debt is owed it counts against the interval.
  mutating func compactionStarted(now: UInt64) {
    if isOwed { lastStarted = now }
  }

  /// A compaction whose snapshot holds the first `covered` records of the
  /// journal replaced the file: a debt no later than that is paid.
  mutating func compactionFinished(covering covered: UInt64) {
    if let owed = owedThrough, owed <= covered { owedThrough = nil }
  }

  /// A failed sync cut the journal back to `writtenCount` records: a record
  /// cut off can no longer be paid for by covering it, and the text it took
  /// out is back in the state (and perhaps in the file), so the next
  /// compaction pays whatever was owed.
  mutating func journalCutBack(to writtenCount: UInt64) {
    if let owed = owedThrough { owedThrough = min(owed, writtenCount) }
  }
}

extension JournalRecord {
  /// Whether applying the record takes out of the state a text that an
  /// earlier record holds, which the journal file must then lose too
  /// (``PurgeSchedule``): `REDACT`'s record and `AMEND`'s. Every kind
  /// answers here, without a default, so that a new one decides. An `edit` of a pending message, a `cancel` and a new `topic`
  /// promise nothing of the kind (chatbroker(7)): the earlier text stays in
  /// the file until the journal is compacted for its size.
  var takesTextOut: Bool {
    switch self {
    // An `amend` takes the old text out as a `redact` does (chatbroker(7),
    // AMEND).
    case .redact, .amend: true
    // A reaction taken off is taken back: the word leaves the file too
    // (chatbroker(7), REACT).
    case .react(_, _, _, _, let removed): removed
    case .header, .room, .message, .schedule, .cancel, .delivery, .series, .occurrence,
      .reschedule, .edit, .skip, .member, .leave, .read, .seen, .outbox, .remote, .streamPosition,
      .topic, .access, .invite, .mode, .streamLastID, .streamCreated, .streamSequence, .webToken,
      .webRevoke:
      false
    }
  }
}

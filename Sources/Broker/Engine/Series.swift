import LineProtocol

/// What makes a pending message a series (`SAYEVERY`, chatbroker(7)
/// "Series"): its rule, and how many occurrences it has delivered so far,
/// for a `count:` end. The message's id, target, text and due instant (the
/// next occurrence) stay in its ``PendingMessage``.
public struct Series: Equatable, Sendable {
  public var rule: Recurrence
  public var done: Int
  /// Paused (`RESCHEDULE <id> pause`): pending, but never due until resumed.
  public var paused: Bool
  /// Since 1.4: future occurrences left out with `SKIP` or `REPLACE`
  /// (chatbroker(7), `SKIP`), in time order, at most ``maximumSkipped``;
  /// those before the next due instant are dropped as it passes them.
  public var skipped: [Timestamp]

  /// The most occurrences a series may have skipped ahead at once.
  public static let maximumSkipped = 64

  public init(
    rule: Recurrence, done: Int = 0, paused: Bool = false, skipped: [Timestamp] = []
  ) {
    self.rule = rule
    self.done = done
    self.paused = paused
    self.skipped = skipped
  }

  /// The rule's first occurrence after `instant` that is not skipped,
  /// found within `budget` (chatbroker(7), "Series").
  func occurrence(after instant: Timestamp, reference: Timestamp, budget: RecurrenceBudget)
    throws(RecurrenceBudget.Exceeded) -> Timestamp?
  {
    var candidate = try rule.next(after: instant, reference: reference, budget: budget)
    while let found = candidate, skipped.contains(found) {
      candidate = try rule.next(after: found, reference: reference, budget: budget)
    }
    return candidate
  }

  /// The series after its occurrence due at `due` went out, paused there
  /// (``SeriesNext/paused``).
  func pausedAfterDelivery(due: Timestamp) -> Series {
    var paused = self
    paused.done += 1
    paused.forgetSkipped(before: due)
    paused.paused = true
    return paused
  }

  /// `skipped` without the instants before `due`, which can no longer come.
  mutating func forgetSkipped(before due: Timestamp) {
    skipped.removeAll { $0 < due }
  }

  /// The occurrence after one delivered at `now` that was due at `due`, or
  /// nil when that one was the last. A series that fell behind (the broker
  /// was down, the clock jumped) skips the occurrences it missed: one
  /// catch-up delivery, then on with the rule, as systemd's
  /// `Persistent=true` timers do.
  func next(afterDelivery now: Timestamp, due: Timestamp, budget: RecurrenceBudget)
    throws(RecurrenceBudget.Exceeded) -> Timestamp?
  {
    if let count = rule.count, done + 1 >= count { return nil }
    return try occurrence(after: max(now, due), reference: due, budget: budget)
  }
}

/// What comes after a series' occurrence that falls due now: its next due
/// instant (nil after its last), or a pause, when a whole budget cannot
/// pay for finding it (chatbroker(8), "slow step").
enum SeriesNext {
  case due(Timestamp?)
  case paused
}

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

  public init(rule: Recurrence, done: Int = 0, paused: Bool = false) {
    self.rule = rule
    self.done = done
    self.paused = paused
  }

  /// The occurrence after one delivered at `now` that was due at `due`, or
  /// nil when that one was the last. A series that fell behind (the broker
  /// was down, the clock jumped) skips the occurrences it missed: one
  /// catch-up delivery, then on with the rule, as systemd's
  /// `Persistent=true` timers do.
  func next(afterDelivery now: Timestamp, due: Timestamp) -> Timestamp? {
    if let count = rule.count, done + 1 >= count { return nil }
    return rule.next(after: max(now, due), reference: due)
  }
}

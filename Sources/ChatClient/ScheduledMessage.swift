import LineProtocol

/// A pending scheduled message or series, as a `SCHED` line carries it
/// (chatbroker(7), `SCHEDULED`).
public struct ScheduledMessage: Equatable, Sendable {
  public var id: String
  public var target: String
  public var due: Timestamp
  public var created: Timestamp
  public var text: String
  /// A series' rule (`weekdays@09:00/Europe/Berlin`), nil for a single message.
  public var rule: String? = nil

  /// A paused series (`RESCHEDULE id pause`): its rule ends in `,paused`
  /// and its due is the one it had (chatbroker(7), `RESCHEDULE`); nothing
  /// is due until it is resumed.
  public var isPaused: Bool { rule?.hasSuffix(",paused") == true }

  /// The times as the broker wrote them (RFC 3339, UTC, milliseconds).
  public var dueText: String { due.description }
  public var createdText: String { created.description }
}

import LineProtocol

/// A message waiting for its due instant.
public struct PendingMessage: Equatable, Sendable {
  public var id: MessageID
  /// The target as its author wrote it (`#ops`, or `@bob`).
  public var target: Target
  public var author: String
  public var created: Timestamp
  public var due: Timestamp
  public var text: String
  /// `.none` for none (a plain id, not an optional, so a pending line grows
  /// by 8 bytes, not 16): see ``replacing``.
  private var replacedSeries: MessageID

  public init(
    id: MessageID, target: Target, author: String, created: Timestamp, due: Timestamp,
    text: String, replacing series: MessageID? = nil
  ) {
    self.id = id
    self.target = target
    self.author = author
    self.created = created
    self.due = due
    self.text = text
    self.replacedSeries = series ?? .none
  }

  /// Since 1.4: the series one occurrence of which this single message
  /// replaces (`REPLACE`, chatbroker(7)); delivered, it is an occurrence of
  /// that series, with `SERIES <id>` on its `MSG` and `HIST` lines.
  public var replacing: MessageID? {
    replacedSeries == .none ? nil : replacedSeries
  }
}

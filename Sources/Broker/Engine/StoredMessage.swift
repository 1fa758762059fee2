import LineProtocol

/// A delivered message as history keeps it.
public struct StoredMessage: Equatable, Sendable {
  public var id: MessageID
  public var time: Timestamp
  /// Since 1.4, `.none` for none: the series this is an occurrence of, kept
  /// as a plain id rather than an optional, which would widen every
  /// message in every history by another 8 bytes.
  private var seriesID: MessageID
  public var author: String
  public var text: String
  /// Since 1.4: sent with `ACTION` (chatbroker(7)), shown as `* user text`.
  public var isAction: Bool
  /// Since 1.4: its author took it back with `REDACT`: the text is gone,
  /// and what is left marks its place (chatbroker(7), `REDACT`).
  public var isRedacted: Bool

  public init(
    id: MessageID, time: Timestamp, author: String, text: String, isAction: Bool = false,
    isRedacted: Bool = false, series: MessageID? = nil
  ) {
    self.id = id
    self.time = time
    self.seriesID = series ?? .none
    self.author = author
    self.text = text
    self.isAction = isAction
    self.isRedacted = isRedacted
  }

  /// Since 1.4: the series (`SAYEVERY`) this is an occurrence of, shown
  /// as `SERIES <id>` on its `MSG` and `HIST` lines (chatbroker(7), `MSG`).
  public var series: MessageID? {
    get { seriesID == .none ? nil : seriesID }
    set { seriesID = newValue ?? .none }
  }

  /// What is left of it once redacted: who, when, no text.
  var redacted: StoredMessage {
    StoredMessage(id: id, time: time, author: author, text: "", isRedacted: true)
  }
}

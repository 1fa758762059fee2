import LineProtocol

/// A series that delivered its last occurrence, kept so that a late
/// `RESCHEDULE` or `EDIT` is told so rather than `NOSUCHMSG`.
struct EndedSeries: Equatable, Sendable {
  var author: String
  var lastMessage: MessageID
  var at: Timestamp
}

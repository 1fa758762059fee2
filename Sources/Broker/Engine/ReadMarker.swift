import LineProtocol

/// A user's read position in one conversation: the message id they gave,
/// and that message's place in the history. Places only grow, so the
/// marker stays comparable with every later message (also a scheduled one
/// delivered after it with a smaller id) and after its own message has
/// been dropped from a full history.
struct ReadMarker: Equatable {
  var id: MessageID
  var sequence: Int
  /// When it was set, for the journal.
  var time: Timestamp
  /// When its message was delivered, for IRC's `MARKREAD`; nil when the
  /// message was no longer kept as the marker was replayed.
  var delivered: Timestamp?
}

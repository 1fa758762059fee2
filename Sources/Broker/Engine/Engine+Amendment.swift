import LineProtocol

/// `AMEND` (since 1.6; chatbroker(7), `AMEND`): the author gives a line
/// they sent a new text, within the window `REDACT` has. The new text
/// replaces the old everywhere it is shown, marked edited; the old leaves
/// the journal file at the compaction the `amend` record obliges, as a
/// taken-back text does (``JournalRecord/takesTextOut``).
extension Engine {
  func amend(
    _ target: Target, id: MessageID, text: String, connection: ConnectionID, user: String
  ) {
    guard
      let message = ownMessage(
        target, id: id, verb: .amend, doing: "changed", connection: connection, user: user)
    else { return }
    guard isRecent(message, verb: .amend, doing: "changed", connection: connection) else {
      return
    }
    guard message.text != text else {
      send(.ok(.amend, fields: [target.description, id.description]), to: connection)
      return
    }
    let record = JournalRecord.amend(target, id: id, user: user, at: clock.now, text: text)
    guard journal([record], verb: .amend, connection: connection) else { return }
    apply(record)
    tell(ConversationKey(target: target, author: user), except: connection) {
      .amended(target: $0, id: id, user: user, text: text)
    }
    send(.ok(.amend, fields: [target.description, id.description]), to: connection)
  }

  /// Applies an `amend` record: the message, when still kept, written by
  /// `user` and not taken back, gets the new text. Returns what it was,
  /// for a rollback.
  func applyAmendment(_ target: Target, id: MessageID, user: String, _ text: String) -> (
    ConversationKey, Int, StoredMessage
  )? {
    changeOwnMessage(target, id: id, user: user) { $0.amended(text) }
  }
}

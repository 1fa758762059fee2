import LineProtocol

/// Taking a message back (chatbroker(7), `REDACT`): its author, within
/// ``Limits/redactionMilliseconds`` of sending it, replaces it in history
/// by a marker with no text; every session showing the conversation is
/// told, and the record makes the journal compact so that its file no
/// longer holds the text (at once, or within `--purge-interval`,
/// chatbroker(8)).
extension Engine {
  func redact(_ target: Target, id: MessageID, connection: ConnectionID, user: String) {
    guard
      let message = ownMessage(
        target, id: id, verb: .redact, doing: "taken back", takenBackToo: true,
        connection: connection, user: user)
    else { return }
    guard !message.isRedacted else {
      send(.ok(.redact, fields: [target.description, id.description]), to: connection)
      return
    }
    guard isRecent(message, verb: .redact, doing: "taken back", connection: connection) else {
      return
    }
    let conversation = ConversationKey(target: target, author: user)
    let record = JournalRecord.redact(target, id: id, user: user, at: clock.now)
    guard journal([record], verb: .redact, connection: connection) else { return }
    apply(record)
    log.info("message taken back", ["id": id.description, "user": user])
    tellRedacted(id, in: conversation, by: user, except: connection)
    send(
      .ok(.redact, fields: [target.description, id.description]), to: connection)
  }

  /// Message `id` of `target` when `user` sent it there (`REDACT`'s and
  /// `AMEND`'s first rules, `doing` saying which): else refused, `LIMIT`
  /// in a room shared with other hosts, whose journals keep their own
  /// copies, and `NOSUCHMSG` for someone else's, or one no longer kept,
  /// or, unless `takenBackToo`, one taken back.
  func ownMessage(
    _ target: Target, id: MessageID, verb: Verb, doing: String, takenBackToo: Bool = false,
    connection: ConnectionID, user: String
  ) -> StoredMessage? {
    guard checkRecipient(target, verb: verb, connection: connection) else { return nil }
    if isShared(target) {
      fail(
        verb, .limit,
        "\(target) is shared with other hosts, whose journals keep their own copies; "
          + "its messages cannot be \(doing)",
        to: connection)
      return nil
    }
    let conversation = ConversationKey(target: target, author: user)
    guard let history = histories[conversation], let sequence = history.sequence(of: id),
      history[sequence].author == user, takenBackToo || !history[sequence].isRedacted
    else {
      fail(
        verb, .noSuchMessage,
        "you sent no message \(id) in \(target); give the id of one of yours, as OK SAY, "
          + "MSG and HISTORY show it",
        to: connection)
      return nil
    }
    return history[sequence]
  }

  /// Whether `message` was sent within ``Limits/redactionMilliseconds``,
  /// the time in which it may be taken back or changed; `LIMIT` if not.
  func isRecent(
    _ message: StoredMessage, verb: Verb, doing: String, connection: ConnectionID
  ) -> Bool {
    let hours = limits.redactionMilliseconds / 3_600_000
    guard clock.now.milliseconds - message.time.milliseconds <= limits.redactionMilliseconds
    else {
      fail(
        verb, .limit,
        "message \(message.id) was sent more than \(hours) hours ago and can no longer be \(doing)",
        to: connection)
      return false
    }
    return true
  }

  /// `REDACT <target> <id> <user>` to every session showing the
  /// conversation, each with the target as it sees it.
  private func tellRedacted(
    _ id: MessageID, in conversation: ConversationKey, by user: String, except: ConnectionID
  ) {
    tell(conversation, except: except) {
      .redacted(target: $0, id: id, user: user)
    }
  }

  /// Applies a `redact` record: the message, when still kept and written
  /// by `user`, becomes its marker. Returns what it was, for a rollback.
  func applyRedaction(_ target: Target, id: MessageID, user: String) -> (
    ConversationKey, Int, StoredMessage
  )? {
    changeOwnMessage(target, id: id, user: user) { $0.redacted }
  }

  /// Replaces `user`'s message `id` of `target`, when still kept and not
  /// taken back, by what `change` makes of it (`redact` and `amend`
  /// records). Returns where it was and what it was, for a rollback.
  func changeOwnMessage(
    _ target: Target, id: MessageID, user: String, _ change: (StoredMessage) -> StoredMessage
  ) -> (ConversationKey, Int, StoredMessage)? {
    let conversation = ConversationKey(target: target, author: user)
    guard let sequence = histories[conversation]?.sequence(of: id),
      let message = histories[conversation]?[sequence], message.author == user,
      !message.isRedacted
    else { return nil }
    histories[conversation]?.replace(at: sequence, with: change(message))
    return (conversation, sequence, message)
  }
}

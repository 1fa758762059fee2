import LineProtocol

/// Reactions (since 1.6; chatbroker(7), `REACT`): a user puts a short emoji
/// or word on a message of a conversation they may write to, at most one
/// of each, and may take it off again. Journaled like every change, kept
/// on the message (``StoredMessage/reactions``), so that they leave with
/// it: a line taken back loses its reactions, and an old line that falls
/// out of the history takes them along. They never count as unread.
extension Engine {
  /// `REACT` or `UNREACT` (`removed`). `fallbackTags`: an IRC client's
  /// TAGMSG that carried the reaction, passed on as such when the message
  /// is not one the broker can show the user (it may be another server's).
  func react(
    _ target: Target, id: MessageID, reaction: String, removed: Bool,
    fallbackTags: ClientTags? = nil, connection: ConnectionID, user: String
  ) {
    let verb: Verb = removed ? .unreact : .react
    guard checkRecipient(target, verb: verb, connection: connection) else { return }
    let conversation = ConversationKey(target: target, author: user)
    // First whether the user may read the message: the same words whether
    // it never was, was taken back, or is in a room they may not read,
    // which must look like a room that is not there.
    guard !isShared(target) || fallbackTags == nil, mayAnswer(id, in: conversation, user: user),
      let sequence = histories[conversation]?.sequence(of: id),
      let message = histories[conversation]?[sequence]
    else {
      if let fallbackTags {
        return signal(target, tags: fallbackTags, connection: connection, user: user)
      }
      fail(verb, .noSuchMessage, "no message \(id) in the history of \(target)", to: connection)
      return
    }
    guard !isShared(target) else {
      fail(
        verb, .limit, "\(target) is shared with other hosts, and reactions are not shared yet",
        to: connection)
      return
    }
    // Then whether they may write to it (a ban, a moderated room).
    guard checkAccess(target, verb: verb, connection: connection, user: user) else { return }
    let answer = BrokerEvent.ok(verb, fields: [target.description, id.description, reaction])
    guard let changed = message.reacting(user, reaction, removed: removed) else {
      // Already there, or already gone: nothing to write.
      send(answer, to: connection)
      return
    }
    guard changed.reactions.count <= Reaction.maximumPerMessage,
      changed.reactionCount <= Reaction.maximumUsersPerMessage
    else {
      fail(
        verb, .limit,
        "message \(id) has as many reactions as it may carry (\(Reaction.maximumPerMessage) "
          + "different ones, \(Reaction.maximumUsersPerMessage) in all)",
        to: connection)
      return
    }
    let record = JournalRecord.react(
      target, id: id, user: user, reaction: reaction, removed: removed)
    guard journal([record], verb: verb, connection: connection) else { return }
    apply(record)
    tell(conversation, except: connection) {
      .reacted(target: $0, id: id, user: user, reaction: reaction, removed: removed)
    }
    send(answer, to: connection)
  }

  /// Applies a `react` or `unreact` record: the message, when still kept
  /// and not taken back, gets or loses `user`'s reaction. Returns where it
  /// was and what it was, for a rollback.
  func applyReaction(
    _ target: Target, id: MessageID, user: String, _ reaction: String, removed: Bool
  ) -> (ConversationKey, Int, StoredMessage)? {
    let conversation = ConversationKey(target: target, author: user)
    guard let sequence = histories[conversation]?.sequence(of: id),
      let message = histories[conversation]?[sequence], !message.isRedacted,
      let changed = message.reacting(user, reaction, removed: removed)
    else { return nil }
    histories[conversation]?.replace(at: sequence, with: changed)
    return (conversation, sequence, message)
  }
}

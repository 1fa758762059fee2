import LineProtocol

extension Engine {
  /// `MARKREAD <target> <id>`: the user's read position in the target
  /// moves to a delivered message of it, forward only (chatbroker(7),
  /// "Read markers"). A move is journaled and shown to the user's other
  /// sessions; an older id is no error, and the reply names the marker
  /// that stays.
  func markRead(_ target: Target, id: MessageID, connection: ConnectionID, user: String) {
    guard checkRecipient(target, verb: .markRead, connection: connection) else { return }
    let conversation = ConversationKey(target: target, author: user)
    guard let sequence = histories[conversation]?.sequence(of: id) else {
      fail(
        .markRead, .noSuchMessage,
        "no message \(id) in the history of \(target); "
          + "give the id of a delivered message, as MSG and HISTORY show it",
        to: connection)
      return
    }
    if let current = readMarkers[user]?[conversation], current.sequence >= sequence {
      send(
        .ok(.markRead, fields: [target.description, current.id.description]), to: connection,
        kind: .outcome(.markRead))
      return
    }
    let shown = conversation.target(seenBy: user)
    let record = JournalRecord.read(user: user, target: shown, id: id, at: clock.now)
    guard journal([record], verb: .markRead, connection: connection) else { return }
    apply(record)
    send(
      .ok(.markRead, fields: [target.description, id.description]), to: connection,
      kind: .outcome(.markRead))
    let event = Outgoing(.markRead(target: shown, id: id))
    for other in connectionsByUser[user] ?? [] where other != connection {
      send(event, to: other, kind: .revealing)
    }
  }

  /// Sets (or, rolling back, restores) a marker, and counts the
  /// conversation afresh from it.
  func setMarker(_ marker: ReadMarker?, of user: String, in conversation: ConversationKey) {
    readMarkers[user, default: [:]][conversation] = marker
    if readMarkers[user]?.isEmpty == true { readMarkers[user] = nil }
    recount(conversation, for: user)
  }

  /// The marker a `read` record sets: at its message's place in the
  /// history; when that message has been dropped from a full history
  /// since, just before the oldest kept one, as every kept message is newer.
  func marker(for id: MessageID, in conversation: ConversationKey, at time: Timestamp)
    -> ReadMarker
  {
    let history = histories[conversation]
    let sequence = history?.sequence(of: id) ?? ((history?.firstSequence ?? 0) - 1)
    return ReadMarker(id: id, sequence: sequence, time: time)
  }
}

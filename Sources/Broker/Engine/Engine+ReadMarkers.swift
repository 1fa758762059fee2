import LineProtocol

extension Engine {
  /// `MARKREAD <target> <id>`: the user's read position in the target
  /// moves to a delivered message of it, forward only (chatbroker(7),
  /// "Your rooms and read markers"). A move is journaled and shown to the
  /// user's other sessions; an older id is no error, and the reply names
  /// the marker that stays.
  func markRead(_ target: Target, id: MessageID, connection: ConnectionID, user: String) {
    guard checkRecipient(target, verb: .markRead, connection: connection) else { return }
    let conversation = ConversationKey(target: target, author: user)
    guard let sequence = readableHistory(conversation, user: user)?.sequence(of: id) else {
      fail(
        .markRead, .noSuchMessage,
        "no message \(id) in the history of \(target); "
          + "give the id of a delivered message, as MSG and HISTORY show it",
        to: connection)
      return
    }
    let marker = moveMarker(
      to: sequence, in: conversation, target: target, connection: connection, user: user)
    guard let marker else { return }
    send(
      .ok(.markRead, fields: [target.description, marker.id.description]), to: connection)
  }

  /// `MARKREAD <target> <time>` (since 1.6; IRC's `MARKREAD <target>
  /// timestamp=<time>`): the marker moves to the newest message delivered
  /// at or before `time`, forward only; the reply is where it stands.
  func markRead(_ target: Target, at time: Timestamp, connection: ConnectionID, user: String) {
    guard checkRecipient(target, verb: .markRead, connection: connection) else { return }
    let conversation = ConversationKey(target: target, author: user)
    var marker = visibleMarker(conversation, user: user)
    if let history = readableHistory(conversation, user: user),
      let sequence = (history.firstSequence..<history.endSequence).last(where: {
        history[$0].time <= time
      })
    {
      marker = moveMarker(
        to: sequence, in: conversation, target: target, connection: connection, user: user)
      guard marker != nil else { return }
    }
    answerReadMarker(marker, in: target, to: connection)
  }

  /// `MARKREAD <target>` (since 1.6): where the marker stands.
  func showReadMarker(_ target: Target, connection: ConnectionID, user: String) {
    let marker = visibleMarker(ConversationKey(target: target, author: user), user: user)
    answerReadMarker(marker, in: target, to: connection)
  }

  /// The `MARKREAD` line your other sessions get when the marker moves,
  /// then `OK MARKREAD <target> <id>`, `*` for none: one answer for both
  /// wires, the line carrying the marker's time for IRC's `MARKREAD
  /// <target> timestamp=<time>` (chatbroker(7), MARKREAD).
  private func answerReadMarker(
    _ marker: ReadMarker?, in target: Target, to connection: ConnectionID
  ) {
    send(
      .readMarker(target: target, id: marker?.id, time: marker?.delivered), to: connection)
    send(
      .ok(.markRead, fields: [target.description, marker?.id.description ?? "*"]), to: connection)
  }

  /// The user's marker in a conversation; none in a room they may not
  /// read, as in one that does not exist (chatbroker(7), "Private rooms").
  func visibleMarker(_ conversation: ConversationKey, user: String) -> ReadMarker? {
    if case .room(let name) = conversation, !mayRead(name, user: user) { return nil }
    return readMarkers[user]?[conversation]
  }

  /// Moves the user's marker forward to `sequence`, journaled, and tells
  /// the user's other sessions; a marker already there or further stays.
  /// Returns the marker as it now stands, or nil when the journal could
  /// not be written (answered `STORAGE`).
  private func moveMarker(
    to sequence: Int, in conversation: ConversationKey, target: Target,
    connection: ConnectionID, user: String
  ) -> ReadMarker? {
    if let current = readMarkers[user]?[conversation], current.sequence >= sequence {
      return current
    }
    guard let message = histories[conversation]?[sequence] else { return nil }
    let shown = conversation.target(seenBy: user)
    let record = JournalRecord.read(user: user, target: shown, id: message.id, at: clock.now)
    guard journal([record], verb: .markRead, connection: connection) else { return nil }
    apply(record)
    let event = Outgoing(.readMarker(target: shown, id: message.id, time: message.time))
    for other in connectionsByUser[user] ?? [] where other != connection {
      send(event, to: other)
    }
    return readMarkers[user]?[conversation]
  }

  /// Sets (or, rolling back, restores) a marker.
  func setMarker(_ marker: ReadMarker?, of user: String, in conversation: ConversationKey) {
    readMarkers[user, default: [:]][conversation] = marker
    if readMarkers[user]?.isEmpty == true { readMarkers[user] = nil }
  }

  /// The marker a `read` record sets: at its message's place in the
  /// history; when that message has been dropped from a full history
  /// since, just before the oldest kept one, as every kept message is newer.
  func marker(for id: MessageID, in conversation: ConversationKey, at time: Timestamp)
    -> ReadMarker
  {
    let history = histories[conversation]
    guard let history, let sequence = history.sequence(of: id) else {
      return ReadMarker(
        id: id, sequence: (history?.firstSequence ?? 0) - 1, time: time, delivered: nil)
    }
    return ReadMarker(id: id, sequence: sequence, time: time, delivered: history[sequence].time)
  }
}

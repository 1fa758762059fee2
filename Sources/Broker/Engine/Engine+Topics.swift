import LineProtocol

/// Room topics (chatbroker(7), `TOPIC`): any member may set one, only an
/// operator in a `+t` room (since 1.5); it is journaled, shown on `JOIN`,
/// in `ROOMS` and to the room when it changes.
extension Engine {
  /// `TOPIC <room>`: the topic as a `TOPIC` line, when there is one, then
  /// `OK TOPIC <room>`.
  /// A room the user may not read has no topic, as one that does not
  /// exist (chatbroker(7), "Private rooms").
  func showTopic(_ name: RoomName, connection: ConnectionID, user: String) {
    if mayRead(name, user: user), let topic = rooms[name]?.topic {
      send(topicEvent(name, topic), to: connection)
    }
    send(.ok(.topic, fields: [name.description]), to: connection)
  }

  /// `TOPIC <room> <text>`: one of the user's rooms gets a new topic (or
  /// none, for an empty text), journaled; every session in the room sees
  /// the `TOPIC` line once it is durable.
  func setTopic(_ name: RoomName, text: String, connection: ConnectionID, user: String) {
    guard isHolder(user, of: name) || isOperator(name, user: user), mayRead(name, user: user)
    else {
      fail(.topic, .notJoined, "join \(name) to set its topic", to: connection)
      return
    }
    if rooms[name]?.modes.flags.contains(.topicLock) == true, !isOperator(name, user: user) {
      fail(
        .topic, .notOperator, "only an operator of \(name) sets its topic (+t)", to: connection)
      return
    }
    if isShared(.room(name)) {
      fail(
        .topic, .limit,
        "\(name) is shared with other hosts, and topics are not shared between hosts",
        to: connection)
      return
    }
    let record = JournalRecord.topic(name, text: text, user: user, at: clock.now)
    guard journal([record], verb: .topic, connection: connection) else { return }
    apply(record)
    let topic = rooms[name]?.topic ?? RoomTopic(text: "", user: user, time: clock.now)
    broadcast(Outgoing(topicEvent(name, topic)), in: name)
    send(.ok(.topic, fields: [name.description]), to: connection)
  }

  /// On `JOIN`: the topic, for the session that joined.
  func sendTopic(of name: RoomName, to connection: ConnectionID) {
    guard let topic = rooms[name]?.topic else { return }
    send(topicEvent(name, topic), to: connection)
  }

  /// Sets or clears a room's topic as a record says; returns what it was.
  func changeTopic(_ name: RoomName, text: String, user: String, at time: Timestamp)
    -> RoomTopic?
  {
    let before = rooms[name]?.topic
    rooms[name]?.topic = text.isEmpty ? nil : RoomTopic(text: text, user: user, time: time)
    return before
  }

  private func topicEvent(_ name: RoomName, _ topic: RoomTopic) -> BrokerEvent {
    .topic(room: name, user: topic.user, time: topic.time, text: topic.text)
  }
}

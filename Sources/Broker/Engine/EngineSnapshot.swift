import LineProtocol

/// The durable part of the engine's state at one instant.
public struct EngineSnapshot: Sendable {
  let nextID: MessageID
  let rooms: [RoomName: Timestamp]
  let histories: [ConversationKey: History]
  let pending: [PendingMessage]
  /// Which of `pending` are series, with their rules.
  let series: [MessageID: Series]
  /// Since 1.2: each user's rooms, and read markers.
  let roomsByUser: [String: [RoomName: Timestamp]]
  let readMarkers: [String: [ConversationKey: ReadMarker]]
  /// Since 1.3: the outbox and the stream position of shared rooms.
  let federation: FederationState
  /// Since 1.4: the rooms' topics.
  let topics: [RoomName: RoomTopic]
  /// Since 1.4: who may read each private room.
  let accesses: [RoomName: RoomAccess]
  /// Since 1.5: each room's modes and operators, where it has any.
  let modes: [RoomName: RoomModes]
  /// Since 1.6: the browser door's tokens not expired yet, oldest first.
  let webTokens: [WebTokenGrant]
  /// Since 1.6: where each user's last session left each room (`seen`).
  let seen: [String: [RoomName: (id: MessageID, time: Timestamp)]]

  /// Calls `body` with every record of a journal that replays to this state:
  /// the header, rooms, their access and invites, their topics, each user's rooms, each conversation's history
  /// oldest first, the pending messages and series, and the read markers
  /// (after the messages they point into), where each user's last session
  /// left each room, and the browser door's tokens.
  public func forEachRecord(_ body: (JournalRecord) throws -> Void) rethrows {
    try body(.header(nextID: nextID))
    for (name, created) in rooms.sorted(by: { $0.key < $1.key }) {
      try body(.room(name, created: created))
    }
    // A private room's access and invites right after the rooms, before
    // anything that names them.
    for (name, access) in accesses.sorted(by: { $0.key < $1.key }) {
      try body(.access(name, access.restriction, user: access.creator, at: access.since))
      for user in access.invited.sorted() {
        try body(.invite(name, user: user, at: access.since))
      }
    }
    // Who made a room private became its operator then: a creator no
    // longer one is taken back at once, before the modes, whose records
    // must be the last to say who changed them (RoomModes.changedBy).
    for (name, access) in accesses.sorted(by: { $0.key < $1.key })
    where modes[name]?.operators.contains(access.creator) != true {
      let change = ModeChange(adding: false, letter: .op, argument: access.creator)
      try body(.mode(name, change, user: access.creator, at: access.since))
    }
    for (name, modes) in modes.sorted(by: { $0.key < $1.key }) {
      for (change, user, time) in modes.changes {
        try body(.mode(name, change, user: user, at: time))
      }
    }
    for (name, topic) in topics.sorted(by: { $0.key < $1.key }) {
      try body(.topic(name, text: topic.text, user: topic.user, at: topic.time))
    }
    // Whose rooms they are, right after the rooms they name.
    for (user, rooms) in roomsByUser.sorted(by: { $0.key < $1.key }) {
      for (room, since) in rooms.sorted(by: { $0.key < $1.key }) {
        try body(.member(user: user, room: room, at: since))
      }
    }
    for (conversation, history) in histories {
      for message in history.all {
        let target = conversation.target(seenBy: message.author)
        try body(.message(message, target: target))
        // Its reactions right after it, in the order they were put
        // (chatbroker(8), react).
        for tally in message.reactions {
          for user in tally.users {
            try body(
              .react(
                conversation.target(seenBy: user), id: message.id, user: user,
                reaction: tally.reaction, removed: false))
          }
        }
      }
    }
    try forEachFederationRecord(body)
    for pending in pending.sorted(by: { $0.id < $1.id }) {
      if let series = series[pending.id] {
        try body(.series(pending, series))
      } else {
        try body(.schedule(pending))
      }
    }
    for (user, markers) in readMarkers.sorted(by: { $0.key < $1.key }) {
      let targets = markers.map { (target: $0.key.target(seenBy: user), marker: $0.value) }
      for (target, marker) in targets.sorted(by: { $0.target.description < $1.target.description })
      {
        try body(.read(user: user, target: target, id: marker.id, at: marker.time))
      }
    }
    for (user, rooms) in seen.sorted(by: { $0.key < $1.key }) {
      for (room, message) in rooms.sorted(by: { $0.key < $1.key }) {
        try body(.seen(user: user, room: room, id: message.id, at: message.time))
      }
    }
    for grant in webTokens { try body(.webToken(grant)) }
  }
}

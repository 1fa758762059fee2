import LineProtocol

extension Engine {
  /// Changes the state as a journal record says. Live requests and start-up
  /// replay both come through here, so the journal replays to exactly the
  /// state that wrote it.
  func apply(_ record: JournalRecord) {
    switch record {
    case .header(let next):
      nextID = max(nextID, next.value)
    case .room(let name, let created):
      if rooms[name] == nil { rooms[name] = Room(created: created) }
    case .message(let message, let target):
      noteTaken(message.id)
      if case .room(let name) = target, rooms[name] == nil {
        rooms[name] = Room(created: message.time)
      }
      appendHistory(message, to: ConversationKey(target: target, author: message.author))
    case .schedule(let pending):
      noteTaken(pending.id)
      scheduler.insert(pending)
    case .cancel(let id, _):
      scheduler.remove(id)
    case .delivery(let id, let time):
      guard let pending = scheduler.remove(id) else { return }
      let message = StoredMessage(id: id, time: time, author: pending.author, text: pending.text)
      appendHistory(message, to: ConversationKey(target: pending.target, author: pending.author))
    }
  }

  private func noteTaken(_ id: MessageID) {
    // Replayed ids are at most MessageID.maximumValue: the +1 cannot overflow.
    if id.value >= nextID { nextID = min(id.value, MessageID.maximumValue) + 1 }
  }

  private func appendHistory(_ message: StoredMessage, to conversation: ConversationKey) {
    if histories[conversation] == nil {
      histories[conversation] = History(capacity: limits.historyPerConversation)
    }
    histories[conversation]?.append(message)
  }

  /// Start-up: one record of the journal, in order.
  public func replay(_ record: JournalRecord) {
    apply(record)
  }

  /// After a failed sync the journal was cut back to what is on disk: forget
  /// the durable state, to be replayed from the file again. Sessions and the
  /// rooms people are in stay; ids already handed out are never reused.
  public func resetDurableState() {
    histories.removeAll()
    scheduler = Scheduler()
    rooms = rooms.filter { !$0.value.connections.isEmpty }
    armedDue = nil
  }

  /// Start-up is over: arm the timer, so that what fell due while the broker
  /// was down is delivered right away, in due order.
  public func finishReplay() {
    rearmTimer()
  }

  /// What a compacted journal must hold to replay to the present state. The
  /// parts are value types, so taking a snapshot copies nothing until the
  /// engine next changes them; the records can be written on another thread.
  public func snapshot() -> EngineSnapshot {
    EngineSnapshot(
      nextID: MessageID(value: nextID), rooms: rooms.mapValues(\.created),
      histories: histories, pending: scheduler.all)
  }
}

/// The durable part of the engine's state at one instant.
public struct EngineSnapshot: Sendable {
  let nextID: MessageID
  let rooms: [RoomName: Timestamp]
  let histories: [ConversationKey: History]
  let pending: [PendingMessage]

  /// Calls `body` with every record of a journal that replays to this state:
  /// the header, rooms, each conversation's history oldest first, and the
  /// pending messages.
  public func forEachRecord(_ body: (JournalRecord) throws -> Void) rethrows {
    try body(.header(nextID: nextID))
    for (name, created) in rooms.sorted(by: { $0.key < $1.key }) {
      try body(.room(name, created: created))
    }
    for (conversation, history) in histories {
      for message in history.all {
        let target = conversation.target(seenBy: message.author)
        try body(.message(message, target: target))
      }
    }
    for pending in pending.sorted(by: { $0.id < $1.id }) {
      try body(.schedule(pending))
    }
  }
}

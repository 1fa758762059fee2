import LineProtocol

extension Engine {
  /// `SAY`, and `ACTION` (since 1.4) for a message shown as an action;
  /// `notice` and `tags` for the IRC gateway's NOTICE and tagged PRIVMSG.
  func say(
    _ target: Target, text: String, action: Bool = false, notice: Bool = false, tags: String = "",
    connection: ConnectionID, user: String
  ) {
    let verb: Verb = action ? .action : .say
    guard checkAccess(target, verb: verb, connection: connection, user: user) else { return }
    if isShared(target) {
      guard !action else {
        fail(
          verb, .limit, "\(target) is shared with other hosts, and actions are not shared yet",
          to: connection)
        return
      }
      return sayShared(target, text: text, connection: connection, user: user)
    }
    guard checkRecipient(target, verb: verb, connection: connection) else { return }
    guard admitNewRoom(target, verb: verb, connection: connection, user: user),
      let id = takeID(verb, connection: connection)
    else { return }
    let newRoom = newRoomRecord(for: target)
    let message = StoredMessage(
      id: id, time: clock.now, author: user, text: text, isAction: action)
    let record = JournalRecord.message(message, target: target)
    guard journal([newRoom, record].compactMap { $0 }, verb: verb, connection: connection)
    else { return }
    if let newRoom { applyNewRoom(newRoom) }
    apply(record)
    if case .user(let other) = target, !notice {
      tellAway(other, to: user, connection: connection)
    }
    send(
      .accepted(verb, id: message.id, time: message.time), to: connection)
    fanOut(
      message, in: ConversationKey(target: target, author: user), except: connection,
      notice: notice, tags: tags)

  }

  /// The IRC gateway's TAGMSG: the tags go to everyone in the conversation
  /// but the sender's connection, as a message would, and are not kept;
  /// `OK SAY` answers it (its IRC echo).
  func tagmsg(_ target: Target, tags: String, connection: ConnectionID, user: String) {
    guard checkRecipient(target, verb: .say, connection: connection),
      checkAccess(target, verb: .say, connection: connection, user: user)
    else { return }
    let now = clock.now
    tell(ConversationKey(target: target, author: user), except: connection) {
      .tagmsg(target: $0, user: user, time: now, tags: tags)
    }
    send(.ok(.say, fields: []), to: connection)
  }

  /// Sends a message to everyone in its conversation: the room's connections,
  /// or every session of both parties. Each variant of the line is encoded
  /// once and shared by all its recipients.
  /// `notice`, `tags`: an IRC NOTICE or tagged PRIVMSG, delivered as
  /// ``BrokerEvent/ircMessage(target:id:time:user:text:notice:tags:)``.
  func fanOut(
    _ message: StoredMessage, in conversation: ConversationKey, except: ConnectionID?,
    notice: Bool = false, tags: String = ""
  ) {
    func delivered(_ target: Target) -> BrokerEvent {
      notice || !tags.isEmpty
        ? .ircMessage(
          target: target, id: message.id, time: message.time, user: message.author,
          text: message.text, notice: notice, tags: tags)
        : .message(
          target: target, id: message.id, time: message.time, user: message.author,
          text: message.text, action: message.isAction, series: message.series)
    }
    tell(conversation, except: except, delivered)
  }

  /// Sends an event to everyone in a conversation but `except`: the room's
  /// connections, or every session of both parties, each party's line
  /// made once by `event` for the target that party sees (`@bob` for
  /// alice, `@alice` for bob) and shared by its sessions.
  func tell(
    _ conversation: ConversationKey, except: ConnectionID?, _ event: (Target) -> BrokerEvent
  ) {
    switch conversation {
    case .room(let name):
      broadcast(Outgoing(event(.room(name))), in: name, except: except)
    case .direct(let first, let second):
      for party in first == second ? [first] : [first, second] {
        guard let connections = connectionsByUser[party] else { continue }
        let line = Outgoing(event(conversation.target(seenBy: party)))
        for connection in connections where connection != except {
          send(line, to: connection)
        }
      }
    }
  }

  func history(
    _ target: Target, count: Int, anchor: HistoryAnchor?, connection: ConnectionID, user: String
  ) {
    let limit = min(max(count, 1), limits.historyRequest)
    let conversation = ConversationKey(target: target, author: user)
    let messages = readableHistory(conversation, user: user) ?? History(capacity: 1)
    let range: Range<Int>
    switch messages.range(anchor, count: limit) {
    case .success(let found): range = found
    case .failure(let missing):
      fail(
        .history, .noSuchMessage, "no message \(missing.id) in the history of \(target)",
        to: connection)
      return
    }
    for sequence in range {
      let message = messages[sequence]
      if message.isRedacted {
        send(
          .redactedHistory(
            target: target, id: message.id, time: message.time, user: message.author),
          to: connection)
        continue
      }
      send(
        .history(
          target: target, id: message.id, time: message.time, user: message.author,
          text: message.text, action: message.isAction, series: message.series),
        to: connection)
    }
    send(
      .ok(.history, fields: [target.description, String(range.count)]), to: connection)
  }

}

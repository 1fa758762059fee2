import LineProtocol

extension Engine {
  /// `SAY`, `ACTION` (since 1.4) for a message shown as an action,
  /// `NOTICE` (since 1.6) for one no program answers, and `REPLY` (since
  /// 1.6) for one that answers message `replyTo` of the conversation;
  /// `tags`: the sender's client-only tags, passed on to the recipients.
  /// `unknownReplyIsMessage`: a reply to a message the user cannot read
  /// here is sent as a plain message rather than refused (an IRC client's
  /// `+draft/reply` may name a message of another server).
  func say(
    _ target: Target, text: String, action: Bool = false, notice: Bool = false,
    block: Bool = false, replyTo: MessageID? = nil, unknownReplyIsMessage: Bool = false,
    tags: ClientTags = ClientTags(), connection: ConnectionID, user: String
  ) {
    let block = block || MessageBlock.isBlock(text)
    let verb: Verb =
      action ? .action : notice ? .notice : replyTo != nil ? .reply : block ? .block : .say
    guard checkAccess(target, verb: verb, connection: connection, user: user) else { return }
    if isShared(target) {
      guard !action, !block, replyTo == nil || unknownReplyIsMessage else {
        let what = action ? "actions" : block ? "blocks of several lines" : "replies"
        fail(
          verb, .limit, "\(target) is shared with other hosts, and \(what) are not shared yet",
          to: connection)
        return
      }
      return sayShared(target, text: text, connection: connection, user: user)
    }
    guard checkRecipient(target, verb: verb, connection: connection) else { return }
    var replyTo = replyTo
    if let answered = replyTo,
      !mayAnswer(answered, in: ConversationKey(target: target, author: user), user: user)
    {
      guard unknownReplyIsMessage else {
        // The same words whether the message never was, was taken back,
        // or is in a conversation the user may not read.
        fail(
          verb, .noSuchMessage, "no message \(answered) in the history of \(target)",
          to: connection)
        return
      }
      replyTo = nil
    }
    guard admitNewRoom(target, verb: verb, connection: connection, user: user),
      let id = takeID(verb, connection: connection)
    else { return }
    let newRoom = newRoomRecord(for: target)
    let message = StoredMessage(
      id: id, time: clock.now, author: user, text: text, isAction: action, replyTo: replyTo)
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

  /// Whether `user` may answer message `id` in `conversation`: it is in
  /// the history they may read, and not taken back.
  func mayAnswer(_ id: MessageID, in conversation: ConversationKey, user: String) -> Bool {
    guard let history = readableHistory(conversation, user: user),
      let sequence = history.sequence(of: id)
    else { return false }
    return !history[sequence].isRedacted
  }

  /// A message request that came with client-only tags
  /// (``Request/tagged(_:_:)``): the message, its tags passed on.
  func say(_ message: Request, tags: ClientTags, connection: ConnectionID, user: String) {
    switch message {
    case .reply(let target, let id, let text):
      say(
        target, text: text, replyTo: id, unknownReplyIsMessage: true, tags: tags,
        connection: connection, user: user)
    case .say(let target, let text):
      say(target, text: text, tags: tags, connection: connection, user: user)
    case .action(let target, let text):
      say(target, text: text, action: true, tags: tags, connection: connection, user: user)
    case .notice(let target, let text):
      say(target, text: text, notice: true, tags: tags, connection: connection, user: user)
    case .react(let target, let id, let reaction, let removed):
      react(
        target, id: id, reaction: reaction, removed: removed, fallbackTags: tags,
        connection: connection, user: user)
    default:
      // Only a door builds this value, and only around a message.
      fail(
        message.verb, .syntax, "client tags go with SAY, ACTION, NOTICE or REPLY", to: connection)
    }
  }

  /// Client-only tags alone (IRC's TAGMSG): they go to everyone in the
  /// conversation but the sender's connection, as a message would, and are
  /// not kept; `OK SAY` answers it (its IRC echo).
  func signal(_ target: Target, tags: ClientTags, connection: ConnectionID, user: String) {
    guard checkRecipient(target, verb: .say, connection: connection),
      checkAccess(target, verb: .say, connection: connection, user: user)
    else { return }
    let now = clock.now
    tell(ConversationKey(target: target, author: user), except: connection) {
      .signal(target: $0, user: user, time: now, tags: tags)
    }
    send(.ok(.say, fields: []), to: connection)
  }

  /// Sends a message to everyone in its conversation: the room's connections,
  /// or every session of both parties. Each variant of the line is encoded
  /// once and shared by all its recipients.
  /// `notice`, `tags`: how this delivery was sent (neither is kept).
  func fanOut(
    _ message: StoredMessage, in conversation: ConversationKey, except: ConnectionID?,
    notice: Bool = false, tags: ClientTags = ClientTags()
  ) {
    func delivered(_ target: Target) -> BrokerEvent {
      .message(
        target: target, id: message.id, time: message.time, user: message.author,
        text: message.text, action: message.isAction, series: message.series,
        replyTo: message.replyTo, notice: notice, tags: tags)
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

  /// A kept message as a `HIST` line shows it: all it carries, or for
  /// one taken back its place and no text (chatbroker(7), `HIST`).
  func historyLine(_ message: StoredMessage, target: Target) -> BrokerEvent {
    if message.isRedacted {
      return .redactedHistory(
        target: target, id: message.id, time: message.time, user: message.author)
    }
    return .history(
      target: target, id: message.id, time: message.time, user: message.author,
      text: message.text, action: message.isAction, series: message.series,
      replyTo: message.replyTo, edited: message.isEdited, reactions: message.reactions)
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
      send(historyLine(messages[sequence], target: target), to: connection)
    }
    send(
      .ok(.history, fields: [target.description, String(range.count)]), to: connection)
  }

}

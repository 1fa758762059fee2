import LineProtocol

extension Engine {
  func sayAt(
    _ target: Target, when: String, text: String, connection: ConnectionID, user: String
  ) {
    let now = clock.now
    let due: Timestamp
    do {
      due = try WhenParser.resolve(
        when, now: now, timeZone: clock.timeZone, horizonMilliseconds: limits.horizonMilliseconds)
    } catch {
      send(error.line, to: connection)
      return
    }
    guard checkRecipient(target, verb: .sayAt, connection: connection) else { return }
    let pendingCount = scheduler.count(by: user)
    guard pendingCount < limits.pendingPerUser else {
      log.warning("limit reached", ["limit": "pending", "user": user])
      fail(
        .sayAt, .limit,
        "you have \(pendingCount) pending messages, the most allowed; cancel one or wait",
        to: connection)
      return
    }
    guard let id = takeID(.sayAt, connection: connection) else { return }
    let newRoom = newRoomRecord(for: target)
    let pending = PendingMessage(
      id: id, target: target, author: user, created: now, due: due, text: text)
    let record = JournalRecord.schedule(pending)
    guard journal([newRoom, record].compactMap { $0 }, verb: .sayAt, connection: connection)
    else { return }
    if let newRoom { applyNewRoom(newRoom) }
    apply(record)
    send(BrokerLine.ok(.sayAt, id: pending.id, time: due), to: connection)
    rearmTimer()
  }

  func listScheduled(_ filter: Target?, connection: ConnectionID, user: String) {
    var count = 0
    for pending in scheduler.messages(by: user) {
      let conversation = ConversationKey(target: pending.target, author: user)
      let shown = conversation.target(seenBy: user)
      if let filter, ConversationKey(target: filter, author: user) != conversation { continue }
      send(
        BrokerLine.scheduled(
          id: pending.id, target: shown.description, due: pending.due, created: pending.created,
          text: pending.text),
        to: connection)
      count += 1
    }
    send(BrokerLine.ok(.scheduled, String(count)), to: connection)
  }

  func cancel(_ id: MessageID, connection: ConnectionID, user: String) {
    // Someone else's pending message looks exactly like no message at all.
    guard scheduler[id]?.author == user else {
      fail(.cancel, .noSuchMessage, "you have no pending message \(id)", to: connection)
      return
    }
    let record = JournalRecord.cancel(id, at: clock.now)
    guard journal([record], verb: .cancel, connection: connection) else { return }
    apply(record)
    send(BrokerLine.ok(.cancel, id.description), to: connection)
    rearmTimer()
  }

  /// The wall clock reached the armed instant (or the shell was told to look):
  /// delivers everything due, in due order, through the same path as `SAY`.
  public func timerFired() {
    armedDue = nil
    let now = clock.now
    while true {
      let due = scheduler.popDue(now: now, atMost: 4096)
      if due.isEmpty { break }
      let records = due.map { JournalRecord.delivery($0.id, at: now) }
      do {
        try journal.append(records)
      } catch {
        // Nothing was delivered; try again shortly rather than lose a message.
        scheduler.restore(due)
        log.error(
          "journal write failed", ["reason": error.reason, "undelivered": "\(due.count)"])
        armedDue = now + 1000
        output?.armTimer(at: armedDue)
        return
      }
      for (pending, record) in zip(due, records) {
        apply(record)
        let message = StoredMessage(
          id: pending.id, time: now, author: pending.author, text: pending.text)
        fanOut(
          message, in: ConversationKey(target: pending.target, author: pending.author),
          except: nil)
      }
    }
    rearmTimer()
  }

  /// Arms the one timer for the earliest pending message, when that changed.
  func rearmTimer() {
    let next = scheduler.earliestDue()
    guard next != armedDue else { return }
    armedDue = next
    output?.armTimer(at: next)
  }
}

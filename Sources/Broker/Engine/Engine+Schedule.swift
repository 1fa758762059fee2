import LineProtocol

extension Engine {
  func sayAt(
    _ target: Target, when: String, text: String, connection: ConnectionID, user: String
  ) {
    let now = clock.now
    let due: Timestamp
    do {
      due = try resolve(when, verb: .sayAt)
    } catch {
      send(error.event, to: connection)
      return
    }
    guard
      let (id, newRoom) = admitScheduled(target, verb: .sayAt, connection: connection, user: user)
    else { return }
    let pending = PendingMessage(
      id: id, target: target, author: user, created: now, due: due, text: text)
    guard
      storeScheduled(
        .schedule(pending), creating: newRoom, verb: .sayAt, connection: connection)
    else { return }
    send(.accepted(.sayAt, id: pending.id, time: due), to: connection, kind: .outcome(.sayAt))
    rearmTimer()
  }

  /// What `SAYAT` and `SAYEVERY` check before a line is scheduled: the
  /// recipient, the author's pending limit and a room this would create.
  /// Then the line's id and, for a new room, its record; nil once the
  /// client was told why not.
  func admitScheduled(_ target: Target, verb: Verb, connection: ConnectionID, user: String)
    -> (id: MessageID, newRoom: JournalRecord?)?
  {
    guard checkRecipient(target, verb: verb, connection: connection),
      checkAccess(target, verb: verb, connection: connection, user: user),
      checkPendingLimit(verb, connection: connection, user: user),
      admitNewRoom(target, verb: verb, connection: connection, user: user),
      let id = takeID(verb, connection: connection)
    else { return nil }
    return (id, newRoomRecord(for: target))
  }

  /// Journals a scheduled line's record (after the room it creates, if
  /// any) and applies both; false once the client was told the journal
  /// refused them.
  func storeScheduled(
    _ record: JournalRecord, creating newRoom: JournalRecord?, verb: Verb,
    connection: ConnectionID
  ) -> Bool {
    guard journal([newRoom, record].compactMap { $0 }, verb: verb, connection: connection)
    else { return false }
    if let newRoom { applyNewRoom(newRoom) }
    apply(record)
    return true
  }

  /// `LIMIT` when `user` already has as many pending messages and series as
  /// allowed; true when one more may be scheduled.
  func checkPendingLimit(_ verb: Verb, connection: ConnectionID, user: String) -> Bool {
    let pendingCount = scheduler.count(by: user)
    guard pendingCount >= limits.pendingPerUser else { return true }
    logLimit("pending", user: user)
    fail(
      verb, .limit,
      "you have \(pendingCount) pending messages and series, the most allowed; cancel one or wait",
      to: connection)
    return false
  }

  func listScheduled(_ filter: Target?, connection: ConnectionID, user: String) {
    var count = 0
    let kinds = listKinds(
      answering: .scheduled(filter), showsUnsynced: scheduledShowsUnsynced(for: user))
    for pending in scheduler.messages(by: user) {
      let conversation = ConversationKey(target: pending.target, author: user)
      if let filter, ConversationKey(target: filter, author: user) != conversation { continue }
      send(scheduledLine(pending, seenBy: user), to: connection, kind: kinds.item)
      count += 1
    }
    send(.ok(.scheduled, fields: [String(count)]), to: connection, kind: kinds.end)
  }

  /// `SCHEDULED <id> NEXT <n>`: a `SCHED` line for each of the next `count`
  /// due instants of one of the caller's pending messages or series, as the
  /// rule gives them from its current due instant (chatbroker(7), SCHEDULED).
  func listUpcoming(_ id: MessageID, count: Int, connection: ConnectionID, user: String) {
    guard let pending = scheduler[id], pending.author == user else {
      answerGone(id, verb: .scheduled, code: .noSuchMessage, connection: connection, user: user)
      return
    }
    let request = Request.upcoming(id, count: count)
    let kinds = listKinds(answering: request, showsUnsynced: scheduledShowsUnsynced(for: user))
    // A series' single messages that replace one of its occurrences
    // (`REPLACE`) come in their places, by due instant.
    var lines = [pending]
    if let series = scheduler.series(id) {
      lines = upcoming(of: pending, series, count: count).map {
        var shown = pending
        shown.due = $0
        return shown
      }
      let replacements = scheduler.messages(by: user).filter { $0.replacing == id }
      lines = Array(
        (lines + replacements).sorted { ($0.due, $0.id) < ($1.due, $1.id) }.prefix(count))
    }
    for shown in lines {
      send(scheduledLine(shown, seenBy: user), to: connection, kind: kinds.item)
    }
    send(.ok(.scheduled, fields: [String(lines.count)]), to: connection, kind: kinds.end)
  }

  func cancel(_ id: MessageID, connection: ConnectionID, user: String) {
    // A CANCEL at the due instant finds the message delivered, whether or
    // not the timer has run yet (chatbroker(7) "Changing a pending message").
    guard deliverDue() else {
      fail(
        .cancel, .storage,
        "the journal could not be written; nothing was cancelled, try again later",
        to: connection)
      return
    }
    // Someone else's pending message looks exactly like no message at all;
    // the code stays NOSUCHMSG for a delivered one, as in version 1.0.
    guard scheduler[id]?.author == user else {
      answerGone(id, verb: .cancel, code: .noSuchMessage, connection: connection, user: user)
      rearmTimer()
      return
    }
    let record = JournalRecord.cancel(id, at: clock.now)
    guard journal([record], verb: .cancel, connection: connection) else { return }
    apply(record)
    send(.ok(.cancel, fields: [id.description]), to: connection, kind: .outcome(.cancel))
    rearmTimer()
  }

  /// The wall clock reached the armed instant (or the shell was told to look):
  /// delivers everything due, in due order, through the same path as `SAY`.
  public func timerFired() {
    armedDue = nil
    guard deliverDue() else { return }
    rearmTimer()
  }

  /// Delivers every message and series occurrence due at the clock's now.
  /// Requests that change a pending message call it first, so that whether
  /// the change or the delivery wins depends on the clock alone, never on
  /// whether the timer has run yet. False when the journal could not be
  /// written: nothing was delivered and a retry is armed.
  func deliverDue() -> Bool {
    let now = clock.now
    while true {
      let due = scheduler.popDue(now: now, atMost: 4096)
      if due.isEmpty { return true }
      let records = due.map { pending -> [JournalRecord] in
        // A line due in a shared room goes the way of a SAY there: into the
        // outbox, to be shown when the stream brings it back.
        if let outbox = sharedDelivery(pending, at: now) { return outbox }
        guard let series = scheduler.series(pending.id) else {
          return [.delivery(pending.id, at: now)]
        }
        guard let id = takeFreshID() else {
          // No id left for another occurrence: this one goes out under the
          // series' own id, as its last.
          log.warning("limit reached", ["limit": "message ids", "series": "\(pending.id)"])
          return [.delivery(pending.id, at: now)]
        }
        return [
          .occurrence(
            id, series: pending.id, at: now,
            next: series.next(afterDelivery: now, due: pending.due))
        ]
      }
      do {
        try journal.append(records.flatMap { $0 })
      } catch {
        // Nothing was delivered; try again shortly rather than lose a message.
        scheduler.restore(due)
        log.error(
          "journal write failed", ["reason": error.reason, "undelivered": "\(due.count)"])
        armedDue = now + 1000
        output?.armTimer(at: armedDue)
        return false
      }
      for (pending, group) in zip(due, records) {
        for record in group { apply(record) }
        guard let record = group.first, group.count == 1 else { continue }
        var id = pending.id
        var series = pending.replacing
        if case .occurrence(let occurrence, let seriesID, _, _) = record {
          id = occurrence
          series = seriesID
        }
        let message = StoredMessage(
          id: id, time: now, author: pending.author, text: pending.text, series: series)
        fanOut(
          message, in: ConversationKey(target: pending.target, author: pending.author),
          except: nil)
      }
    }
  }

  /// Arms the one timer for the earliest pending message, when that changed.
  func rearmTimer() {
    let next = scheduler.earliestDue()
    guard next != armedDue else { return }
    armedDue = next
    output?.armTimer(at: next)
  }
}

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
    send(.accepted(.sayAt, id: pending.id, time: due), to: connection)
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
    for pending in scheduler.messages(by: user) {
      let conversation = ConversationKey(target: pending.target, author: user)
      if let filter, ConversationKey(target: filter, author: user) != conversation { continue }
      send(scheduledLine(pending, seenBy: user), to: connection)
      count += 1
    }
    send(.ok(.scheduled, fields: [String(count)]), to: connection)
  }

  /// `SCHEDULED <id> NEXT <n>`: a `SCHED` line for each of the next `count`
  /// due instants of one of the caller's pending messages or series, as the
  /// rule gives them from its current due instant (chatbroker(7), SCHEDULED).
  func listUpcoming(_ id: MessageID, count: Int, connection: ConnectionID, user: String) {
    guard let pending = scheduler[id], pending.author == user else {
      answerGone(id, verb: .scheduled, code: .noSuchMessage, connection: connection, user: user)
      return
    }
    // A series' single messages that replace one of its occurrences
    // (`REPLACE`) come in their places, by due instant.
    var lines = [pending]
    if let series = scheduler.series(id) {
      let coming: [Timestamp]
      do throws(RecurrenceBudget.Exceeded) {
        coming = try upcoming(of: pending, series, count: count)
      } catch {
        send(overBudget(series.rule, .scheduled).event, to: connection)
        return
      }
      lines = coming.map {
        var shown = pending
        shown.due = $0
        return shown
      }
      let replacements = scheduler.messages(by: user).filter { $0.replacing == id }
      lines = Array(
        (lines + replacements).sorted { ($0.due, $0.id) < ($1.due, $1.id) }.prefix(count))
    }
    for shown in lines {
      send(scheduledLine(shown, seenBy: user), to: connection)
    }
    send(.ok(.scheduled, fields: [String(lines.count)]), to: connection)
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
    send(.ok(.cancel, fields: [id.description]), to: connection)
    rearmTimer()
  }

  /// The wall clock reached the armed instant (or the shell was told to look):
  /// delivers everything due, in due order, through the same path as `SAY`.
  public func timerFired() {
    inStep(.other) {
      armedDue = nil
      expansion = RecurrenceBudget()
      defer { settleLostAccess() }
      guard deliverDue() else { return }
      rearmTimer()
    }
  }

  /// Delivers every message and series occurrence due at the clock's now.
  /// Requests that change a pending message call it first, so that whether
  /// the change or the delivery wins depends on the clock alone, never on
  /// whether the timer has run yet. False when the journal could not be
  /// written: nothing was delivered and a retry is armed.
  ///
  /// A series' next occurrence is found within the step's budget
  /// (``expansion``): once it runs out, what is still due waits for the
  /// next turn of the loop, the timer armed for it at once, so that one
  /// step stays within the bound however many series fall due together. A
  /// series whose next occurrence a whole budget cannot pay for goes out
  /// and is then paused (chatbroker(8), "slow step").
  ///
  /// `first`, when due, goes first (a request that changes it).
  func deliverDue(first: MessageID? = nil) -> Bool {
    // A step of its own: the deliveries' lines show its records, and a
    // request that delivered first did not write them itself.
    inStep(.other) { deliverEveryDue(first: first) }
  }

  private func deliverEveryDue(first: MessageID?) -> Bool {
    let now = clock.now
    if let first, let pending = scheduler[first], pending.due <= now,
      scheduler.series(first)?.paused != true
    {
      switch deliver([pending], at: now) {
      case .failed: return false
      case .delivered, .outOfBudget: break
      }
    }
    while true {
      let due = scheduler.popDue(now: now, atMost: 4096)
      if due.isEmpty { return true }
      switch deliver(due, at: now) {
      case .failed: return false
      // The rest in the next turn of the loop (``rearmTimer()`` arms the
      // timer for what is due already).
      case .outOfBudget: return true
      case .delivered: continue
      }
    }
  }

  private enum Delivered {
    case delivered, outOfBudget, failed
  }

  /// Delivers `due` (taken off the schedule, in due order), all or, when
  /// the budget runs out, the first of them; the rest are put back.
  private func deliver(_ due: [PendingMessage], at now: Timestamp) -> Delivered {
    var due = due
    var records: [[JournalRecord]] = []
    var paused: [PendingMessage] = []
    var outOfBudget = false
    for (index, pending) in due.enumerated() {
      // A delivery is work of the step too: many due at once wait for
      // the next turn like series do; the first always goes out.
      let cost = deliveryCost(pending)
      guard expansion.spent == 0 || cost <= expansion.remaining,
        let group = deliveryRecords(pending, at: now, paused: &paused)
      else {
        scheduler.restore(Array(due[index...]))
        due.removeSubrange(index...)
        outOfBudget = true
        break
      }
      records.append(group)
      try? expansion.charge(min(cost, expansion.remaining))
    }
    do {
      try append(records.flatMap { $0 })
    } catch {
      // Nothing was delivered; try again shortly rather than lose a message.
      scheduler.restore(due)
      log.error(
        "journal write failed", ["reason": error.reason, "undelivered": "\(due.count)"])
      armedDue = now + 1000
      armTimer(at: armedDue)
      return .failed
    }
    for (pending, group) in zip(due, records) {
      for record in group { apply(record) }
      guard let record = group.first else { continue }
      var id = pending.id
      var series = pending.replacing
      switch record {
      case .occurrence(let occurrence, let seriesID, _, _):
        id = occurrence
        series = seriesID
      case .delivery: break
      default: continue  // into the outbox (see ``sharedDelivery(_:at:next:)``)
      }
      let message = StoredMessage(
        id: id, time: now, author: pending.author, text: pending.text, series: series)
      fanOut(
        message, in: ConversationKey(target: pending.target, author: pending.author),
        except: nil)
    }
    for pending in paused { announcePause(pending) }
    return outOfBudget ? .outOfBudget : .delivered
  }

  /// What delivering `pending` costs the step, in the steps of its budget
  /// (``RecurrenceBudget``, about 4 µs each): its record, its history
  /// and one line, and a copy of that line for every 32 connections that
  /// get it (measured with chatbench fanout: about 10 µs and 0.1 µs each).
  private func deliveryCost(_ pending: PendingMessage) -> Int {
    let recipients: Int
    switch pending.target {
    case .room(let name): recipients = rooms[name]?.connections.count ?? 0
    case .user(let user):
      recipients =
        (connectionsByUser[user]?.count ?? 0) + (connectionsByUser[pending.author]?.count ?? 0)
    }
    return 3 + recipients / 32
  }

  /// The records that deliver `pending` now; nil when the step's budget
  /// cannot pay for its series' next occurrence (it stays due).
  private func deliveryRecords(
    _ pending: PendingMessage, at now: Timestamp, paused: inout [PendingMessage]
  ) -> [JournalRecord]? {
    var next: SeriesNext?
    if let series = scheduler.series(pending.id) {
      let fresh = expansion.spent == 0
      do throws(RecurrenceBudget.Exceeded) {
        next = .due(try series.next(afterDelivery: now, due: pending.due, budget: expansion))
      } catch {
        guard fresh else { return nil }
        next = .paused
        paused.append(pending)
      }
    }
    // A line due in a shared room goes the way of a SAY there: into the
    // outbox, to be shown when the stream brings it back.
    if let outbox = sharedDelivery(pending, at: now, next: next) { return outbox }
    guard let series = scheduler.series(pending.id), let next else {
      return [.delivery(pending.id, at: now)]
    }
    guard let id = takeFreshID() else {
      // No id left for another occurrence: this one goes out under the
      // series' own id, as its last.
      log.warning("limit reached", ["limit": "message ids", "series": "\(pending.id)"])
      return [.delivery(pending.id, at: now)]
    }
    switch next {
    case .due(let due):
      return [.occurrence(id, series: pending.id, at: now, next: due)]
    case .paused:
      // Delivered, then paused where it was, as RESCHEDULE <id> pause
      // leaves a series: its author can give it a rule that costs less.
      return [
        .occurrence(id, series: pending.id, at: now, next: pending.due),
        .series(pending, series.pausedAfterDelivery(due: pending.due)),
      ]
    }
  }

  /// A series the budget could not pay for was paused: said in the log,
  /// and to its author's sessions as its new state (a `SCHED` line ending
  /// in `,paused`).
  private func announcePause(_ pending: PendingMessage) {
    guard let current = scheduler[pending.id], let series = scheduler.series(pending.id) else {
      return
    }
    log.warning(
      "series paused",
      [
        "series": "\(pending.id)", "user": pending.author, "reason": "over budget",
        "steps": "\(expansion.limit)", "rule": series.rule.description,
      ])
    let line = Outgoing(scheduledLine(current, seenBy: pending.author))
    for connection in (connectionsByUser[pending.author] ?? []).sorted() {
      send(line, to: connection)
    }
  }

  /// Arms the one timer for the earliest pending message, when that changed.
  func rearmTimer() {
    let next = scheduler.earliestDue()
    guard next != armedDue else { return }
    armedDue = next
    armTimer(at: next)
  }
}

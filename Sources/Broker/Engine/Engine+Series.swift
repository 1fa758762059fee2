import LineProtocol

/// Series (`SAYEVERY`) and changes to pending messages (`RESCHEDULE`,
/// `EDIT`), chatbroker(7) "Series" and "Changing a pending message".
extension Engine {
  func sayEvery(
    _ target: Target, rule word: String, text: String, connection: ConnectionID, user: String
  ) {
    let now = clock.now
    let rule: Recurrence
    let due: Timestamp
    do throws(RequestError) {
      rule = try Recurrence.parse(
        word, defaultZone: clock.timeZone, defaultZoneName: clock.timeZoneName, now: now,
        verb: .sayEvery, budget: expansion)
      due = try firstOccurrence(of: rule, word: word, now: now, verb: .sayEvery)
    } catch {
      send(error.event, to: connection)
      return
    }
    guard
      let (id, newRoom) = admitScheduled(
        target, verb: .sayEvery, connection: connection, user: user)
    else { return }
    let pending = PendingMessage(
      id: id, target: target, author: user, created: now, due: due, text: text)
    guard
      storeScheduled(
        .series(pending, Series(rule: rule)), creating: newRoom, verb: .sayEvery,
        connection: connection)
    else { return }
    send(
      .ok(.sayEvery, fields: [pending.id.description, due.description, rule.description]),
      to: connection)
    rearmTimer()
  }

  func reschedule(_ id: MessageID, when: String, connection: ConnectionID, user: String) {
    guard let pending = changeable(id, verb: .reschedule, connection: connection, user: user)
    else { return }
    if ["pause", "resume"].contains(when.lowercased()) {
      return pause(
        pending, resume: when.lowercased() == "resume", connection: connection, user: user)
    }
    let now = clock.now
    let isSeries = scheduler.series(id) != nil
    let due: Timestamp
    var newRule: Recurrence?
    do throws(RequestError) {
      if Recurrence.isRule(when) {
        guard isSeries else {
          throw RequestError(
            verb: Verb.reschedule.rawValue, code: .badTime,
            text:
              "\(id) is a single message, not a series: give a <when> such as 18:00 or +10m, "
              + "or CANCEL it and start a series with SAYEVERY")
        }
        let rule = try Recurrence.parse(
          when, defaultZone: clock.timeZone, defaultZoneName: clock.timeZoneName, now: now,
          verb: .reschedule, budget: expansion)
        due = try firstOccurrence(of: rule, word: when, now: now, verb: .reschedule)
        newRule = rule
      } else if when.lowercased() == "skip" {
        // Skip the next occurrence (chatbroker(7), RESCHEDULE): due at the
        // one after it, which does not count toward a count: end.
        guard let series = scheduler.series(id) else {
          throw RequestError(
            verb: Verb.reschedule.rawValue, code: .badTime,
            text: "\(id) is a single message, not a series: CANCEL it instead of skipping it")
        }
        guard
          let after = try expanding(
            series.rule, .reschedule,
            { budget throws(RecurrenceBudget.Exceeded) in
              try series.occurrence(after: pending.due, reference: pending.due, budget: budget)
            })
        else {
          throw RequestError(
            verb: Verb.reschedule.rawValue, code: .past,
            text: "series \(id) has no occurrence after its next one; CANCEL it instead")
        }
        due = after
      } else if when.lowercased() == "now" {
        // Send now (chatbroker(7), "Changing a pending message"): due at
        // once, delivered by the timer this arms, as any line falling due.
        due = now
      } else {
        due = try resolve(when, verb: .reschedule)
      }
      // Moved earlier, a series' next occurrence is left out at its own
      // time (see applySeriesOrChange), which a full list cannot take.
      if newRule == nil, let series = scheduler.series(id), !series.paused, due < pending.due,
        series.skipped.count >= Series.maximumSkipped
      {
        logLimit("skipped occurrences", user: user)
        throw RequestError(
          verb: Verb.reschedule.rawValue, code: .limit,
          text:
            "series \(id) already leaves out \(series.skipped.count) coming occurrences, the "
            + "most allowed, and moving its next one earlier leaves out one more; wait until "
            + "some have passed")
      }
    } catch {
      send(error.event, to: connection)
      return
    }
    let record = JournalRecord.reschedule(pending.id, due: due, rule: newRule, at: now)
    guard journal([record], verb: .reschedule, connection: connection) else { return }
    apply(record)
    announceChange([id], answering: .reschedule, id: id, connection: connection, user: user)
    rearmTimer()
  }

  /// A `<when>` (chatbroker(7), "Scheduled messages") on the broker's
  /// clock and zone, within the horizon.
  func resolve(_ when: String, verb: Verb) throws(RequestError) -> Timestamp {
    try WhenParser.resolve(
      when, now: clock.now, timeZone: clock.timeZone,
      horizonMilliseconds: limits.horizonMilliseconds, verb: verb)
  }

  /// `RESCHEDULE <id> pause` and `resume` (chatbroker(7), RESCHEDULE): the
  /// series record again, with its new state, so that a restart, a
  /// compaction and a rollback all see it like any other start of a series.
  /// Resumed, it is due at its next occurrence after now.
  private func pause(
    _ pending: PendingMessage, resume: Bool, connection: ConnectionID, user: String
  ) {
    guard var series = scheduler.series(pending.id) else {
      fail(
        .reschedule, .badTime,
        "\(pending.id) is a single message, not a series: RESCHEDULE or CANCEL it instead",
        to: connection)
      return
    }
    var changed = pending
    let now = clock.now
    if resume {
      guard series.paused else {
        fail(.reschedule, .badTime, "series \(pending.id) is not paused", to: connection)
        return
      }
      let due: Timestamp?
      do throws(RecurrenceBudget.Exceeded) {
        due = try series.occurrence(after: now, reference: pending.due, budget: expansion)
      } catch {
        send(overBudget(series.rule, .reschedule).event, to: connection)
        return
      }
      guard let due else {
        fail(
          .reschedule, .past, "series \(pending.id) has no occurrence after now; CANCEL it",
          to: connection)
        return
      }
      changed.due = due
    }
    series.paused = !resume
    let record = JournalRecord.series(changed, series)
    guard journal([record], verb: .reschedule, connection: connection) else { return }
    apply(record)
    announceChange(
      [pending.id], answering: .reschedule, id: pending.id, connection: connection, user: user)
    rearmTimer()
  }

  func edit(_ id: MessageID, text: String, connection: ConnectionID, user: String) {
    guard changeable(id, verb: .edit, connection: connection, user: user) != nil else { return }
    let record = JournalRecord.edit(id, text: text, at: clock.now)
    guard journal([record], verb: .edit, connection: connection) else { return }
    apply(record)
    announceChange([id], answering: .edit, id: id, connection: connection, user: user)
    rearmTimer()
  }

  /// The caller's pending message `id`, after first delivering whatever is
  /// due: a change at or after the due instant finds it delivered and is
  /// refused, one a millisecond earlier wins, whether or not the timer has
  /// run. Otherwise answers the error and returns nil.
  func changeable(_ id: MessageID, verb: Verb, connection: ConnectionID, user: String)
    -> PendingMessage?
  {
    // The message itself first: what else is due may wait for the next
    // turn when the step's budget runs out (see deliverDue).
    guard deliverDue(first: id) else {
      fail(
        verb, .storage,
        "the journal could not be written; nothing was changed, try again later", to: connection)
      return nil
    }
    guard let pending = scheduler[id], pending.author == user else {
      answerGone(id, verb: verb, code: .delivered, connection: connection, user: user)
      rearmTimer()
      return nil
    }
    return pending
  }

  /// Why `id` is not one of the caller's pending messages: delivered (with
  /// `code`), or, for anything else, including another user's message,
  /// `NOSUCHMSG` worded exactly as if it never existed.
  func answerGone(
    _ id: MessageID, verb: Verb, code: ErrorCode, connection: ConnectionID, user: String
  ) {
    if let ended = scheduler.ended[id], ended.author == user {
      fail(
        verb, code,
        "series \(id) has ended: its last message, \(ended.lastMessage), was delivered at "
          + "\(ended.at); it can no longer be changed",
        to: connection)
      return
    }
    for (conversation, history) in histories {
      guard let sequence = history.sequence(of: id) else { continue }
      let message = history[sequence]
      guard message.author == user else { break }
      fail(
        verb, code,
        "message \(id) was already delivered at \(message.time) to "
          + "\(conversation.target(seenBy: user)), where it is \(id) in the history; "
          + "it can no longer be changed",
        to: connection)
      return
    }
    fail(verb, .noSuchMessage, "you have no pending message or series \(id)", to: connection)
  }

  /// The new state: a `SCHED` line for each of `ids` and then
  /// `OK <verb> <id> <due>` to the caller, and the same `SCHED` lines to
  /// the author's other sessions.
  func announceChange(
    _ ids: [MessageID], answering verb: Verb, id: MessageID, connection: ConnectionID,
    user: String
  ) {
    let lines = ids.compactMap { scheduler[$0] }.map { Outgoing(scheduledLine($0, seenBy: user)) }
    for line in lines { send(line, to: connection) }
    if let answered = scheduler[id] {
      send(.accepted(verb, id: id, time: answered.due), to: connection)
    }
    for other in (connectionsByUser[user] ?? []).sorted() where other != connection {
      for line in lines { send(line, to: other) }
    }
  }

  /// `SCHED <id> <target> <due> <created> [<rule>] :<text>`; a paused
  /// series' rule ends in `,paused`.
  func scheduledLine(_ pending: PendingMessage, seenBy user: String) -> BrokerEvent {
    let shown = ConversationKey(target: pending.target, author: user).target(seenBy: user)
    let series = scheduler.series(pending.id)
    return .scheduled(
      id: pending.id, target: shown, due: pending.due, created: pending.created,
      rule: series.map { $0.rule.description + ($0.paused ? ",paused" : "") }, text: pending.text)
  }

  /// `LIMIT`: the rule costs more than a request may spend expanding it
  /// (chatbroker(7), "Series"), `word` as the request gave it.
  func overBudget(_ rule: Recurrence, _ verb: Verb, word: String? = nil) -> RequestError {
    Recurrence.overBudget(verb, rule: word ?? rule.description, budget: expansion)
  }

  /// Runs `body` with the step's budget; `LIMIT` for `rule` when it runs out.
  func expanding<Value>(
    _ rule: Recurrence, _ verb: Verb,
    _ body: (RecurrenceBudget) throws(RecurrenceBudget.Exceeded) -> Value
  ) throws(RequestError) -> Value {
    do throws(RecurrenceBudget.Exceeded) {
      return try body(expansion)
    } catch {
      throw overBudget(rule, verb)
    }
  }

  /// The first occurrence of a new rule; `PAST` when its `until:` leaves
  /// none, `TOOFAR` beyond the horizon (which only the first must meet),
  /// `LIMIT` when finding it costs more than the budget.
  private func firstOccurrence(of rule: Recurrence, word: String, now: Timestamp, verb: Verb)
    throws(RequestError) -> Timestamp
  {
    // An interval longer than the horizon has no first occurrence within
    // it, even when one past year 9999 is all there is.
    if case .interval(let step) = rule.pattern, step > limits.horizonMilliseconds {
      throw RequestError(
        verb: verb.rawValue, code: .tooFar,
        text:
          "the interval of \(rule) is more than "
          + "\(limits.horizonMilliseconds / 86_400_000) days: its first occurrence is too far ahead"
      )
    }
    let first: Timestamp?
    do throws(RecurrenceBudget.Exceeded) {
      first = try rule.first(after: now, budget: expansion)
    } catch {
      throw overBudget(rule, verb, word: word)
    }
    guard let due = first else {
      throw RequestError(
        verb: verb.rawValue, code: .past,
        text: "\(rule) has no occurrence after now (\(now)); pick a later until: date")
    }
    if due.milliseconds - now.milliseconds > limits.horizonMilliseconds {
      throw RequestError(
        verb: verb.rawValue, code: .tooFar,
        text:
          "the first occurrence, \(due), is more than "
          + "\(limits.horizonMilliseconds / 86_400_000) days ahead")
    }
    return due
  }

  /// Replay and live requests alike: the records that start, advance and
  /// change series and pending messages.
  func applySeriesOrChange(_ record: JournalRecord) -> UnsyncedRecords.Undo {
    switch record {
    case .series(let pending, let series):
      noteTaken(pending.id)
      let before = scheduler[pending.id]
      let beforeSeries = scheduler.series(pending.id)
      scheduler.insert(pending, series: series)
      return .pendingChange(
        pending.id, author: pending.author, before: before, beforeSeries: beforeSeries,
        delivered: nil, ended: false)
    case .occurrence(let id, let seriesID, let time, let next):
      noteTaken(id)
      guard let before = scheduler[seriesID], let beforeSeries = scheduler.series(seriesID) else {
        return .nothing
      }
      var pending = before
      var series = beforeSeries
      let message = StoredMessage(
        id: id, time: time, author: pending.author, text: pending.text, series: seriesID)
      let conversation = ConversationKey(target: pending.target, author: pending.author)
      let (evicted, newHistory) = appendHistory(message, to: conversation)
      if let next {
        pending.due = next
        series.done += 1
        series.forgetSkipped(before: next)
        scheduler.insert(pending, series: series)
      } else {
        scheduler.remove(seriesID)
        scheduler.noteEnded(
          seriesID, EndedSeries(author: pending.author, lastMessage: id, at: time))
      }
      return .pendingChange(
        seriesID, author: pending.author, before: before, beforeSeries: beforeSeries,
        delivered: (conversation, evicted, newHistory), ended: next == nil)
    case .reschedule(let id, let due, let rule, _):
      guard let before = scheduler[id] else { return .nothing }
      let beforeSeries = scheduler.series(id)
      var pending = before
      var series = beforeSeries
      if let rule, series != nil { series = Series(rule: rule) }
      // A series' next occurrence moved earlier (a <when>, or now) is the
      // occurrence it was: it does not come again at its own time
      // (chatbroker(7), RESCHEDULE), so it is left out like a SKIP's.
      if rule == nil, let kept = series, !kept.paused, due < before.due,
        kept.skipped.count < Series.maximumSkipped, !kept.skipped.contains(before.due)
      {
        series?.skipped.append(before.due)
        series?.skipped.sort()
      }
      pending.due = due
      series?.forgetSkipped(before: due)
      scheduler.insert(pending, series: series)
      return .pendingChange(
        id, author: pending.author, before: before, beforeSeries: beforeSeries, delivered: nil,
        ended: false)
    case .edit(let id, let text, _):
      guard let before = scheduler[id] else { return .nothing }
      let beforeSeries = scheduler.series(id)
      var pending = before
      pending.text = text
      scheduler.insert(pending, series: beforeSeries)
      return .pendingChange(
        id, author: pending.author, before: before, beforeSeries: beforeSeries, delivered: nil,
        ended: false)
    case .skip(let id, let occurrence, let due, _):
      return applySkip(id, occurrence: occurrence, due: due)
    default:
      return .nothing
    }
  }
}

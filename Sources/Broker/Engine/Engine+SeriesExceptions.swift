import LineProtocol

/// One occurrence of a series changed on its own: `SKIP` leaves it out,
/// as RFC 5545's EXDATE does, and `REPLACE` puts a single message in its
/// place (chatbroker(7), `SKIP` and `REPLACE`).
extension Engine {
  func skip(_ id: MessageID, occurrence word: String, connection: ConnectionID, user: String) {
    guard
      let (pending, occurrence, seriesDue) = exception(
        id, occurrence: word, verb: .skip, connection: connection, user: user)
    else { return }
    let record = JournalRecord.skip(id, occurrence: occurrence, due: seriesDue, at: clock.now)
    guard journal([record], verb: .skip, connection: connection) else { return }
    apply(record)
    announceChange(
      [pending.id], answering: .skip, id: pending.id, connection: connection, user: user)
    rearmTimer()
  }

  func replace(
    _ id: MessageID, occurrence word: String, when: String, text: String,
    connection: ConnectionID, user: String
  ) {
    guard
      let (pending, occurrence, seriesDue) = exception(
        id, occurrence: word, verb: .replace, connection: connection, user: user)
    else { return }
    let now = clock.now
    let due: Timestamp
    do {
      due = try resolve(when, verb: .replace)
    } catch {
      send(error.event, to: connection)
      return
    }
    guard checkPendingLimit(.replace, connection: connection, user: user),
      let newID = takeID(.replace, connection: connection)
    else { return }
    let replacement = PendingMessage(
      id: newID, target: pending.target, author: user, created: now, due: due, text: text,
      replacing: id)
    let records: [JournalRecord] = [
      .skip(id, occurrence: occurrence, due: seriesDue, at: now), .schedule(replacement),
    ]
    guard journal(records, verb: .replace, connection: connection) else { return }
    for record in records { apply(record) }
    announceChange([id, newID], answering: .replace, id: newID, connection: connection, user: user)
    rearmTimer()
  }

  /// What `SKIP` and `REPLACE` check: `id` is one of the caller's series,
  /// `word` names one of its coming occurrences, and there is room for one
  /// more skipped. Then the series' pending message, the occurrence, and
  /// the series' due instant once it is left out; nil once the client was
  /// told why not.
  private func exception(
    _ id: MessageID, occurrence word: String, verb: Verb, connection: ConnectionID, user: String
  ) -> (pending: PendingMessage, occurrence: Timestamp, seriesDue: Timestamp)? {
    guard let pending = changeable(id, verb: verb, connection: connection, user: user) else {
      return nil
    }
    guard let series = scheduler.series(id) else {
      fail(
        verb, .badTime,
        "\(id) is a single message, not a series: RESCHEDULE, EDIT or CANCEL it instead",
        to: connection)
      return nil
    }
    let occurrence: Timestamp
    do throws(RequestError) {
      occurrence = try resolve(word, verb: verb)
      try checkOccurrence(occurrence, word: word, of: pending, series, verb: verb)
    } catch {
      send(error.event, to: connection)
      return nil
    }
    guard series.skipped.count < Series.maximumSkipped else {
      logLimit("skipped occurrences", user: user)
      fail(
        verb, .limit,
        "series \(id) already leaves out \(series.skipped.count) coming occurrences, the most "
          + "allowed; wait until some have passed",
        to: connection)
      return nil
    }
    // The last occurrence of a series that ends by until: (or UNTIL, or
    // an rrule's COUNT) cannot be left out, whether it is the next or a
    // later one: nothing would come after it (chatbroker(7), SKIP).
    let after: Timestamp?
    do throws(RecurrenceBudget.Exceeded) {
      after = try series.occurrence(after: occurrence, reference: pending.due, budget: expansion)
    } catch {
      send(overBudget(series.rule, verb).event, to: connection)
      return nil
    }
    guard let after else {
      fail(
        verb, .past,
        "\(occurrence) is the last occurrence of series \(id); "
          + (verb == .skip ? "CANCEL the series instead" : "RESCHEDULE or EDIT the series instead"),
        to: connection)
      return nil
    }
    return (pending, occurrence, occurrence == pending.due ? after : pending.due)
  }

  /// Whether `occurrence` is one the series will deliver: at or after its
  /// next due instant, given by its rule, not skipped, and within a
  /// `count:` end (walked within the step's budget, ``expansion``).
  /// `BADTIME` names the next ones otherwise.
  private func checkOccurrence(
    _ occurrence: Timestamp, word: String, of pending: PendingMessage, _ series: Series,
    verb: Verb
  ) throws(RequestError) {
    let isOne = try expanding(series.rule, verb) { budget throws(RecurrenceBudget.Exceeded) in
      var isOne = occurrence == pending.due
      if occurrence > pending.due && !series.skipped.contains(occurrence) {
        isOne =
          try series.rule.next(after: occurrence + -1, reference: pending.due, budget: budget)
          == occurrence
      }
      if isOne, let count = series.rule.count, occurrence != pending.due {
        // Walked within the budget, which is what bounds the walk.
        var walked = series
        var due = pending.due
        while due < occurrence, walked.done < count,
          let next = try walked.next(afterDelivery: due, due: due, budget: budget)
        {
          due = next
          walked.done += 1
        }
        isOne = due == occurrence
      }
      return isOne
    }
    guard !isOne else { return }
    // The next ones as far as the budget left goes.
    let coming = ((try? upcoming(of: pending, series, count: 3)) ?? [pending.due])
      .map(\.description)
    throw RequestError(
      verb: verb.rawValue, code: .badTime,
      text:
        "\(quoted(word)) is \(occurrence), not a coming occurrence of series \(pending.id); "
        + "its next are \(coming.joined(separator: ", ")) (SCHEDULED \(pending.id) NEXT <n> "
        + "lists them)")
  }

  /// The next `count` due instants of a series, from its current one,
  /// found within the step's budget.
  func upcoming(of pending: PendingMessage, _ series: Series, count: Int)
    throws(RecurrenceBudget.Exceeded) -> [Timestamp]
  {
    var due = pending.due
    var walked = series
    var found = [due]
    while found.count < count,
      let next = try walked.next(afterDelivery: due, due: due, budget: expansion)
    {
      found.append(next)
      due = next
      walked.done += 1
    }
    return found
  }

  private func quoted(_ word: String) -> String { "\"\(word)\"" }

  /// The `skip` record's change: the occurrence joins the skipped ones,
  /// and the series is due at the record's `due`.
  func applySkip(_ id: MessageID, occurrence: Timestamp, due: Timestamp)
    -> UnsyncedRecords.Undo
  {
    guard let before = scheduler[id], let beforeSeries = scheduler.series(id) else {
      return .nothing
    }
    var pending = before
    var series = beforeSeries
    if !series.skipped.contains(occurrence) {
      series.skipped.append(occurrence)
      series.skipped.sort()
    }
    pending.due = due
    series.forgetSkipped(before: due)
    scheduler.insert(pending, series: series)
    return .pendingChange(
      id, author: pending.author, before: before, beforeSeries: beforeSeries, delivered: nil,
      ended: false)
  }
}

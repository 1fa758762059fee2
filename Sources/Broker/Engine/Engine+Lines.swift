import LineProtocol

/// What the engine is doing while it sends lines: all that the rule
/// "durable before visible" needs to know about a line (chatbroker(7),
/// "Order and durability"). Every entry point of the engine runs as a step
/// (``Engine/inStep(_:_:)``).
struct Step {
  enum Cause {
    /// A connection's request; its replies answer it.
    case request(Request, from: ConnectionID)
    /// Something that reads no state: a greeting, a line no codec could
    /// read as a request.
    case stateless
    /// Anything else: the schedule's timer, a connection closing, a line
    /// from another host, a rollback.
    case other
  }

  var cause = Cause.other
  /// Journal records the engine had written when the step began: a line
  /// sent after the step wrote more shows them.
  var recordsBefore = 0
}

extension Engine {
  /// Runs `body` as a step of its own, so that its lines are labelled by
  /// what it wrote. A nested step (the deliveries due that a request makes
  /// first, the disconnect of a `QUIT`) restores the outer one after, and
  /// what the nested one wrote does not count as written by the outer one.
  func inStep<Result>(_ cause: Step.Cause, _ body: () -> Result) -> Result {
    let outer = step
    step = Step(cause: cause, recordsBefore: recordsWritten)
    defer {
      let written = recordsWritten - step.recordsBefore
      step = outer
      step.recordsBefore += written
    }
    return body()
  }

  /// What a line to `connection` waits for, and what becomes of it when a
  /// sync fails: the one place that decides it, from the step that sends
  /// it, never from its sender's say-so.
  ///
  /// - The greeting and `BYE`, and every line of a stateless step or verb
  ///   (`PING`, `HELP`, `QUIT`), leave at once.
  /// - Every other line waits until the records written before it are
  ///   durable; what then becomes of it after a failed sync is:
  ///   - a reply to a request that wrote records: its final line becomes
  ///     `STORAGE`, its other lines are dropped;
  ///   - a reply to a request that wrote nothing: its other lines are
  ///     dropped and the request is answered again, unless it changed
  ///     what no rollback undoes (a `PART`, an `AWAY`): then it stays;
  ///   - an event for anyone else: dropped when its step wrote records
  ///     (it shows them), else it stays.
  func label(_ event: BrokerEvent, to connection: ConnectionID) -> LineKind {
    switch event {
    case .hello, .bye: return .stateless
    default: break
    }
    let wroteRecords = recordsWritten > step.recordsBefore
    switch step.cause {
    case .stateless:
      return .stateless
    case .request(let request, let requester) where requester == connection:
      if request.verb.spec.isStateless { return .stateless }
      guard event.isFinalReply else { return .revealing }
      if wroteRecords { return .outcome(request.verb) }
      return event.isError || request.mayBeAnsweredAgain ? .answer(request) : .lasting
    case .request, .other:
      return wroteRecords ? .revealing : .lasting
    }
  }
}

extension BrokerEvent {
  /// The one final line of a reply: `OK`, `ERR`, or the `OK` of an
  /// accepted message.
  var isFinalReply: Bool {
    switch self {
    case .ok, .accepted, .error: true
    default: false
    }
  }

  var isError: Bool {
    if case .error = self { true } else { false }
  }
}

extension Request {
  /// Whether answering it again, once what it saw was rolled back, is the
  /// same as answering it for the first time: true unless it changed a
  /// session's state that no rollback undoes (it left a room, went away,
  /// sent client tags alone), even when it wrote nothing. Queries, and requests
  /// that change only journaled state, are answered again.
  var mayBeAnsweredAgain: Bool {
    switch self {
    case .part, .away, .signal, .quit: false
    // An IRC reaction the broker could not keep went on as a signal.
    case .tagged(.react, _): false
    default: true
    }
  }
}

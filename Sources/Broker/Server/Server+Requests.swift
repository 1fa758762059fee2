import LineProtocol

/// Input as the engine sees it: what a connection's codec read from a
/// frame, carried out in order. The engine's answers to a request come
/// back through ``EngineOutput/send(_:to:kind:)`` while it is handled, and
/// are encoded with the request's reply context (``Connection/answering``).
extension Server {
  /// One framed input line, through the connection's codec.
  func receive(_ frame: Frame, from connection: Connection) {
    connection.codec.receive(frame) { perform($0, for: connection) }
  }

  /// One step of an earlier line; false when none waits.
  func nextStep(of connection: Connection) -> Bool {
    connection.codec.nextStep { perform($0, for: connection) }
  }

  /// What a codec asks for, in order; nothing once the connection closes.
  func perform(_ action: WireAction, for connection: Connection) {
    guard !connection.closing else { return }
    switch action {
    case .reply(let bytes, let stateless):
      // A codec's own reply may read the engine (NAMES, LUSERS): it waits
      // for the records written before it, like any line, unless the
      // codec says it shows no state at all (a PONG).
      enqueue(.bytes(bytes), to: connection, kind: stateless ? .stateless : .lasting)
    case .request(let request, let context):
      logRequest(request.verb.rawValue, from: connection)
      let started = steps.begin()
      answer(for: connection, context) { engine.receive(request, from: connection.id) }
      steps.end(
        started, .request, what: request.verb.rawValue,
        fields: [(key: "conn", value: "\(connection.id)"), (key: "user", value: connection.user)])
      extraTurnCost += engine.takeSearchWork() / Self.searchCandidatesPerRequest
      extraTurnCost += engine.expansionSteps / Self.expansionStepsPerRequest
    case .refused(let error):
      logRequest(error.verb, from: connection, refused: error.code)
      engine.refuse(error, from: connection.id)
    case .close:
      engine.disconnect(connection.id)
      close(connection.id)
    case .admit(let token):
      admit(connection, webToken: token)
    }
  }

  /// Runs `engine`'s handling of one request of `connection` (or its
  /// answer given again after a failed sync) with `context` as what its
  /// replies answer. The codec hears of each reply as it is written
  /// (``write(_:to:mayDefer:limited:)``), held ones included.
  func answer(for connection: Connection, _ context: ReplyContext?, _ engineCall: () -> Void) {
    guard let context else { return engineCall() }
    connection.answering = context
    engineCall()
    connection.answering = nil
  }

  /// `--verbose`: one debug line per request, its verb and who sent it
  /// (never its text), and the error code when it was refused unread
  /// (chatbroker(8), "LOGGING").
  private func logRequest(_ verb: String, from connection: Connection, refused: ErrorCode? = nil) {
    guard log.isLogging(.debug) else { return }
    var fields = [("conn", "\(connection.id)"), ("user", connection.user), ("verb", verb)]
    if let refused { fields.append(("error", refused.rawValue)) }
    log.log(.debug, "request", fields: fields.map { (key: $0.0, value: $0.1) })
  }
}

extension Server {
  /// A new connection's codec, by what its listener's clients speak.
  func codec(for wire: WireFormat, user: String, id: ConnectionID) -> any WireCodec {
    switch wire {
    case .line:
      return LineWire(maximumLineBytes: options.limits.lineBytes)
    case .web:
      return WebWire(maximumLineBytes: options.limits.lineBytes) { [unowned self] reason in
        logConnection(
          .warning, "web request refused", user: user,
          [("conn", "\(id)"), ("user", user), ("reason", reason)])
      }
    case .irc, .ircOverTCP:
      return irc.session(
        user: user,
        reader: EngineReader(
          engine: engine, user: user, connections: { [unowned self] in connections.count },
          charge: { [unowned self] in extraTurnCost += $0 }))
    }
  }
}

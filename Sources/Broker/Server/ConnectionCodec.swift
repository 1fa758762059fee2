import LineProtocol

/// The wire format of a connection: how its input becomes requests for the
/// engine and how the engine's events become its bytes. The engine speaks
/// values only; this is where bytes begin.
extension Connection {
  /// The event in this connection's wire format, encoded once per format
  /// and shared by every connection that speaks it.
  func encode(_ outgoing: Outgoing) -> [UInt8] {
    outgoing.line
  }
}

extension Server {
  /// One framed input line: decoded by the connection's codec and handed
  /// to the engine as a request, or answered with the codec's error.
  func receive(_ frame: Frame, from connection: Connection) {
    switch LineCodec.request(from: frame, maximumLineBytes: options.limits.lineBytes) {
    case .success(let request): engine.receive(request, from: connection.id)
    case .failure(let error): engine.refuse(error, from: connection.id)
    }
  }
}

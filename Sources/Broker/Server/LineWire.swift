import LineProtocol

/// chatbroker(7)'s line protocol as a ``WireCodec``: one line is one
/// request, and every event has one encoding, shared by all of its
/// recipients (``Outgoing/line``). Needs no reply contexts.
final class LineWire: WireCodec {
  let maximumLineBytes: Int

  init(maximumLineBytes: Int) {
    self.maximumLineBytes = maximumLineBytes
  }

  func receive(_ frame: Frame, _ perform: (WireAction) -> Void) {
    switch LineCodec.request(from: frame, maximumLineBytes: maximumLineBytes) {
    case .success(let request): perform(.request(request, answering: nil))
    case .failure(let error): perform(.refused(error))
    }
  }

  func nextStep(_ perform: (WireAction) -> Void) -> Bool { false }

  var hasPendingSteps: Bool { false }

  /// Every event has one line, shared by all its recipients: queued as
  /// those bytes, with nothing to encode later.
  @inline(__always)
  func queued(_ outgoing: Outgoing, answering: ReplyContext?) -> QueuedLine {
    .bytes(outgoing.line)
  }

  @inline(__always)
  func encode(_ outgoing: Outgoing, answering: ReplyContext?, mayDefer: Bool) -> [UInt8] {
    outgoing.line
  }

  func answered(_ context: ReplyContext) {}
}

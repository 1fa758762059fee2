import LineProtocol

/// The seam between bytes and the engine: what one connection's clients
/// speak. A frame goes in and comes out as requests for the engine (or
/// replies that need nothing from it); the engine's events come back as
/// ``Outgoing`` values and leave as this codec's bytes. The server holds
/// one per connection and never asks which wire format it is: the line
/// protocol (``LineWire``) and IRC (``IRCSession``) are its two
/// implementations, and where the peer's identity comes from is the
/// listener's (``WireFormat/credentials``).
protocol WireCodec: AnyObject {
  /// The longest input line the framer keeps; longer ones are refused.
  var maximumLineBytes: Int { get }

  /// One framed input line, and what it asks of the server in order,
  /// handed to `perform` one action at a time. A line that names several
  /// targets leaves the rest to ``nextStep(_:)``.
  func receive(_ frame: Frame, _ perform: (WireAction) -> Void)

  /// The next step of an earlier line (one target of several, one page of
  /// a long answer), served as one more request of the connection's turn;
  /// false when none waits.
  func nextStep(_ perform: (WireAction) -> Void) -> Bool

  /// Whether ``nextStep(_:)`` has work.
  var hasPendingSteps: Bool { get }

  /// What to queue for an event sent to this connection: its bytes at once
  /// when its encoding depends on nothing but the event (the line
  /// protocol's one shared line, ``Outgoing/line``: a held copy of it is
  /// the same bytes whenever it is written), else the event with its
  /// reply context, encoded by ``encode(_:answering:mayDefer:)`` when it
  /// is written, after any sync it waits for.
  func queued(_ outgoing: Outgoing, answering: ReplyContext?) -> QueuedLine

  /// The event as this connection's bytes (possibly none). `answering` is
  /// the request the event replies to, when it does (``WireAction/request(_:answering:)``).
  /// `mayDefer`: the event shows nothing unsynced, so the codec may keep it
  /// for a later step instead of encoding it now (a long IRC CHATHISTORY);
  /// it still leaves in the engine's order.
  func encode(_ outgoing: Outgoing, answering: ReplyContext?, mayDefer: Bool) -> [UInt8]

  /// Replies of `context`'s request were just encoded (when the engine
  /// answered it, or when its held replies were released): the codec may
  /// queue the steps they call for (an IRC LIST's next page).
  func answered(_ context: ReplyContext)
}

/// What a wire codec asks of the server for one input line.
enum WireAction {
  /// Bytes for this connection that need nothing from the engine.
  case reply([UInt8])
  /// A request for the engine. Its replies are encoded with `answering`,
  /// also when they are held for a sync and released (or settled) later.
  case request(Request, answering: ReplyContext?)
  /// A line the codec could not read as a request: the engine answers it
  /// with `ERR`, in order with the rest.
  case refused(RequestError)
  /// Flush what was sent, then close.
  case close
}

/// What a wire format needs to read the engine's replies to one request
/// (which IRC command it came from, the names gathered for a NAMES): made
/// by the codec with the request, kept by the server with every reply to
/// it, held or not, and handed back when the reply is encoded. Each
/// request has its own, like ergo's `ResponseBuffer`, so a reply encoded
/// late (after a sync) still knows what it answers, and a codec's own
/// state never depends on the order in which held replies are released.
protocol ReplyContext: AnyObject {}

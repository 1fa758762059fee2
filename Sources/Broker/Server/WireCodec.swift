import LineProtocol

/// The seam between bytes and the engine: what one connection's clients
/// speak. A frame goes in and comes out as requests for the engine (or
/// replies that need nothing from it); the engine's events come back as
/// ``Outgoing`` values and leave as this codec's bytes. The server holds
/// one per connection and never asks which wire format it is: the line
/// protocol (``LineWire``), IRC (``IRCSession``) and the browser door
/// (``WebWire``) are its implementations, and where the peer's identity
/// comes from is the listener's (``WireFormat/credentials``).
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

  /// Whether its client is a session of the engine, greeted, as soon as
  /// it connects (the line protocol, IRC), or only once it has shown who
  /// it is (``WireAction/admit(webToken:)``: the browser door).
  var greetsAtConnect: Bool { get }

  /// The last bytes of a connection the server closes, queued after all
  /// else (a WebSocket close frame); none on a wire without them.
  func farewell() -> [UInt8]
}

extension WireCodec {
  var greetsAtConnect: Bool { true }
  func farewell() -> [UInt8] { [] }
}

/// A codec whose wire has framing of its own (the browser door: an HTTP
/// request head, then WebSocket frames): the bytes read go to it rather
/// than to the connection's line framer, and it hands what they hold to
/// the server one step at a time (``WireCodec/nextStep(_:)``), each step
/// one request of the connection's turn. Its output is whole frames, each
/// line's bytes one or more of them.
protocol SelfFramingCodec: WireCodec {
  /// Bytes read from the connection, kept until its steps read them.
  func take(_ bytes: UnsafeRawBufferPointer)
}

/// What a wire codec asks of the server for one input line.
enum WireAction {
  /// Bytes for this connection made by the codec itself. They wait for
  /// the records written before them, since a codec may read the engine
  /// to make them (IRC's NAMES, LUSERS), unless `stateless`: they show no
  /// state at all (IRC's PONG, CAP), and leave at once.
  case reply([UInt8], stateless: Bool = false)
  /// A request for the engine. Its replies are encoded with `answering`,
  /// also when they are held for a sync and released (or settled) later.
  case request(Request, answering: ReplyContext?)
  /// A line the codec could not read as a request: the engine answers it
  /// with `ERR`, in order with the rest.
  case refused(RequestError)
  /// Flush what was sent, then close.
  case close
  /// The client showed this token of the browser door (chatbroker(7),
  /// "The web door"): the engine greets it as a session of the
  /// connection's user if the token is theirs, else refuses and closes it.
  case admit(webToken: String)
}

/// What a wire format needs to read the engine's replies to one request
/// (which IRC command it came from, the names gathered for a NAMES): made
/// by the codec with the request, kept by the server with every reply to
/// it, held or not, and handed back when the reply is encoded. Each
/// request has its own, like ergo's `ResponseBuffer`, so a reply encoded
/// late (after a sync) still knows what it answers, and a codec's own
/// state never depends on the order in which held replies are released.
///
/// A class rather than a protocol: an optional reference is one word,
/// where an existential of a protocol carries a second for its witness
/// table, and every line held for a sync may carry one (``HeldLine``).
class ReplyContext {}

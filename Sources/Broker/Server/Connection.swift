import Glibc
import LineProtocol

/// The I/O state of one accepted connection. Confined to the server's queue.
final class Connection {
  let id: ConnectionID
  let fd: Int32
  let user: String
  var framer: LineFramer
  /// What its client speaks: how its input becomes requests and events
  /// become its bytes.
  let codec: any WireCodec
  /// The codec again when its wire frames its own input (the browser
  /// door): the bytes read go to it, not to ``framer``.
  let selfFraming: (any SelfFramingCodec)?
  /// What the replies the engine sends now answer: set by the server while
  /// the engine handles one of this connection's requests
  /// (``Server/answer(for:_:_:)``), nil otherwise.
  var answering: ReplyContext?
  /// Where its readiness comes from; it is registered there while open.
  private unowned let poll: ReadinessPoll
  /// What ``poll`` watches it for.
  private(set) var interest = ReadinessPoll.Interest()

  /// Released bytes, ready to be written.
  var output: OutputBuffer
  /// Lines waiting for the journal, or behind lines that do.
  var held = HeldQueue()
  var heldBytes = 0

  /// Where the connection is in its life. Each of its cases is one of the
  /// combinations that occur, so none that cannot occur can be set.
  enum Phase: Equatable {
    /// Requests are read and served, replies written.
    case open
    /// The engine is done with it: what is queued is flushed, then it closes.
    case closing
    /// Its output went over the limit, while it was open or closing: nothing
    /// more is queued until the server has dropped the rest and queued BYE.
    case overflowed(wasClosing: Bool)
    /// Gone from the server, its descriptor closed: nothing may watch it
    /// again (a flush or a turn still under way may try).
    case finished
  }

  private(set) var phase = Phase.open

  /// Closing or finished (``Phase``): no more requests are served.
  var closing: Bool {
    switch phase {
    case .open, .overflowed(wasClosing: false): false
    case .closing, .overflowed(wasClosing: true), .finished: true
    }
  }

  /// Output went over the limit; nothing more is queued.
  var overflowed: Bool {
    if case .overflowed = phase { true } else { false }
  }

  /// The engine is done with it, or its peer is gone.
  func startClosing() {
    switch phase {
    case .open: phase = .closing
    case .overflowed: phase = .overflowed(wasClosing: true)
    case .closing, .finished: break
    }
  }

  /// Output went over the limit: nothing more is queued for now.
  func startOverflow() {
    guard phase != .finished else { return }
    phase = .overflowed(wasClosing: closing)
  }

  /// The rest of the output is dropped: lines (the BYE) may be queued again.
  func endOverflow() {
    if case .overflowed(let wasClosing) = phase { phase = wasClosing ? .closing : .open }
  }

  // The flags below are orthogonal to the phase: each combination occurs.
  /// Listed among the server's connections to flush after this event.
  var isDirty = false
  /// The framer may still hold complete requests, or the IRC session steps
  /// of a line that named several targets: the last turn ended on its
  /// budget, or bytes arrived since the framer was last emptied.
  var mayHaveRequests = false
  /// Its own replies wait to be sent above the server's threshold: its
  /// requests wait until they drain (back-pressure at request level).
  var outputBlocked = false
  /// The client shut down its sending side; once the framer is empty the
  /// connection is answered and closed.
  var inputEnded = false
  /// Waiting in the server's round-robin queue of connections with work.
  var isQueued = false
  /// Nanoseconds of work this connection may still do in its turns
  /// (``Server/nanosecondsPerTurn``); below zero, it owes the others time.
  var timeCredit: Int64 = 0
  /// Its client has yet to show who it is before it is a session of the
  /// engine (the browser door's token, Server+WebDoor).
  var awaitingAdmission = false
  /// A TCP connection (the loopback doors), closed gracefully: its sending
  /// side shut, then its input read and thrown away until the client's end
  /// (``Server/linger(_:)``). Closing a TCP socket with input unread makes
  /// the kernel reset the connection and throw away what it had not sent
  /// yet: the last lines (`OK QUIT`, `BYE`, a close frame) of a client
  /// that went on sending.
  let closesGracefully: Bool
  /// Lingering so (``closesGracefully``): its input is only drained.
  var lingering = false
  /// Counted among its user's closing connections (``Server/close(_:)``).
  var holdsClosingSlot = false

  /// Registers `fd` with `poll`, watched for nothing yet; fails when the
  /// kernel has no room for another registration.
  init(
    id: ConnectionID, fd: Int32, user: String, codec: any WireCodec, poll: ReadinessPoll,
    closesGracefully: Bool = false
  ) throws(SystemError) {
    try poll.register(fd, token: id.pollToken)
    self.codec = codec
    selfFraming = codec as? any SelfFramingCodec
    output = OutputBuffer(framed: selfFraming != nil)
    self.id = id
    self.fd = fd
    self.user = user
    self.poll = poll
    self.closesGracefully = closesGracefully
    framer = LineFramer(maximumLineBytes: codec.maximumLineBytes)
  }

  var pendingBytes: Int { output.count + heldBytes }

  var isReading: Bool { interest.contains(.readable) }
  var isWaitingForWritable: Bool { interest.contains(.writable) }

  func pauseReading() {
    change(interest.subtracting(.readable))
  }

  func resumeReading() {
    guard !closing else { return }
    change(interest.union(.readable))
  }

  /// Its input is watched again, only to be drained (``lingering``).
  func drainInput() {
    change([.readable])
  }

  func waitForWritable() {
    change(interest.union(.writable))
  }

  func stopWaitingForWritable() {
    change(interest.subtracting(.writable))
  }

  private func change(_ wanted: ReadinessPoll.Interest) {
    guard wanted != interest, phase != .finished else { return }
    interest = wanted
    poll.watch(fd, token: id.pollToken, for: wanted)
  }

  /// Unregisters and closes the descriptor, once.
  /// Gone from the server and its descriptor closed (``Phase/finished``).
  var isFinished: Bool { phase == .finished }

  func closeDescriptor() {
    guard phase != .finished else { return }
    phase = .finished
    output.discardAll()
    poll.unregister(fd)
    Glibc.close(fd)
  }
}

import LineProtocol
import WebPage

/// The browser door as a ``WireCodec`` (chatbroker(7), "The web door"):
/// one HTTP request head, answered with a file of the chat page or, for
/// `GET /ws`, with the switch to a WebSocket (``WebDoorPolicy``); then
/// chatbroker(7)'s line protocol itself, one line per text frame, each
/// read by the line protocol's own codec (``LineCodec``), so that the
/// page is one more client of it and of the engine.
///
/// Its client is no session until its first frame, `TOKEN <token>`, has
/// shown a token of the connection's user (``WireAction/admit(webToken:)``);
/// before that the engine sends it nothing, and it reads nothing else.
final class WebWire: SelfFramingCodec {
  let maximumLineBytes: Int
  /// Tells the server why a request was refused, for its log.
  private let refused: (String) -> Void

  private enum Stage {
    /// Reading the request head.
    case head
    /// A WebSocket: frames.
    case socket
    /// Answered and closing: what comes is ignored.
    case done
  }

  private var stage = Stage.head
  /// Bytes read and not yet taken by the head's parser or by wslay.
  private var input: [UInt8] = []
  private var inputStart = 0
  /// How far the head was searched for its end (``HTTPRequestHead``).
  private var headScanned = 0
  private var channel: WebSocketChannel?
  /// Messages read, not yet served: one per step.
  private var messages = FIFOQueue<WebSocketChannel.Message>()
  /// Whether the first frame (the token) came, and whether `HELLO` was
  /// sent.
  private var tokenShown = false
  private var admitted = false
  /// What the `ERR` before `HELLO` said, if one was sent: a socket refused
  /// is closed with 1008 and this reason (``farewell()``).
  private var refusal: String?
  /// The status and reason of the close frame when the socket ends for
  /// what came on it (the page's close, a binary or broken frame), and
  /// whether the close frame was queued: it is the last frame, once.
  private var closing: (code: UInt16, reason: String)?
  private var closeQueued = false
  /// A frame broke a rule, with wslay's status: the socket closes once the
  /// messages read before it are served.
  private var brokenFrame: UInt16?

  init(maximumLineBytes: Int, refused: @escaping (String) -> Void) {
    self.maximumLineBytes = maximumLineBytes
    self.refused = refused
  }

  var greetsAtConnect: Bool { false }

  func take(_ bytes: UnsafeRawBufferPointer) {
    guard stage != .done else { return }
    if inputStart > 0 && inputStart * 2 >= input.count {
      input.removeFirst(inputStart)
      headScanned = max(0, headScanned - inputStart)
      inputStart = 0
    }
    input.append(contentsOf: bytes)
  }

  var hasPendingSteps: Bool {
    switch stage {
    case .head: input.count - inputStart > headScanned
    case .socket: !messages.isEmpty || inputStart < input.count || brokenFrame != nil
    case .done: false
    }
  }

  /// Bytes reach this codec through ``take(_:)``, never the line framer.
  func receive(_ frame: Frame, _ perform: (WireAction) -> Void) {}

  func nextStep(_ perform: (WireAction) -> Void) -> Bool {
    switch stage {
    case .head: readHead(perform)
    case .socket: readFrames(perform)
    case .done: false
    }
  }

  // MARK: - The request head

  private func readHead(_ perform: (WireAction) -> Void) -> Bool {
    switch HTTPRequestHead.read(input[inputStart...], scannedFrom: headScanned) {
    case .incomplete(let scanned):
      headScanned = scanned
      return false
    case .invalid(let status, let reason):
      refuse(status: status, reason: reason, fields: [], perform)
    case .complete(let head, let length):
      inputStart += length
      headScanned = 0
      switch WebDoorPolicy.judge(head) {
      case .file(let path):
        if let file = WebPage.file(at: path) {
          perform(.reply(HTTPResponse.file(file), stateless: true))
        }
        end(perform)
      case .refuse(let status, let reason, let fields):
        refuse(status: status, reason: reason, fields: fields.map { ($0.name, $0.value) }, perform)
      case .upgrade(let accept):
        perform(.reply(HTTPResponse.switching(accept: accept), stateless: true))
        stage = .socket
        channel = WebSocketChannel(maximumMessageBytes: maximumLineBytes)
      }
    }
    return true
  }

  /// An HTTP refusal, logged, then the end.
  private func refuse(
    status: Int, reason: String, fields: [(String, String)], _ perform: (WireAction) -> Void
  ) {
    refused("\(status) \(reason)")
    perform(
      .reply(HTTPResponse.refusal(status: status, reason: reason, fields: fields), stateless: true))
    end(perform)
  }

  private func end(_ perform: (WireAction) -> Void) {
    stage = .done
    input = []
    inputStart = 0
    perform(.close)
  }

  // MARK: - Frames

  /// One step: the next message read, after reading more when none is
  /// left; after the last message read before a frame that broke a rule,
  /// the close.
  private func readFrames(_ perform: (WireAction) -> Void) -> Bool {
    guard let channel else { return false }
    if messages.isEmpty && brokenFrame == nil {
      guard inputStart < input.count else { return false }
      let taken = input[inputStart...].withUnsafeBytes { channel.receive($0) }
      inputStart += taken
      for message in channel.takeMessages() { messages.append(message) }
      brokenFrame = channel.failure
    }
    if let message = messages.popFirst() {
      serve(message, perform)
    } else if let code = brokenFrame {
      // The socket closes with wslay's status (1002, 1007, 1009).
      refused("a frame that breaks RFC 6455 (close \(code))")
      closing = (code, "")
      finish(perform)
    }
    return true
  }

  private func serve(_ message: WebSocketChannel.Message, _ perform: (WireAction) -> Void) {
    guard let channel else { return }
    switch message {
    case .text(let bytes) where !tokenShown:
      tokenShown = true
      guard let token = Self.token(in: bytes) else {
        refuseFirst("the first frame is not TOKEN <token>", perform)
        return
      }
      perform(.admit(webToken: token))
    case .text(let bytes):
      // Empty lines get no reply, as on the Unix socket (chatbroker(7)).
      guard !bytes.isEmpty else { return }
      serveLine(.line(String(decoding: bytes, as: UTF8.self)), perform)
    case .tooLong:
      if !tokenShown {
        tokenShown = true
        refuseFirst("the first frame is longer than \(maximumLineBytes) bytes", perform)
        return
      }
      serveLine(.tooLong, perform)
    case .binary:
      refused("a binary frame")
      closing = (1003, "binary frames are not read; send lines as text frames")
      finish(perform)
    case .ping(let payload):
      perform(.reply(channel.pong(payload), stateless: true))
    case .close(let code):
      // Its status echoed, after the replies to what came before it.
      closing = (code == 0 ? 1000 : code, "")
      finish(perform)
    }
  }

  /// A first frame that is no token: logged (`why`), told, closed.
  private func refuseFirst(_ why: String, _ perform: (WireAction) -> Void) {
    guard let channel else { return }
    refused(why)
    let text = "the first frame must be TOKEN <token>, from the link chatsh web prints"
    refusal = text
    let line = BrokerLine.error(verb: "-", code: .noAccess, text: text)
    perform(.reply(channel.text(line.dropLast()), stateless: true))
    finish(perform)
  }

  /// A line of the line protocol, read by its codec; `WEB` is the Unix
  /// socket's only (chatbroker(7), `WEB`).
  private func serveLine(_ frame: Frame, _ perform: (WireAction) -> Void) {
    switch LineCodec.request(from: frame, maximumLineBytes: maximumLineBytes) {
    case .success(let request) where request.verb == .web:
      perform(
        .refused(
          RequestError(
            verb: Verb.web.rawValue, code: .noAccess,
            text: "WEB is served on the Unix socket only: run chatsh web in a shell on the host")))
    case .success(let request): perform(.request(request, answering: nil))
    case .failure(let error): perform(.refused(error))
    }
  }

  /// Reads nothing more, and closes once what was sent is out.
  private func finish(_ perform: (WireAction) -> Void) {
    stage = .done
    messages = FIFOQueue()
    input = []
    inputStart = 0
    perform(.close)
  }

  /// The token of a first frame `TOKEN <token>` (the word in any letter
  /// case), or nil.
  static func token(in bytes: [UInt8]) -> String? {
    let prefix = Array("TOKEN ".utf8)
    guard bytes.count > prefix.count,
      zip(bytes, prefix).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
    else { return nil }
    return String(decoding: bytes[prefix.count...], as: UTF8.self)
  }

  // MARK: - Output

  /// Every line becomes its text frame as it is queued, held or not: a
  /// frame is bytes of its own (``WebSocketChannel``), the same whenever
  /// it is written, and the connection's output keeps the order.
  func queued(_ outgoing: Outgoing, answering: ReplyContext?) -> QueuedLine {
    .bytes(encode(outgoing, answering: answering, mayDefer: false))
  }

  func encode(_ outgoing: Outgoing, answering: ReplyContext?, mayDefer: Bool) -> [UInt8] {
    switch outgoing.event {
    case .hello: admitted = true
    case .error(_, _, let text) where !admitted && refusal == nil: refusal = text
    default: break
    }
    // An event the line protocol has no line for (an IRC client's TAGMSG,
    // an away change) has no frame either.
    let line = outgoing.line
    guard let channel, !line.isEmpty else { return [] }
    return channel.text(line.last == 10 ? line.dropLast() : line[...])
  }

  func answered(_ context: ReplyContext) {}

  /// A socket the server closes gets a close frame, its last: the page's
  /// own status echoed, or 1003 for a binary frame, or wslay's for a
  /// broken one; else 1000 once it was greeted; 1008 with why when it was
  /// refused (its token, or the sessions limit: the page shows it and
  /// does not try again); else 1001 (no token in time, or the broker
  /// stopping: the page may try again).
  func farewell() -> [UInt8] {
    guard let channel, !closeQueued else { return [] }
    closeQueued = true
    if let closing { return channel.close(code: closing.code, reason: closing.reason) }
    if admitted { return channel.close(code: 1000, reason: "") }
    if let refusal { return channel.close(code: 1008, reason: refusal) }
    return channel.close(code: 1001, reason: "closed before a token was shown")
  }
}

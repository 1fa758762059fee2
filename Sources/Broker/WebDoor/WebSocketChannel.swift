import CWslay

/// One WebSocket after its handshake (RFC 6455), server side, framed by
/// libwslay: its event API reads (masking, opcodes, fragments, control
/// frames, UTF-8 of text, closing on a broken rule), its frame API writes.
///
/// Reading buffers nothing but one message being read, at most
/// `maximumMessageBytes` of it: wslay hands the payload over in chunks
/// (its "no buffering" mode) and a longer message is discarded as it
/// arrives and read as ``Message/tooLong``, as the line protocol's framer
/// does with a line over the limit. Pings and the peer's close are
/// messages too, answered by the codec in their turn.
///
/// Writing keeps no state from one frame to the next (the frame API's
/// context only follows a frame partly written, and its writer takes all
/// at once): each frame is bytes of its own, and their order is the
/// order of the connection's output, which the server keeps. The event
/// API's own answers (the pongs and the close frame it queues) are thrown
/// away: its idea of "a close frame was sent", taken when it frames one,
/// is not the output's, where lines held for a sync come before the
/// connection's close frame though they were framed after it.
final class WebSocketChannel {
  enum Message: Equatable {
    /// A whole text message, within the limit.
    case text([UInt8])
    /// A text message over the limit, discarded.
    case tooLong
    /// A whole binary message, discarded: the door reads text only.
    case binary
    /// A ping, with its payload for the pong.
    case ping([UInt8])
    /// The peer's close frame and its status (0 when it had none).
    case close(code: UInt16)
  }

  /// Bytes wslay takes from the input per ``receive(_:)``: one of its
  /// reads (its buffer holds 4 KiB), so that a connection's turn serves
  /// a bounded share of a flood of small frames.
  static let bytesPerReceive = 4096

  private var reader: wslay_event_context_ptr?
  private var writer: wslay_frame_context_ptr?
  private let maximumMessageBytes: Int
  private var messages: [Message] = []
  /// The input of the current ``receive(_:)``, and how much wslay took.
  private var feed: UnsafeRawBufferPointer?
  private var fed = 0
  /// The message being read.
  private var message: [UInt8] = []
  private var messageTooLong = false
  private var frameIsData = false
  /// The frame being written.
  private var written: [UInt8] = []

  init(maximumMessageBytes: Int) {
    self.maximumMessageBytes = maximumMessageBytes
    let user = Unmanaged.passUnretained(self).toOpaque()
    var reading = wslay_event_callbacks()
    reading.recv_callback = { context, buffer, length, _, user in
      WebSocketChannel.from(user).read(into: buffer, length, context)
    }
    // The event API's answers are not the output (see the type).
    reading.send_callback = { _, _, length, _, _ in length }
    reading.on_frame_recv_start_callback = { _, argument, user in
      guard let argument else { return }
      WebSocketChannel.from(user).frameStarted(opcode: argument.pointee.opcode)
    }
    reading.on_frame_recv_chunk_callback = { _, argument, user in
      guard let argument, let data = argument.pointee.data else { return }
      WebSocketChannel.from(user).chunk(
        UnsafeBufferPointer(start: data, count: argument.pointee.data_length))
    }
    reading.on_msg_recv_callback = { _, argument, user in
      guard let argument else { return }
      let payload =
        argument.pointee.msg.map {
          Array(UnsafeBufferPointer(start: $0, count: argument.pointee.msg_length))
        } ?? []
      WebSocketChannel.from(user).messageEnded(
        opcode: argument.pointee.opcode, status: argument.pointee.status_code, payload: payload)
    }
    var writing = wslay_frame_callbacks()
    writing.send_callback = { data, length, _, user in
      guard let data else { return -1 }
      WebSocketChannel.from(user).written.append(
        contentsOf: UnsafeBufferPointer(start: data, count: length))
      return length
    }
    guard wslay_event_context_server_init(&reader, &reading, user) == 0,
      wslay_frame_context_init(&writer, &writing, user) == 0
    else { return }
    wslay_event_config_set_no_buffering(reader, 1)
  }

  deinit {
    if let reader { wslay_event_context_free(reader) }
    if let writer { wslay_frame_context_free(writer) }
  }

  private static func from(_ user: UnsafeMutableRawPointer?) -> WebSocketChannel {
    Unmanaged<WebSocketChannel>.fromOpaque(user!).takeUnretainedValue()
  }

  /// Whether frames are still read: false once the peer's close frame
  /// came, or a frame broke a rule.
  var isReading: Bool {
    guard let reader else { return false }
    return wslay_event_get_read_enabled(reader) != 0
  }

  /// The status to close with after a frame broke a rule (reading stopped
  /// with no close frame from the peer): 1002, 1007 for text that is not
  /// UTF-8, 1009 for a frame of 2 GiB or more; nil while reading.
  var failure: UInt16? {
    guard let reader, !isReading, wslay_event_get_close_received(reader) == 0 else { return nil }
    // The status wslay chose for the close frame it queued (and that
    // ``receive(_:)`` threw away); none (a frame the frame layer itself
    // could not read) is a protocol error.
    let code = wslay_event_get_status_code_sent(reader)
    return code == UInt16(WSLAY_CODE_NO_STATUS_RCVD.rawValue)
      || code == UInt16(WSLAY_CODE_ABNORMAL_CLOSURE.rawValue)
      ? UInt16(WSLAY_CODE_PROTOCOL_ERROR.rawValue) : code
  }

  /// Reads frames from the start of `bytes`, at most
  /// ``bytesPerReceive``; returns how many it took. The messages they
  /// completed wait in ``takeMessages()``. Once it no longer reads, it
  /// takes all of `bytes` and does nothing with them.
  func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
    guard let reader, isReading else { return bytes.count }
    feed = bytes
    fed = 0
    if wslay_event_recv(reader) != 0 {
      // Out of memory, or a frame the frame layer could not read.
      wslay_event_shutdown_read(reader)
    }
    feed = nil
    // The event API's pongs and close frame, thrown away (see the type),
    // so that its queue never grows.
    _ = wslay_event_send(reader)
    return isReading ? fed : bytes.count
  }

  /// The messages read so far, once.
  func takeMessages() -> [Message] {
    defer { messages.removeAll(keepingCapacity: true) }
    return messages
  }

  /// `payload` as one text frame.
  func text(_ payload: ArraySlice<UInt8>) -> [UInt8] {
    frame(opcode: UInt8(WSLAY_TEXT_FRAME.rawValue), payload)
  }

  /// The pong for a ping's `payload`.
  func pong(_ payload: [UInt8]) -> [UInt8] {
    frame(opcode: UInt8(WSLAY_PONG.rawValue), payload[...])
  }

  /// A close frame with `code` and `reason`, cut to the 123 bytes a close
  /// frame holds, at a character's start.
  func close(code: UInt16, reason: String) -> [UInt8] {
    let utf8 = Array(reason.utf8)
    var end = min(123, utf8.count)
    // A character the cut would split goes whole.
    while end < utf8.count && end > 0 && utf8[end] & 0xC0 == 0x80 { end -= 1 }
    let payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + utf8[0..<end]
    return frame(opcode: UInt8(WSLAY_CONNECTION_CLOSE.rawValue), payload[...])
  }

  /// One whole frame, unmasked, as a server sends it.
  private func frame(opcode: UInt8, _ payload: ArraySlice<UInt8>) -> [UInt8] {
    guard let writer else { return [] }
    written.removeAll(keepingCapacity: true)
    let status = payload.withUnsafeBufferPointer { bytes in
      var frame = wslay_frame_iocb(
        fin: 1, rsv: 0, opcode: opcode, payload_length: UInt64(bytes.count), mask: 0,
        data: bytes.baseAddress, data_length: bytes.count)
      return wslay_frame_send(writer, &frame)
    }
    // The writer takes all at once, so a frame is written whole or not
    // at all (a control frame over 125 bytes, which the door never makes).
    return status < 0 ? [] : written
  }

  // MARK: - wslay's reading callbacks

  /// Gives wslay one read of the current input, then "would block".
  private func read(
    into buffer: UnsafeMutablePointer<UInt8>?, _ length: Int, _ context: wslay_event_context_ptr?
  ) -> Int {
    guard let feed, let buffer, fed == 0, feed.count > 0 else {
      wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
      return -1
    }
    let count = min(length, feed.count, Self.bytesPerReceive)
    buffer.update(from: feed.bindMemory(to: UInt8.self).baseAddress!, count: count)
    fed = count
    return count
  }

  private func frameStarted(opcode: UInt8) {
    let isControl = opcode & 0x8 != 0
    frameIsData = !isControl
    if opcode == UInt8(WSLAY_TEXT_FRAME.rawValue) || opcode == UInt8(WSLAY_BINARY_FRAME.rawValue) {
      message.removeAll(keepingCapacity: true)
      messageTooLong = false
    }
  }

  private func chunk(_ data: UnsafeBufferPointer<UInt8>) {
    guard frameIsData, !messageTooLong else { return }
    if message.count + data.count > maximumMessageBytes {
      messageTooLong = true
      message = []
    } else {
      message.append(contentsOf: data)
    }
  }

  private func messageEnded(opcode: UInt8, status: UInt16, payload: [UInt8]) {
    switch opcode {
    case UInt8(WSLAY_TEXT_FRAME.rawValue):
      messages.append(messageTooLong ? .tooLong : .text(message))
    case UInt8(WSLAY_BINARY_FRAME.rawValue):
      messages.append(.binary)
    case UInt8(WSLAY_PING.rawValue):
      messages.append(.ping(payload))
      return
    case UInt8(WSLAY_CONNECTION_CLOSE.rawValue):
      messages.append(.close(code: status))
      return
    default:
      return  // a pong
    }
    message = []
    messageTooLong = false
  }
}

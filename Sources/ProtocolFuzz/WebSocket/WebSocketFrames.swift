/// WebSocket frames as a client writes and reads them (RFC 6455, 5.2),
/// written here by hand on purpose: the tests and the fuzzer judge the
/// broker's web door, which frames with libwslay, by an implementation of
/// their own, and they must also write the frames no good client would
/// (unmasked, oversized, fragmented, reserved bits).
public enum WebSocketFrames {
  public static let continuation: UInt8 = 0x0
  public static let text: UInt8 = 0x1
  public static let binary: UInt8 = 0x2
  public static let close: UInt8 = 0x8
  public static let ping: UInt8 = 0x9
  public static let pong: UInt8 = 0xA

  /// One frame as read.
  public struct Frame: Equatable, Sendable {
    public var fin: Bool
    public var opcode: UInt8
    public var payload: [UInt8]

    public init(fin: Bool, opcode: UInt8, payload: [UInt8]) {
      self.fin = fin
      self.opcode = opcode
      self.payload = payload
    }

    /// A text frame's payload as a string.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// A close frame's status, if it has one.
    public var closeCode: UInt16? {
      payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }

    /// A close frame's reason.
    public var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
  }

  /// A frame as a client sends it: masked with `mask` (4 bytes; nil for an
  /// unmasked frame, which a server must refuse), its length as given or,
  /// with `claimedLength`, as claimed (for a frame that never ends).
  public static func encode(
    opcode: UInt8, payload: some Collection<UInt8>, fin: Bool = true,
    mask: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D], reserved: UInt8 = 0, claimedLength: UInt64? = nil
  ) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | (reserved & 0x7) << 4 | (opcode & 0xF)]
    let length = claimedLength ?? UInt64(payload.count)
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    if length < 126 {
      frame.append(maskBit | UInt8(length))
    } else if length <= 0xFFFF {
      frame.append(maskBit | 126)
      frame += [UInt8(length >> 8), UInt8(length & 0xFF)]
    } else {
      frame.append(maskBit | 127)
      for shift in stride(from: 56, through: 0, by: -8) {
        frame.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
      }
    }
    guard let mask else { return frame + payload }
    frame += mask
    for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index % 4]) }
    return frame
  }

  /// A text frame of `line`, as the page sends each request.
  public static func text(_ line: String) -> [UInt8] {
    encode(opcode: text, payload: Array(line.utf8))
  }

  /// A close frame with `code`, as a client sends it.
  public static func close(code: UInt16 = 1000, reason: String = "") -> [UInt8] {
    encode(opcode: close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
  }

  /// Why the bytes from the server are no WebSocket frames it may send.
  public struct Violation: Error, Equatable, CustomStringConvertible {
    public let description: String
  }

  /// Takes the whole frames from the front of `buffer`, as a server sends
  /// them: never masked, no reserved bit, a known opcode, control frames
  /// whole and short; a partial frame stays in `buffer`. Throws at the
  /// first frame a server may not send.
  public static func decode(_ buffer: inout [UInt8]) throws(Violation) -> [Frame] {
    var frames: [Frame] = []
    var start = 0
    while let (frame, end) = try frame(in: buffer, at: start) {
      frames.append(frame)
      start = end
    }
    buffer.removeFirst(start)
    return frames
  }

  /// The first whole frame of `buffer`, taken from it, or nil.
  public static func decodeOne(_ buffer: inout [UInt8]) throws(Violation) -> Frame? {
    guard let (frame, end) = try frame(in: buffer, at: 0) else { return nil }
    buffer.removeFirst(end)
    return frame
  }

  /// The frame that starts at `start`, and where it ends; nil when it is
  /// not whole yet.
  private static func frame(in buffer: [UInt8], at start: Int) throws(Violation) -> (
    Frame, end: Int
  )? {
    guard buffer.count - start >= 2 else { return nil }
    let first = buffer[start]
    let second = buffer[start + 1]
    let opcode = first & 0xF
    guard first & 0x70 == 0 else { throw Violation(description: "a reserved bit is set") }
    guard second & 0x80 == 0 else { throw Violation(description: "the server masked a frame") }
    guard [continuation, text, binary, close, ping, pong].contains(opcode) else {
      throw Violation(description: "unknown opcode \(opcode)")
    }
    var length = UInt64(second & 0x7F)
    var header = 2
    if length == 126 {
      guard buffer.count - start >= 4 else { return nil }
      length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
      header = 4
    } else if length == 127 {
      guard buffer.count - start >= 10 else { return nil }
      length = (0..<8).reduce(0) { $0 << 8 | UInt64(buffer[start + 2 + $1]) }
      header = 10
    }
    if opcode & 0x8 != 0 && (length > 125 || first & 0x80 == 0) {
      throw Violation(description: "a control frame of \(length) bytes, or fragmented")
    }
    guard length <= 1 << 30 else { throw Violation(description: "a frame of \(length) bytes") }
    let end = start + header + Int(length)
    guard buffer.count >= end else { return nil }
    let frame = Frame(
      fin: first & 0x80 != 0, opcode: opcode, payload: Array(buffer[start + header..<end]))
    return (frame, end)
  }

  /// The opening handshake a page's browser sends for `GET /ws`
  /// (chatbroker(7), "The web door"), with `host` and, unless nil,
  /// `origin`; `fields` replace or add to the usual ones.
  public static func upgradeRequest(
    host: String, origin: String?, path: String = "/ws",
    key: String = "dGhlIHNhbXBsZSBub25jZQ==", protocols: String? = "chatbroker",
    fields: [(String, String)] = []
  ) -> String {
    var head = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n"
    var all: [(String, String)] = [
      ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
      ("Sec-WebSocket-Version", "13"),
    ]
    if let origin { all.append(("Origin", origin)) }
    if let protocols { all.append(("Sec-WebSocket-Protocol", protocols)) }
    for field in fields {
      all.removeAll { $0.0.lowercased() == field.0.lowercased() }
      all.append(field)
    }
    for (name, value) in all { head += "\(name): \(value)\r\n" }
    return head + "\r\n"
  }
}

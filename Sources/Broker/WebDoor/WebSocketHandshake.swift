import CNettle

/// The opening handshake of RFC 6455 (4.2): what the door checks of an
/// upgrade request, and the `Sec-WebSocket-Accept` it answers, from
/// Nettle's SHA-1 (``Digest``) and base64.
enum WebSocketHandshake {
  /// The subprotocol the page asks for and the door answers: the line
  /// protocol, one line per text frame (chatbroker(7), "The web door").
  static let subprotocol = "chatbroker"

  /// RFC 6455's constant, appended to the key before hashing.
  private static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

  /// The `Sec-WebSocket-Accept` for `key`: base64 of the SHA-1 of the
  /// key and the constant.
  static func accept(key: String) -> String {
    let digest = Digest.sha1(Array((key + guid).utf8))
    var encoded = [CChar](repeating: 0, count: 28)
    encoded.withUnsafeMutableBufferPointer { output in
      digest.withUnsafeBufferPointer {
        nettle_base64_encode_raw(output.baseAddress, 20, $0.baseAddress)
      }
    }
    return String(decoding: encoded.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether `key` is what RFC 6455 asks for: the base64 of 16 bytes.
  static func isKey(_ key: String) -> Bool {
    let bytes = Array(key.utf8)
    guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=")
    else { return false }
    var context = base64_decode_ctx()
    nettle_base64_decode_init(&context)
    var decoded = [UInt8](repeating: 0, count: 18)
    var length = decoded.count
    let status = bytes.withUnsafeBufferPointer { source in
      decoded.withUnsafeMutableBufferPointer { target in
        source.withMemoryRebound(to: CChar.self) {
          nettle_base64_decode_update(&context, &length, target.baseAddress, 24, $0.baseAddress)
        }
      }
    }
    return status == 1 && nettle_base64_decode_final(&context) == 1 && length == 16
  }
}

import CNettle

/// The digests the broker needs, from Nettle (Debian's nettle-dev) rather
/// than written here: SHA-1 for the WebSocket handshake (RFC 6455, 4.2),
/// SHA-256 for the web door's tokens, which the journal keeps only hashed,
/// and HMAC-SHA256 (RFC 2104) for the federation's de-duplication ids,
/// which must tell nothing to whoever lacks the key (chatbroker(8),
/// "FEDERATION").
enum Digest {
  /// The 20-byte SHA-1 of `bytes`.
  static func sha1(_ bytes: [UInt8]) -> [UInt8] {
    var context = sha1_ctx()
    nettle_sha1_init(&context)
    bytes.withUnsafeBufferPointer { nettle_sha1_update(&context, $0.count, $0.baseAddress) }
    return output(count: 20) { nettle_sha1_digest(&context, $0, $1) }
  }

  /// The 32-byte SHA-256 of `bytes`.
  static func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var context = sha256_ctx()
    nettle_sha256_init(&context)
    bytes.withUnsafeBufferPointer { nettle_sha256_update(&context, $0.count, $0.baseAddress) }
    return output(count: 32) { nettle_sha256_digest(&context, $0, $1) }
  }

  /// The HMAC-SHA256 of `message` under `key`, its first `count` bytes
  /// (at most 32; RFC 2104, 5: a truncated HMAC keeps at least half).
  static func hmacSHA256(key: [UInt8], _ message: [UInt8], count: Int = 32) -> [UInt8] {
    precondition((16...32).contains(count), "an HMAC-SHA256 keeps 16 to 32 bytes")
    var context = hmac_sha256_ctx()
    key.withUnsafeBufferPointer {
      nettle_hmac_sha256_set_key(&context, $0.count, $0.baseAddress)
    }
    message.withUnsafeBufferPointer {
      nettle_hmac_sha256_update(&context, $0.count, $0.baseAddress)
    }
    return output(count: count) { nettle_hmac_sha256_digest(&context, $0, $1) }
  }

  /// `count` bytes written by `write(count, buffer)`.
  private static func output(
    count: Int, _ write: (Int, UnsafeMutablePointer<UInt8>?) -> Void
  ) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: count)
    digest.withUnsafeMutableBufferPointer { write($0.count, $0.baseAddress) }
    return digest
  }
}

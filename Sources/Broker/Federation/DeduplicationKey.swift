import LineProtocol

/// The secret of one outbox line, from which its de-duplication id in the
/// stream (`Nats-Msg-Id`) is computed (chatbroker(8), "FEDERATION").
///
/// The stream de-duplicates by that id alone, whatever subject a message
/// was published under: a node that could predict another's id could
/// publish it first, under its own subject, and the stream would take the
/// other node's line for a copy of that message and drop it while
/// acknowledging it. So the id is unpredictable by construction: 128 random
/// bits drawn when the line is said and journaled with it (`dedup_key`, so
/// that a line published again after a restart is still stored once),
/// never published, and the key of an HMAC-SHA256 that makes an id per
/// stream; the ids
/// other hosts read in one stream tell nothing of the ids the same lines
/// get in a stream created anew, into which they are published again.
public struct DeduplicationKey: Hashable, Sendable {
  public var high: UInt64
  public var low: UInt64

  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  /// A key from the system's random source (getrandom(2)), which other
  /// hosts cannot predict.
  public static func random() -> DeduplicationKey {
    var generator = SystemRandomNumberGenerator()
    return DeduplicationKey(high: generator.next(), low: generator.next())
  }

  /// As the journal writes it: 32 lower-case hexadecimal digits.
  public var hex: String { LowerHex.string(high) + LowerHex.string(low) }

  /// `hex` read back; nil unless it is 32 hexadecimal digits.
  public init?(hex: some StringProtocol) {
    guard LowerHex.isDigits(hex, count: 32),
      let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16)
    else { return nil }
    self.init(high: high, low: low)
  }

  /// The `Nats-Msg-Id` of line `id` of `node` in the stream created at
  /// `streamCreated`: `<node>:<id>:` and 32 hexadecimal digits of the
  /// HMAC-SHA256, under this key, of the stream's creation time and the
  /// id (each eight bytes, big-endian), its first sixteen bytes.
  public func messageID(node: String, id: MessageID, streamCreated: Timestamp) -> String {
    let key = [high, low].flatMap(Self.bigEndianBytes)
    let input = [UInt64(bitPattern: streamCreated.milliseconds), id.value].flatMap(
      Self.bigEndianBytes)
    let secret = LowerHex.string(Digest.hmacSHA256(key: key, input, count: 16))
    return "\(node):\(id):\(secret)"
  }

  private static func bigEndianBytes(_ value: UInt64) -> [UInt8] {
    stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
  }
}

/// SipHash-2-4 with its 128-bit output (Aumasson and Bernstein, "SipHash:
/// a fast short-input PRF"): a keyed function whose outputs tell nothing
/// of its outputs for other inputs to whoever lacks the key, which is what
/// makes a line's de-duplication id unpredictable to the other hosts
/// (``DeduplicationKey``). Checked against the reference vectors.
enum SipHash {
  /// The 128-bit SipHash-2-4 of `bytes` under the key (`k0`, `k1`), the
  /// key's first and second eight bytes read little-endian; the result as
  /// the reference writes it, its first and second eight bytes likewise.
  static func hash128(_ bytes: [UInt8], k0: UInt64, k1: UInt64) -> (UInt64, UInt64) {
    var state = State(
      v0: k0 ^ 0x736f_6d65_7073_6575, v1: k1 ^ 0x646f_7261_6e64_6f6d ^ 0xee,
      v2: k0 ^ 0x6c79_6765_6e65_7261, v3: k1 ^ 0x7465_6462_7974_6573)
    let whole = bytes.count / 8 * 8
    for start in stride(from: 0, to: whole, by: 8) {
      state.compress(word(bytes[start..<start + 8]))
    }
    state.compress(UInt64(truncatingIfNeeded: bytes.count) << 56 | word(bytes[whole...]))
    state.v2 ^= 0xee
    state.rounds(4)
    let first = state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    state.v1 ^= 0xdd
    state.rounds(4)
    return (first, state.v0 ^ state.v1 ^ state.v2 ^ state.v3)
  }

  /// Up to eight bytes, little-endian.
  private static func word(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    var value: UInt64 = 0
    for (shift, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * shift) }
    return value
  }

  private struct State {
    var v0, v1, v2, v3: UInt64

    /// One message word, with the two rounds of SipHash-2-4.
    mutating func compress(_ word: UInt64) {
      v3 ^= word
      rounds(2)
      v0 ^= word
    }

    mutating func rounds(_ count: Int) {
      for _ in 0..<count {
        v0 &+= v1
        v1 = v1.rotatedLeft(13) ^ v0
        v0 = v0.rotatedLeft(32)
        v2 &+= v3
        v3 = v3.rotatedLeft(16) ^ v2
        v0 &+= v3
        v3 = v3.rotatedLeft(21) ^ v0
        v2 &+= v1
        v1 = v1.rotatedLeft(17) ^ v2
        v2 = v2.rotatedLeft(32)
      }
    }
  }
}

extension UInt64 {
  fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
    self << count | self >> (64 - count)
  }
}

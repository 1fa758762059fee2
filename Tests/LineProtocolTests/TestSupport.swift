import Foundation
import LineProtocol

/// SplitMix64: a tiny, fast generator with a seed, so a failing random case
/// can be reproduced from the seed printed with it.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The instant an RFC 3339 text in UTC names, read by Foundation rather than
/// by the code under test. Only for dates well inside the Gregorian era.
func utc(_ text: String) -> Timestamp {
  let formatter = ISO8601DateFormatter()
  formatter.formatOptions =
    text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
  guard let date = formatter.date(from: text) else {
    fatalError("test bug: \(text) is not an RFC 3339 date-time")
  }
  return Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
}

func bytes(_ text: String) -> [UInt8] {
  Array(text.utf8)
}

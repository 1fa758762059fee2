import Foundation
import Glibc

/// Reading the broker's lines the way a script does: fixed words first, free
/// text last after ` :`.
extension String {
  /// The fixed words, before any ` :text`.
  var words: [String] {
    let fixed = range(of: " :").map { self[..<$0.lowerBound] } ?? self[...]
    return fixed.split(separator: " ").map(String.init)
  }

  /// The free text after ` :`, if any.
  var freeText: String? {
    range(of: " :").map { String(self[$0.upperBound...]) }
  }
}

/// The wall clock now, in milliseconds since the epoch, with sub-millisecond
/// precision.
func wallClockMilliseconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
}

import Foundation
import Glibc

/// Reading the broker's lines the way a script does: fixed words first, free
/// text last after ` :`.
extension String {
  /// The fixed words, before any ` :text`.
  public var words: [String] {
    let fixed = range(of: " :").map { self[..<$0.lowerBound] } ?? self[...]
    return fixed.split(separator: " ").map(String.init)
  }

  /// The free text after ` :`, if any.
  public var freeText: String? {
    range(of: " :").map { String(self[$0.upperBound...]) }
  }
}

/// The wall clock now, in milliseconds since the epoch, with sub-millisecond
/// precision.
public func wallClockMilliseconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
}

extension LineClient {
  /// The data lines of a multi-line reply (`HIST`, `SCHED`, `ROOM`...);
  /// fails unless the request succeeds.
  public func dataLines(_ request: String) throws -> [String] {
    let lines = try self.request(request)
    guard let last = lines.last, last.hasPrefix("OK ") else {
      throw TestFailure("\(request) answered \(lines.last ?? "nothing")")
    }
    return Array(lines.dropLast())
  }
}

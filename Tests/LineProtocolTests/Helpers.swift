import Foundation
import LineProtocol

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

extension Recurrence {
  /// The next occurrence, each search with a budget of its own, as each
  /// request and timer step of the broker has (a test of the budget itself
  /// passes one).
  func next(after instant: Timestamp, reference: Timestamp) throws -> Timestamp? {
    try next(after: instant, reference: reference, budget: RecurrenceBudget())
  }

  func first(after now: Timestamp) throws -> Timestamp? {
    try first(after: now, budget: RecurrenceBudget())
  }
}

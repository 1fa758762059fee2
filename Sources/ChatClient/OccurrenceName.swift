import LineProtocol

/// One occurrence of a series as people name it for `/skip` and `/replace`
/// (chatsh(1), "The chat screen"): a clock time on their own clock, `19:06`
/// or `19:06:25`, a day and a time (`tomorrow 19:06`, `2026-12-03
/// 19:06:25`), or any `<when>` such as `2026-12-03T19:06:25.175Z`. The
/// broker wants the occurrence's exact instant, to the millisecond, and a
/// series started at 19:03:25 falls at 19:06:25.175: so chatsh asks for the
/// series' next occurrences (`SCHEDULED id NEXT`, chatbroker(7)) and takes
/// the first that falls in the minute, or second, named.
public struct OccurrenceName: Equatable, Sendable {
  /// The words as typed, for messages.
  public let text: String
  private let form: Form

  private enum Form: Equatable {
    /// A clock time alone: the next occurrence at that local time of day.
    case clock(hour: Int, minute: Int, second: Int?)
    /// An instant named to the minute, the second, or the millisecond:
    /// the occurrence in [start, start + length).
    case span(start: Timestamp, length: Int64)
  }

  /// Reads `words` (one, or a day and a time); throws what would be right.
  public init(_ words: [String], now: Timestamp, clock: LocalClock) throws(WhenError) {
    text = words.joined(separator: " ")
    if words.count == 1, let parts = Self.clockParts(words[0]) {
      form = .clock(hour: parts.hour, minute: parts.minute, second: parts.second)
      return
    }
    let start: Timestamp
    if words.count == 2 {
      guard
        let found = try LocalDateWhen.resolve(
          day: words[0], time: words[1], now: now, clock: clock)
      else {
        throw WhenError(
          "usage: /skip ID WHEN, where WHEN is one word or a day and a time (2026-12-24 09:00)")
      }
      start = found
      form = .span(start: start, length: Self.clockParts(words[1])?.second == nil ? 60_000 : 1000)
      return
    }
    do {
      start = try WhenParser.resolve(words[0], now: now, timeZone: clock.timeZone, verb: .skip)
    } catch {
      throw WhenError(error.text)
    }
    // Named to the minute or the second (no milliseconds written): the
    // occurrence anywhere in it.
    let length: Int64 =
      words[0].contains(".") ? 1 : start.milliseconds % 60_000 == 0 ? 60_000 : 1000
    form = .span(start: start, length: length)
  }

  /// The first of `occurrences` (as `SCHEDULED id NEXT` lists them, in
  /// order) that this names, or nil.
  public func match(_ occurrences: [Timestamp], clock: LocalClock) -> Timestamp? {
    occurrences.first { occurrence in
      switch form {
      case .clock(let hour, let minute, let second):
        let local = clock.local(occurrence)
        return local.hour == hour && local.minute == minute
          && (second.map { $0 == Self.second(of: occurrence) } ?? true)
      case .span(let start, let length):
        return occurrence.milliseconds >= start.milliseconds
          && occurrence.milliseconds < start.milliseconds + length
      }
    }
  }

  /// The second within its minute: the same on every clock, zones being
  /// whole minutes apart.
  static func second(of time: Timestamp) -> Int {
    Int(((time.milliseconds % 60_000) + 60_000) % 60_000 / 1000)
  }

  /// `HH:MM` or `HH:MM:SS`, or nil for any other word.
  private static func clockParts(_ word: String) -> (hour: Int, minute: Int, second: Int?)? {
    let parts = word.split(separator: ":", omittingEmptySubsequences: false)
    guard (2...3).contains(parts.count),
      parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && Int($0) != nil }),
      let hour = Int(parts[0]), let minute = Int(parts[1]), hour < 24, minute < 60
    else { return nil }
    let second = parts.count == 3 ? Int(parts[2]) : nil
    if let second, second >= 60 { return nil }
    return (hour, minute, second)
  }
}

extension LocalClock {
  /// A due time as ``shortDateTime(_:now:)`` shows it, with its seconds
  /// when it has any: how occurrences are listed, so that each can be
  /// named back (`19:06:25`).
  public func occurrenceTime(_ time: Timestamp, now: Timestamp) -> String {
    let second = OccurrenceName.second(of: time)
    return shortDateTime(time, now: now)
      + (second == 0
        ? ""
        : ":" + (second < 10 ? "0" : "")
          + String(second))
  }
}

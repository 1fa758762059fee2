import Foundation
import LineProtocol

/// Broken-down local time of an instant in the user's zone.
public struct LocalTime: Equatable, Sendable {
  public var year: Int
  public var month: Int
  public var day: Int
  public var hour: Int
  public var minute: Int
  /// 1 = Sunday ... 7 = Saturday, as Foundation counts.
  public var weekday: Int
  /// Days since 1970-01-01 of the local date: consecutive days differ by 1.
  public var dayNumber: Int64

  public var clock: String {
    (hour < 10 ? "0" : "") + String(hour) + ":" + (minute < 10 ? "0" : "") + String(minute)
  }
}

/// Formats instants for people: clock times, relative times ("just now",
/// "2m", "3h", "yesterday 18:04") and day separators, in one time zone.
public struct LocalClock: Sendable {
  public let timeZone: TimeZone
  /// How rules spell the zone (`UTC`, not Foundation's `GMT`), nil for the
  /// zone's own identifier.
  public let zoneName: String?
  private let calendar: Calendar

  public static let weekdays = [
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
  ]
  public static let months = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
  ]

  public init(timeZone: TimeZone, zoneName: String? = nil) {
    self.timeZone = timeZone
    self.zoneName = zoneName
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    self.calendar = calendar
  }

  /// The user's own zone, read from `TZ` as the broker reads its own
  /// (``LocalZone``): `TZ=:Europe/Berlin` is Berlin, not UTC.
  public init(zone: LocalZone) {
    self.init(timeZone: zone.timeZone, zoneName: zone.name)
  }

  public func local(_ time: Timestamp) -> LocalTime {
    let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
    let parts = calendar.dateComponents(
      [.year, .month, .day, .hour, .minute, .weekday], from: date)
    let year = parts.year ?? 1970
    let month = parts.month ?? 1
    let day = parts.day ?? 1
    return LocalTime(
      year: year, month: month, day: day, hour: parts.hour ?? 0, minute: parts.minute ?? 0,
      weekday: parts.weekday ?? 1,
      dayNumber: CivilDate(year: year, month: month, day: day).daysSinceEpoch)
  }

  /// "just now", "5m", "3h" (today), "yesterday 18:04", "Mon 18:04" (this
  /// week), "30 Nov 18:04", "30 Nov 2025 18:04".
  public func relative(_ time: Timestamp, now: Timestamp) -> String {
    let seconds = (now.milliseconds - time.milliseconds) / 1000
    if seconds < 60 { return "just now" }
    if seconds < 3600 { return "\(seconds / 60)m" }
    let then = local(time)
    let today = local(now)
    switch today.dayNumber - then.dayNumber {
    case 0: return "\(seconds / 3600)h"
    case 1: return "yesterday " + then.clock
    case 2...6: return String(Self.weekdays[then.weekday - 1].prefix(3)) + " " + then.clock
    default:
      let date = "\(then.day) " + String(Self.months[then.month - 1].prefix(3))
      return date + (then.year == today.year ? "" : " \(then.year)") + " " + then.clock
    }
  }

  /// "Today", "Yesterday", "Monday 30 November", "Monday 30 November 2025".
  public func dayTitle(_ time: Timestamp, now: Timestamp) -> String {
    let then = local(time)
    let today = local(now)
    switch today.dayNumber - then.dayNumber {
    case 0: return "Today"
    case 1: return "Yesterday"
    default:
      let title =
        "\(Self.weekdays[then.weekday - 1]) \(then.day) \(Self.months[then.month - 1])"
      return then.year == today.year ? title : title + " \(then.year)"
    }
  }

  /// "18:04" today, else "Tue 1 Dec 18:04": how due times are shown.
  public func shortDateTime(_ time: Timestamp, now: Timestamp) -> String {
    let then = local(time)
    if then.dayNumber == local(now).dayNumber { return then.clock }
    let weekday = String(Self.weekdays[then.weekday - 1].prefix(3))
    return "\(weekday) \(then.day) \(Self.months[then.month - 1].prefix(3)) \(then.clock)"
  }
}

/// `/at` with a local date before the clock time (chatsh(1), "The chat
/// screen"): `tomorrow 09:00`, `today 18:00`, `mon 09:00` (the next Monday,
/// today if that time is still to come), `2026-12-24 18:00`, read in the
/// user's zone. The time may have seconds.
public enum LocalDateWhen {
  /// The instant the first two words name, or nil when the first word is
  /// not such a date (the caller then reads one word as a `<when>`);
  /// throws a message when it is, but the rest is wrong.
  public static func resolve(day: String, time: String, now: Timestamp, clock: LocalClock)
    throws(WhenError) -> Timestamp?
  {
    let lowered = day.lowercased()
    let today = clock.local(now)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = clock.timeZone
    var date: (year: Int, month: Int, day: Int)?
    var weekday: Int?
    switch lowered {
    case "today": date = (today.year, today.month, today.day)
    case "tomorrow":
      let next = clock.local(Timestamp(milliseconds: now.milliseconds + 86_400_000))
      // Near a change of clocks a day is not 24 hours: step by calendar day.
      let noon = calendar.date(
        from: DateComponents(year: today.year, month: today.month, day: today.day, hour: 12))
      if let noon, let after = calendar.date(byAdding: .day, value: 1, to: noon) {
        let parts = calendar.dateComponents([.year, .month, .day], from: after)
        date = (parts.year ?? next.year, parts.month ?? next.month, parts.day ?? next.day)
      } else {
        date = (next.year, next.month, next.day)
      }
    default:
      if let index = LocalClock.weekdays.firstIndex(where: {
        lowered.count >= 3 && $0.lowercased().hasPrefix(lowered)
      }) {
        weekday = index + 1
      } else {
        let parts = lowered.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, let year = Int(parts[0]),
          let month = Int(parts[1]), let dayOfMonth = Int(parts[2])
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(dayOfMonth) else {
          throw WhenError("'\(day)' is not a date: use YYYY-MM-DD, today, tomorrow or mon..sun")
        }
        date = (year, month, dayOfMonth)
      }
    }
    let clockParts = time.split(separator: ":").map { Int($0) }
    guard (2...3).contains(clockParts.count), clockParts.allSatisfy({ $0 != nil }),
      let hour = clockParts[0], let minute = clockParts[1], (0...23).contains(hour),
      (0...59).contains(minute), (0...59).contains(clockParts.count == 3 ? clockParts[2]! : 0)
    else {
      throw WhenError("after '\(day)' comes a time such as 09:00, not '\(time)'")
    }
    let second = clockParts.count == 3 ? clockParts[2]! : 0
    var candidates: [DateComponents] = []
    if let date {
      candidates = [
        DateComponents(
          year: date.year, month: date.month, day: date.day, hour: hour, minute: minute,
          second: second)
      ]
    } else if let weekday {
      let ahead = (weekday - today.weekday + 7) % 7
      for offset in [ahead, ahead + 7] {
        let noon = calendar.date(
          from: DateComponents(year: today.year, month: today.month, day: today.day, hour: 12))!
        let day = calendar.dateComponents(
          [.year, .month, .day], from: calendar.date(byAdding: .day, value: offset, to: noon)!)
        candidates.append(
          DateComponents(
            year: day.year, month: day.month, day: day.day, hour: hour, minute: minute,
            second: second))
      }
    }
    for components in candidates {
      guard let instant = calendar.date(from: components) else { continue }
      let milliseconds = Int64((instant.timeIntervalSince1970 * 1000).rounded())
      if milliseconds > now.milliseconds || weekday == nil {
        guard milliseconds > now.milliseconds else {
          throw WhenError(
            "\(day) \(time) is in the past (it is \(clock.shortDateTime(now, now: now)) now)")
        }
        return Timestamp(milliseconds: milliseconds)
      }
    }
    throw WhenError("\(day) \(time) is not a time on your clock")
  }
}

/// Why a local date could not be read; `text` says what would be right.
public struct WhenError: Error, Equatable {
  public var text: String

  public init(_ text: String) {
    self.text = text
  }
}

/// Parses the broker's `YYYY-MM-DDTHH:MM:SS[.fff]Z` (``Timestamp/init(utc:)``);
/// `nil` for anything else.
public func parseTimestamp(_ text: String) -> Timestamp? {
  Timestamp(utc: text)
}

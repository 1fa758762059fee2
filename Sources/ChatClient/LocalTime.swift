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
  private let calendar: Calendar

  public static let weekdays = [
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
  ]
  public static let months = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
  ]

  public init(timeZone: TimeZone) {
    self.timeZone = timeZone
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    self.calendar = calendar
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
      dayNumber: daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day)))
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

/// The parts of an RRULE as libical spells it (`FREQ=MONTHLY;COUNT=2;
/// BYDAY=2MO,-1FR`), and what they say about how much libical works to
/// expand it: which parts filter the times it steps through rather than
/// add to them, and how many times it looks at per period. The table is
/// libical 3.0's (`expand_map` in icalrecur.c): a part finer than the
/// frequency adds times (`BYHOUR` of a `DAILY` rule), a coarser one
/// filters them (`BYMONTH` of a `DAILY` rule), and a filter that seldom
/// passes is what makes libical look at many times for each it returns.
struct RuleShape: Equatable, Sendable {
  enum Frequency: Int, Comparable, Sendable {
    case secondly, minutely, hourly, daily, weekly, monthly, yearly

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    init?(_ name: String) {
      switch name {
      case "SECONDLY": self = .secondly
      case "MINUTELY": self = .minutely
      case "HOURLY": self = .hourly
      case "DAILY": self = .daily
      case "WEEKLY": self = .weekly
      case "MONTHLY": self = .monthly
      case "YEARLY": self = .yearly
      default: return nil
      }
    }
  }

  /// The parts in libical's order, each `NAME=value`.
  let parts: [(name: String, value: String)]
  let frequency: Frequency
  let interval: Int

  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.parts.map { $0.name + "=" + $0.value } == rhs.parts.map { $0.name + "=" + $0.value }
  }

  /// nil for a rule libical did not spell.
  init?(_ canonical: String) {
    parts = canonical.split(separator: ";").map { part in
      let pair = part.split(separator: "=", maxSplits: 1)
      return (String(pair[0]), pair.count == 2 ? String(pair[1]) : "")
    }
    guard let frequency = parts.first(where: { $0.name == "FREQ" }).flatMap({ Frequency($0.value) })
    else { return nil }
    self.frequency = frequency
    interval = parts.first { $0.name == "INTERVAL" }.flatMap { Int($0.value) } ?? 1
  }

  func has(_ name: String) -> Bool { parts.contains { $0.name == name } }

  /// The values of a list part, as libical wrote them (`2MO`, `-1`).
  func values(_ name: String) -> [String] {
    parts.first { $0.name == name }?.value.split(separator: ",").map(String.init) ?? []
  }

  func count(_ name: String) -> Int { values(name).count }

  /// The weekdays as BYDAY spells them, Monday first.
  static let weekdayNames = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

  /// The list of the frequency's own unit (BYMINUTE of a MINUTELY rule,
  /// BYHOUR of an HOURLY one), which libical goes through in place of
  /// the frequency's steps.
  var ownUnitList: String? {
    switch frequency {
    case .minutely where has("BYMINUTE"): "BYMINUTE"
    case .hourly where has("BYHOUR"): "BYHOUR"
    default: nil
    }
  }

  var frequencyName: String {
    parts.first { $0.name == "FREQ" }?.value ?? ""
  }

  /// The rule's text without the parts named, with those given added.
  func text(without removed: Set<String>, adding added: [String] = []) -> String {
    (parts.filter { !removed.contains($0.name) }.map { $0.name + "=" + $0.value } + added)
      .joined(separator: ";")
  }

  // MARK: - What expanding costs

  /// Whether some part filters the times libical steps through, so that
  /// it may look at many for each it returns: the iterator then gets an
  /// `UNTIL` its budget can pay for. A `MONTHLY` rule's `BYMONTH` only
  /// makes libical skip months, and a `YEARLY` rule has no filter.
  var filters: Bool {
    let filtering: [String] =
      switch frequency {
      case .secondly, .minutely:
        ["BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYMONTH"]
      case .hourly: ["BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYMONTH"]
      case .daily: ["BYDAY", "BYMONTHDAY", "BYMONTH"]
      case .weekly: ["BYMONTH"]
      case .monthly, .yearly: []
      }
    return filtering.contains(where: has)
  }

  /// The times of day one day of the rule adds (BYHOUR times BYMINUTE,
  /// where they add times rather than filter them; one BYSECOND at most).
  var timesPerDay: Int {
    let minutes = frequency >= .hourly ? max(1, count("BYMINUTE")) : 1
    let hours = frequency >= .daily ? max(1, count("BYHOUR")) : 1
    return minutes * hours
  }

  /// The shortest span of local time one step of the frequency covers, in
  /// seconds, and the most times libical looks at in it, filters aside.
  var period: (seconds: Int64, times: Int) {
    let every = Int64(interval)
    switch frequency {
    case .secondly: return (every, 1)
    case .minutely: return (60 * every, 1)
    case .hourly: return (3600 * every, max(1, count("BYMINUTE")))
    case .daily: return (86_400 * every, timesPerDay)
    case .weekly: return (604_800 * every, max(1, count("BYDAY")) * timesPerDay)
    case .monthly: return (28 * 86_400 * every, daysPerPeriod * timesPerDay)
    case .yearly: return (365 * 86_400 * every, daysPerPeriod * timesPerDay)
    }
  }

  /// The most days one month (`MONTHLY`) or year (`YEARLY`) of the rule
  /// can have: each `BYSETPOS` keeps one, an ordinal `BYDAY` names one a
  /// month or year, a weekday names at most 5 a month or 53 a year.
  var daysPerPeriod: Int {
    let byDay = values("BYDAY")
    let ordinals = byDay.filter { $0.first.map { $0.isNumber || $0 == "-" || $0 == "+" } ?? false }
    let days: Int
    // With BYMONTHDAY, BYDAY keeps those of its days on the weekdays named.
    func monthDaysOnWeekdays() -> Int {
      mostMonthDays(onWeekdays: Set(byDay).subtracting(ordinals)) + ordinals.count
    }
    if frequency == .monthly {
      let weekdays = ordinals.count + 5 * (byDay.count - ordinals.count)
      if !byDay.isEmpty {
        days =
          has("BYMONTHDAY")
          ? min(count("BYMONTHDAY"), weekdays, monthDaysOnWeekdays()) : weekdays
      } else {
        days = max(1, count("BYMONTHDAY"))
      }
    } else if has("BYYEARDAY") {
      days = count("BYYEARDAY")
    } else if has("BYWEEKNO") {
      days = count("BYWEEKNO") * (byDay.isEmpty ? 1 : min(7, byDay.count))
    } else {
      let months = max(1, count("BYMONTH"))
      if !byDay.isEmpty {
        let perMonth = ordinals.count + 5 * (byDay.count - ordinals.count)
        let perYear = ordinals.count + 53 * (byDay.count - ordinals.count)
        let weekdays = has("BYMONTH") ? months * perMonth : perYear
        days =
          has("BYMONTHDAY")
          ? min(months * count("BYMONTHDAY"), weekdays, months * monthDaysOnWeekdays())
          : weekdays
      } else {
        days = months * max(1, count("BYMONTHDAY"))
      }
    }
    let bound = min(days, frequency == .monthly ? 31 : 366 + 7)
    return has("BYSETPOS") ? min(bound, count("BYSETPOS")) : bound
  }

  /// The most of BYMONTHDAY's days one month has on `weekdays` (`MO`,
  /// `FR`), over every length of month and weekday of its first:
  /// `BYMONTHDAY=1,2,3,4,5,6,7;BYDAY=MO` has one.
  private func mostMonthDays(onWeekdays weekdays: Set<String>) -> Int {
    let named = Set(weekdays.compactMap { Self.weekdayNames.firstIndex(of: $0) })
    let monthDays = values("BYMONTHDAY").compactMap { Int($0) }
    var most = 0
    for length in 28...31 {
      let days = Set(monthDays.map { $0 < 0 ? length + 1 + $0 : $0 }.filter { 1...length ~= $0 })
      for first in 0..<7 {
        most = max(most, days.count { named.contains((first + $0 - 1) % 7) })
      }
    }
    return most
  }

  /// Steps for a month or a year libical lays out, and for a month it
  /// skips for `BYMONTH` (chatbroker(7), Limits; measured against a step
  /// of 2-4 µs: 11 and 19 µs, and one `occurrence_as_icaltime`).
  static let monthSteps = 3
  static let yearSteps = 5
  static let skippedMonthSteps = 1
  /// Times of a month or year libical passes before where it starts,
  /// per step: it looks at each without returning it, for about 0.9 µs
  /// (523,000 in 440 ms, `FREQ=YEARLY` on every minute of every day from
  /// 30 December, libical 3.0.16).
  static let passedTimesPerStep = 4
  /// Making an iterator and moving it to its start.
  static let iteratorSteps = 2
}

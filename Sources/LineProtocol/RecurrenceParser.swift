import Foundation

/// Reads the `<rule>` word of `SAYEVERY` and `RESCHEDULE` (chatbroker(7)
/// "Series"):
///
///     daily@09:00   weekdays@09:00/Europe/Berlin   mon,wed,fri@18:00
///     weekends@10:30   monthly:31@09:00   every:15m,count:10
///     daily@09:00,until:2027-03-01
extension Recurrence {
  /// The most occurrences a `count:` may ask for.
  public static let maximumCount = 1_000_000

  /// Whether `word` is meant as a rule rather than a `<when>`: a rule starts
  /// with `every:` or `monthly:`, or has an `@` after its first letter (a
  /// `<when>` only ever starts with `@`).
  public static func isRule(_ word: String) -> Bool {
    let lower = word.lowercased()
    if lower.hasPrefix("every:") || lower.hasPrefix("monthly:") || lower.hasPrefix("rrule:") {
      return true
    }
    if let first = word.split(separator: " ").first, startsCalendarExpression(String(first)) {
      return true
    }
    return word.dropFirst().contains("@")
  }

  /// Parses `word`; a rule without `/zone` is read in `defaultZone`, named
  /// `defaultZoneName` (its identifier when nil). `now` is when the rule is
  /// given: an `rrule:` without DTSTART starts on its local day (the
  /// journal's rules always have one).
  ///
  /// An `rrule:` is checked within `budget` the way libical expands it
  /// (``CalendarRule``); nil, for a rule the journal kept, reads it
  /// without calling libical at all.
  public static func parse(
    _ word: String, defaultZone: TimeZone, defaultZoneName: String? = nil, now: Timestamp? = nil,
    verb: Verb, budget: RecurrenceBudget? = RecurrenceBudget()
  ) throws(RequestError) -> Recurrence {
    var calendar: (String, String?)?
    if let first = word.split(separator: " ").first, startsCalendarExpression(String(first)) {
      calendar = try calendarExpression(word, verb: verb)
    }
    if let calendar {
      // A systemd calendar expression: kept as the rule it means.
      let (body, zone) = calendar
      let rrule = "rrule:" + body + (zone.map { "/" + $0 } ?? "")
      return try parse(
        rrule, defaultZone: defaultZone, defaultZoneName: defaultZoneName, now: now, verb: verb,
        budget: budget)
    }
    if word.utf8.count > 6, word.prefix(6).lowercased() == "rrule:" {
      let (body, timeZone, zoneName) = try zone(
        of: String(word.dropFirst(6)), defaultZone: defaultZone,
        defaultZoneName: defaultZoneName, verb: verb)
      var rule = Recurrence(
        pattern: .interval(milliseconds: 60_000), timeZone: timeZone, zoneName: zoneName)
      let calendar = try CalendarRule.parse(
        body, zone: { rule.instant(local: $0) }, local: { rule.localSeconds(of: $0) },
        now: now ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)),
        verb: verb, budget: budget)
      rule.pattern = .calendar(calendar)
      return rule
    }
    var parts = word.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    var end: End?
    var start: CivilDate?
    while let last = parts.last {
      if last.lowercased().hasPrefix("from:") {
        guard start == nil else { throw bad(verb, "a rule takes one from: date") }
        guard
          case .until(let year, let month, let day) = try parseEnd(
            "until:" + last.dropFirst(5), verb: verb)
        else { break }
        start = CivilDate(year: year, month: month, day: day)
      } else if let parsed = try parseEnd(last, verb: verb) {
        guard end == nil else { throw bad(verb, "a rule takes one end, until: or count:") }
        end = parsed
      } else {
        break
      }
      parts.removeLast()
    }
    let (head, timeZone, zoneName) = try zone(
      of: parts.joined(separator: ","), defaultZone: defaultZone,
      defaultZoneName: defaultZoneName, verb: verb)
    let lower = head.lowercased()
    if lower.hasPrefix("every:"), !lower.contains("@") {
      let step = try interval(String(lower.dropFirst(6)), verb: verb)
      // Elapsed time needs no zone, but for the local date of an until:.
      guard case .until = end else {
        return Recurrence(
          pattern: .interval(milliseconds: step), timeZone: start == nil ? utc : timeZone,
          zoneName: start == nil ? "UTC" : zoneName, start: start, end: end)
      }
      return Recurrence(
        pattern: .interval(milliseconds: step), timeZone: timeZone, zoneName: zoneName,
        start: start, end: end)
    }
    guard let at = lower.firstIndex(of: "@") else {
      throw bad(verb, "\(quoted(word)) has no @ and time of day")
    }
    let days = String(lower[..<at])
    let times = try timesOfDay(String(lower[lower.index(after: at)...]), verb: verb)
    let pattern: Pattern
    if days.hasPrefix("monthly:") {
      pattern = try monthly(String(days.dropFirst(8)), verb: verb)
    } else if days.hasPrefix("yearly:") {
      let date = days.dropFirst(7).split(separator: "-", omittingEmptySubsequences: false)
      guard date.count == 2, date.allSatisfy({ $0.count == 2 }), let month = Int(date[0]),
        let day = Int(date[1]), (1...12).contains(month),
        (1...CivilDate.daysInMonth(year: 2000, month: month)).contains(day)
      else { throw bad(verb, "yearly: takes a month and day such as 03-14") }
      pattern = .yearly(month: month, day: day)
    } else if days.hasPrefix("every:") {
      // every:2w:tue@09:00, counted in weeks from the week of from:.
      let rest = days.dropFirst(6).split(separator: ":", maxSplits: 1)
      guard rest.count == 2, rest[0].last == "w", let weeks = Int(rest[0].dropLast()),
        (1...52).contains(weeks)
      else { throw bad(verb, "every: with days takes weeks such as every:2w:tue@09:00") }
      pattern = .weeks(every: weeks, weekdays: try weekdays(String(rest[1]), verb: verb))
      if start == nil {
        // The week it is counted from must be kept: today, in the rule's zone.
        let when = now ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let probe = Recurrence(pattern: pattern, timeZone: timeZone, zoneName: zoneName)
        start = CivilDate(daysSinceEpoch: probe.localDay(of: when))
      }
    } else {
      pattern = .weekly(weekdays: try weekdays(days, verb: verb))
    }
    return Recurrence(
      pattern: pattern, timesOfDay: times, timeZone: timeZone, zoneName: zoneName, start: start,
      end: end)
  }

  /// The most times of day one rule may have.
  public static let maximumTimesOfDay = 24

  /// `09:00` or `09:00,12:30,17:00`: ascending, at least a minute apart, also
  /// across midnight, so that no series comes more than once a minute.
  private static func timesOfDay(_ text: String, verb: Verb) throws(RequestError) -> [Int] {
    var times: [Int] = []
    for item in text.split(separator: ",", omittingEmptySubsequences: false) {
      times.append(try timeOfDay(String(item), verb: verb))
    }
    times = Array(Set(times)).sorted()
    guard times.count <= maximumTimesOfDay else {
      throw bad(verb, "a rule takes at most \(maximumTimesOfDay) times of day")
    }
    if times.count > 1, let first = times.first,
      zip(times, times.dropFirst() + [first + 86_400]).contains(where: { $1 - $0 < 60 })
    {
      throw bad(verb, "times of day must be at least a minute apart")
    }
    return times
  }

  /// `31`, or `last-fri`, `1st-mon` to `5th-mon`.
  private static func monthly(_ text: String, verb: Verb) throws(RequestError) -> Pattern {
    if let day = Int(text) {
      guard (1...31).contains(day) else {
        throw bad(verb, "monthly: takes a day of the month from 1 to 31")
      }
      return .monthly(day: day)
    }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    let ordinals = ["1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "last": -1]
    guard parts.count == 2, let ordinal = ordinals[String(parts[0])],
      let weekday = dayNames.firstIndex(of: String(parts[1]))
    else {
      throw bad(
        verb, "monthly: takes a day from 1 to 31 or a weekday such as 2nd-tue or last-fri")
    }
    return .monthlyWeekday(ordinal: ordinal, weekday: weekday)
  }

  /// Splits `/zone` off the end of `word`: the rest, the zone and its name.
  private static func zone(
    of word: String, defaultZone: TimeZone, defaultZoneName: String?, verb: Verb
  ) throws(RequestError) -> (String, TimeZone, String) {
    var head = word
    var timeZone = defaultZone
    var zoneName = defaultZoneName ?? defaultZone.identifier
    if let slash = head.firstIndex(of: "/") {
      let name = String(head[head.index(after: slash)...])
      // Foundation reads a zone name as a C string: a NUL would end it early
      // and the rest would be echoed back. Time zone database names use only
      // these characters.
      let isZoneName = name.utf8.allSatisfy {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || "/_+-".utf8.contains($0)
      }
      guard isZoneName, !name.isEmpty, let zone = TimeZone(identifier: name) else {
        throw bad(
          verb, "there is no time zone named \(quoted(name)); use a name such as Europe/Berlin")
      }
      timeZone = zone
      zoneName = name
      head = String(head[..<slash])
    } else if TimeZone(identifier: zoneName) == nil {
      // The rule is kept by name; a zone without one could not be read back.
      throw bad(verb, "the broker's time zone has no name; add one such as /Europe/Berlin")
    }
    return (head, timeZone, zoneName)
  }

  private static let utc = TimeZone(identifier: "UTC")!

  /// `LIMIT`: finding the rule's next occurrence takes libical more work
  /// than one request may do (chatbroker(7), "Series" and Limits).
  public static func overBudget(_ verb: Verb, rule: String, budget: RecurrenceBudget)
    -> RequestError
  {
    RequestError(
      verb: verb.rawValue, code: .limit,
      text:
        "\(rule.utf8.count <= 40 ? quoted(rule) : "this rule") needs more than the \(budget.limit) steps of expansion a request may "
        + "take to find its next occurrence: its filters let through few of the times its FREQ "
        + "steps through; use a coarser FREQ with BY lists, such as "
        + "FREQ=YEARLY;BYMONTH=11;BYMONTHDAY=1;BYHOUR=9 rather than FREQ=HOURLY;BYMONTH=11;"
        + "BYMONTHDAY=1;BYHOUR=9")
  }

  static func bad(_ verb: Verb, _ detail: String) -> RequestError {
    RequestError(
      verb: verb.rawValue, code: .badTime,
      text:
        "\(detail); a rule is daily@09:00, weekdays@09:00/Europe/Berlin, mon,wed@18:00, "
        + "monthly:31@09:00, monthly:last-fri@17:00, yearly:03-14@09:00, every:2w:tue@09:00 "
        + "or every:15m, optionally with ,from:2026-12-07 and ,until:2027-03-01 or ,count:10, "
        + "or rrule:FREQ=WEEKLY;BYDAY=TU;BYHOUR=9 (RFC 5545)")
  }

  /// `until:YYYY-MM-DD` or `count:N`, nil for any other part.
  private static func parseEnd(_ part: String, verb: Verb) throws(RequestError) -> End? {
    let lower = part.lowercased()
    if lower.hasPrefix("count:") {
      guard let count = Int(lower.dropFirst(6)), (1...maximumCount).contains(count) else {
        throw bad(verb, "count: takes a number of occurrences from 1 to \(maximumCount)")
      }
      return .count(count)
    }
    guard lower.hasPrefix("until:") else { return nil }
    let fields = lower.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
    guard fields.count == 3, fields[0].count == 4, fields[1].count == 2, fields[2].count == 2,
      let year = Int(fields[0]), let month = Int(fields[1]), let day = Int(fields[2]),
      (1...12).contains(month), (1...CivilDate.daysInMonth(year: year, month: month)).contains(day)
    else { throw bad(verb, "until: takes a date such as 2027-03-01") }
    return .until(year: year, month: month, day: day)
  }

  /// `15m`, `2h`, `1h30m`, `1d`: at least one minute.
  private static func interval(_ text: String, verb: Verb) throws(RequestError) -> Int64 {
    let units: [(Character, Int64)] = [
      ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000),
    ]
    var next = 0
    var number: Int64?
    var total: Int64 = 0
    for character in text {
      if let digit = character.wholeNumberValue, character.isASCII {
        number = min((number ?? 0) * 10 + Int64(digit), 1_000_000_000)
        continue
      }
      guard let amount = number, let unit = units[next...].firstIndex(where: { $0.0 == character })
      else { throw bad(verb, "every: takes an interval such as 15m, 2h or 1h30m") }
      total = min(total + amount * units[unit].1, Int64(1) << 50)
      next = unit + 1
      number = nil
    }
    guard number == nil, next > 0 else {
      throw bad(verb, "every: takes an interval such as 15m, 2h or 1h30m")
    }
    guard total >= 60_000 else { throw bad(verb, "the interval must be at least 1m") }
    return total
  }

  /// `9:00`, `09:00` or `09:00:30`.
  private static func timeOfDay(_ text: String, verb: Verb) throws(RequestError) -> Int {
    let fields = text.split(separator: ":", omittingEmptySubsequences: false)
    guard (2...3).contains(fields.count), (1...2).contains(fields[0].count),
      fields.dropFirst().allSatisfy({ $0.count == 2 }),
      fields.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      let hour = Int(fields[0]), let minute = Int(fields[1]), hour < 24, minute < 60
    else { throw bad(verb, "\(quoted(text)) is not a time of day such as 09:00") }
    let second = fields.count == 3 ? Int(fields[2]) ?? 60 : 0
    guard second < 60 else { throw bad(verb, "\(quoted(text)) is not a time of day such as 09:00") }
    return hour * 3600 + minute * 60 + second
  }

  /// `daily`, `weekdays`, `weekends`, or days and ranges: `mon,wed`, `mon-fri`.
  private static func weekdays(_ text: String, verb: Verb) throws(RequestError) -> UInt8 {
    switch text {
    case "daily": return allWeekdays
    case "weekdays": return workdays
    case "weekends": return weekend
    default: break
    }
    var mask: UInt8 = 0
    for item in text.split(separator: ",", omittingEmptySubsequences: false) {
      let range = item.split(separator: "-", omittingEmptySubsequences: false)
      let indices = range.map { dayNames.firstIndex(of: String($0)) }
      guard (1...2).contains(range.count), let first = indices.first ?? nil,
        let last = indices.last ?? nil
      else {
        throw bad(
          verb, "\(quoted(String(item))) is not a day: use daily, weekdays, weekends or mon to sun")
      }
      var day = first
      while true {
        mask |= 1 << day
        if day == last { break }
        day = (day + 1) % 7
      }
    }
    return mask
  }
}

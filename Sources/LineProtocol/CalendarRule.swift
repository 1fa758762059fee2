import CICal
import Foundation

/// An RFC 5545 recurrence rule (`rrule:FREQ=WEEKLY;BYDAY=TU;BYHOUR=9`,
/// chatbroker(7) "Series"), expanded by libical in local wall time.
///
/// libical gets only the RRULE's own parts, and floating times; this type
/// keeps what RFC 5545 puts beside the rule (DTSTART, EXDATE) and UNTIL,
/// which libical would compare as if local times were UTC, and maps each
/// local time to an instant through ``Recurrence``'s zone, as every rule form
/// does.
public struct CalendarRule: Equatable, Sendable {
  /// The RRULE parts libical reads, in libical's canonical spelling.
  public var rule: String
  /// DTSTART as a local time, seconds since 1970-01-01T00:00 local.
  public var start: Int64
  /// UNTIL as the user wrote it (a local date, a local time or a UTC time),
  /// and the last instant it allows.
  public var untilText: String?
  public var until: Timestamp?
  /// EXDATE: local times (seconds as for ``start``) and local dates (days
  /// since 1970-01-01) that have no occurrence.
  public var exceptTimes: [Int64]
  public var exceptDays: [Int64]
  /// COUNT, which libical counts from DTSTART.
  public var count: Int?
  /// The parts of `rule`, for what expanding it costs.
  let shape: RuleShape
  /// What expanding the rule taught (see ``ExpansionFacts``).
  let facts: ExpansionFacts

  /// The most a COUNT may be; its occurrences must also be found within
  /// one budget (``RecurrenceBudget``), from DTSTART, since libical counts
  /// them from there.
  public static let maximumCount = 10_000

  /// `FREQ=...;...` with optional `DTSTART=`, `UNTIL=` and `EXDATE=` parts.
  /// `now` fills in a missing DTSTART: the local midnight that begins its
  /// day. `zone` maps local seconds to the instant the clock shows them,
  /// `local` an instant to the local seconds it shows.
  ///
  /// With a `budget` the rule is checked the way libical would expand it,
  /// within that budget; without one (a rule the journal kept) it is only
  /// read: libical is not called at all.
  static func parse(
    _ body: String, zone: (Int64) -> Timestamp, local: (Timestamp) -> Int64, now: Timestamp,
    verb: Verb, budget: RecurrenceBudget?
  ) throws(RequestError) -> CalendarRule {
    guard
      body.utf8.allSatisfy({
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
          || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "=;,+-".utf8.contains($0)
      }), !body.isEmpty
    else { throw bad(verb, "an rrule: takes parts such as FREQ=WEEKLY;BYDAY=TU;BYHOUR=9") }
    var kept: [String] = []
    var start: Int64?
    var untilText: String?
    var until: Timestamp?
    var exceptTimes: [Int64] = []
    var exceptDays: [Int64] = []
    for part in body.uppercased().split(separator: ";", omittingEmptySubsequences: false) {
      let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let (name, value) = (String(pair[0]), pair.count == 2 ? String(pair[1]) : "")
      switch name {
      case "DTSTART":
        guard start == nil, let read = localTime(value, local: local) else {
          throw bad(verb, "DTSTART takes one date and time such as 20261201T090000")
        }
        start = read.seconds
      case "UNTIL":
        guard untilText == nil, let read = localTime(value, local: local) else {
          throw bad(verb, "UNTIL takes one date such as 20270301 or 20270301T090000")
        }
        untilText = value
        // A date alone is the last local date with an occurrence.
        until =
          read.isDate
          ? Timestamp(milliseconds: zone(read.seconds + 86_400).milliseconds - 1)
          : read.instant ?? zone(read.seconds)
      case "EXDATE":
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
          guard let read = localTime(String(item), local: local), read.instant == nil else {
            throw bad(verb, "EXDATE takes local dates and times such as 20261224T090000")
          }
          if read.isDate {
            exceptDays.append(read.seconds / 86_400)
          } else {
            exceptTimes.append(read.seconds)
          }
        }
      case "RSCALE", "SKIP":
        throw bad(verb, "\(name) is not supported; the Gregorian calendar is the only one")
      // libical 3.0 counts weeks from the end of the year wrongly, and
      // BYWEEKNO=-53 with FREQ=YEARLY makes it read out of bounds and
      // crash: a request's weeks count from the start of the year only. A
      // journal's rule (read without a budget) is read as it was stored;
      // none with -53 can be there, as asking for one crashed the broker.
      case "BYWEEKNO" where value.contains("-") && budget != nil:
        throw bad(
          verb, "BYWEEKNO takes weeks from the start of the year, 1 to 53, not from its end")
      // libical 3.0 goes through a time of day's lists in the order given
      // (`next_unit` in icalrecur.c): BYHOUR=17,9 came at 17:00 before
      // 09:00, and at 17:00 the day before. In order, once each.
      case "BYHOUR", "BYMINUTE", "BYSECOND":
        let numbers = value.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard numbers.allSatisfy({ $0 != nil }) else {
          kept.append(String(part))
          break
        }
        let ordered = Set(numbers.map { $0! }).sorted()
        kept.append(name + "=" + ordered.map(String.init).joined(separator: ","))
      default:
        kept.append(String(part))
      }
    }
    // libical spends most of a second before it finds that such a rule has
    // no occurrence at all; the broker's one queue cannot wait that long.
    if Self.namesNoDay(kept) {
      throw bad(verb, "\(quoted(kept.joined(separator: ";"))) has no occurrences")
    }
    // And BYWEEKNO without BYDAY: libical 3.0 walks for 100 ms and more
    // (a debug broker, chatfuzz's real-time run) and then finds none, so
    // a request names the days of those weeks.
    if budget != nil, kept.contains(where: { $0.hasPrefix("BYWEEKNO=") }),
      !kept.contains(where: { $0.hasPrefix("BYDAY=") })
    {
      throw bad(verb, "BYWEEKNO needs BYDAY, the days of those weeks: BYWEEKNO=20;BYDAY=MO")
    }
    var facts = chat_rrule_facts()
    var buffer = [CChar](repeating: 0, count: 2048)
    let text = kept.joined(separator: ";")
    guard chat_rrule_read(text, &buffer, buffer.count, &facts) == 0 else {
      throw bad(verb, "\(quoted(text)) is not an RFC 5545 recurrence rule")
    }
    // A series may fire at most once a minute (chatbroker(7), "Series").
    guard facts.frequency != Int32(ICAL_SECONDLY_RECURRENCE.rawValue), facts.bySeconds <= 1 else {
      throw bad(verb, "a series may come at most once a minute: no FREQ=SECONDLY or BYSECOND list")
    }
    guard facts.count <= maximumCount else {
      throw bad(verb, "COUNT takes a number of occurrences from 1 to \(maximumCount)")
    }
    // RFC 5545: "The UNTIL or COUNT rule parts are OPTIONAL, but they MUST
    // NOT occur in the same 'recur'."
    guard facts.count == 0 || untilText == nil else {
      throw bad(verb, "a rule ends by COUNT or by UNTIL, not both (RFC 5545)")
    }
    let day = Timestamp.floorDivide(local(now), 86_400).0
    let canonical = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let shape = RuleShape(canonical) else {
      throw bad(verb, "\(quoted(text)) is not an RFC 5545 recurrence rule")
    }
    let rule = CalendarRule(
      rule: canonical, start: start ?? day * 86_400, untilText: untilText, until: until,
      exceptTimes: exceptTimes.sorted(), exceptDays: exceptDays.sorted(),
      count: facts.count > 0 ? Int(facts.count) : nil, shape: shape, facts: ExpansionFacts())
    guard let budget else { return rule }
    // libical 3.0 steps through a MINUTELY rule's BYMINUTE every hour, or
    // an HOURLY rule's BYHOUR every day, and never looks at the INTERVAL
    // (`next_unit` in icalrecur.c): it would come at times the rule does
    // not have, and step through far more than the budget counts.
    if shape.interval > 1, let part = shape.ownUnitList {
      throw bad(
        verb,
        "INTERVAL does not go with \(part) in a FREQ=\(shape.frequencyName) rule;"
          + " FREQ=\(part == "BYMINUTE" ? "HOURLY;BYMINUTE=0,30" : "DAILY;BYHOUR=9,17")"
          + " names the times of each \(part == "BYMINUTE" ? "hour" : "day")")
    }
    // What libical would lay out without finding a day, and where a COUNT
    // ends: both known before the first occurrence is sought.
    let hasDays: Bool
    do throws(RecurrenceBudget.Exceeded) {
      hasDays = try rule.hasDays(budget: budget)
    } catch {
      throw Recurrence.overBudget(verb, rule: "rrule:" + text, budget: budget)
    }
    guard hasDays else { throw bad(verb, "\(quoted(text)) has no occurrences") }
    return rule
  }

  /// Whether BYMONTH and BYMONTHDAY together name no day of any year, such
  /// as 31 February.
  static func namesNoDay(_ parts: [String]) -> Bool {
    func numbers(_ name: String) -> [Int]? {
      guard let part = parts.first(where: { $0.hasPrefix(name + "=") }) else { return nil }
      return part.dropFirst(name.count + 1).split(separator: ",").compactMap { Int($0) }
    }
    guard let months = numbers("BYMONTH"), let days = numbers("BYMONTHDAY"), !months.isEmpty,
      !days.isEmpty
    else { return false }
    return months.allSatisfy { month in
      let length = (1...12).contains(month) ? CivilDate.daysInMonth(year: 2000, month: month) : 0
      return days.allSatisfy { abs($0) > length || $0 == 0 }
    }
  }

  /// The canonical spelling: libical's rule, then DTSTART, UNTIL and EXDATE.
  var description: String {
    var text = "rrule:" + rule + ";DTSTART=" + Self.spell(start)
    if let untilText { text += ";UNTIL=" + untilText }
    let exceptions =
      (exceptTimes.map { (Self.spell($0), $0) }
      + exceptDays.map { (Self.spellDate($0), $0 * 86_400) })
      .sorted { $0.1 < $1.1 }.map(\.0)
    if !exceptions.isEmpty { text += ";EXDATE=" + exceptions.joined(separator: ",") }
    return text
  }

  /// The first occurrence after `instant`; `zone` maps local seconds to the
  /// instant the clock shows them, `local` the other way. Throws when the
  /// budget runs out before it is found.
  func next(
    after instant: Timestamp, zone: (Int64) -> Timestamp, local: (Timestamp) -> Int64,
    budget: RecurrenceBudget
  ) throws(RecurrenceBudget.Exceeded) -> Timestamp? {
    // The earliest local time that can come after `instant`: the clock
    // reading then, less the hour (or day) a change of offset within two
    // days may take back.
    let day = Timestamp(milliseconds: 86_400_000)
    let from =
      min(
        local(instant), local(instant + day.milliseconds) - 86_400,
        local(instant + 2 * day.milliseconds) - 2 * 86_400) - 60
    // Past UNTIL (and a day for any change of offset) nothing can come.
    let end = until.map { local($0) + 86_400 } ?? Self.lastLocalTime
    var found: Timestamp?
    _ = try walk(from: from, end: end, budget: budget) { localTime in
      if exceptTimes.contains(localTime)
        || exceptDays.contains(Timestamp.floorDivide(localTime, 86_400).0)
      {
        return false
      }
      let time = zone(localTime)
      if let until, time > until { return true }
      if time > instant {
        found = time
        return true
      }
      return false
    }
    return found
  }

  /// libical keeps state per process (its error number), so calls take turns;
  /// the facts learned by expanding a rule are kept under the same lock.
  static let lock = NSLock()

  static func fields(_ seconds: Int64) -> [Int32] {
    let (day, time) = Timestamp.floorDivide(seconds, 86_400)
    let date = CivilDate(daysSinceEpoch: day)
    return [
      Int32(date.year), Int32(date.month), Int32(date.day), Int32(time / 3600),
      Int32(time / 60 % 60), Int32(time % 60),
    ]
  }

  /// `YYYYMMDD`, `YYYYMMDDTHHMMSS` (local) or `YYYYMMDDTHHMMSSZ` (UTC, also
  /// given as `instant`), as local seconds.
  private static func localTime(_ text: String, local: (Timestamp) -> Int64)
    -> (seconds: Int64, isDate: Bool, instant: Timestamp?)?
  {
    let bytes = Array(text.utf8)
    func number(_ range: Range<Int>) -> Int? {
      guard range.upperBound <= bytes.count else { return nil }
      var value = 0
      for byte in bytes[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard [8, 15, 16].contains(bytes.count), let year = number(0..<4), let month = number(4..<6),
      let day = number(6..<8), (1...9999).contains(year), (1...12).contains(month),
      (1...CivilDate.daysInMonth(year: year, month: month)).contains(day)
    else { return nil }
    let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
    if bytes.count == 8 { return (days * 86_400, true, nil) }
    guard bytes[8] == UInt8(ascii: "T"), let hour = number(9..<11), let minute = number(11..<13),
      let second = number(13..<15), hour < 24, minute < 60, second < 60
    else { return nil }
    let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    if bytes.count == 15 { return (seconds, false, nil) }
    guard bytes[15] == UInt8(ascii: "Z") else { return nil }
    let instant = Timestamp(milliseconds: seconds * 1000)
    return (local(instant), false, instant)
  }

  static func spell(_ seconds: Int64) -> String {
    let (day, time) = Timestamp.floorDivide(seconds, 86_400)
    return spellDate(day) + "T" + digits(Int(time / 3600), 2) + digits(Int(time / 60 % 60), 2)
      + digits(Int(time % 60), 2)
  }

  private static func spellDate(_ day: Int64) -> String {
    let date = CivilDate(daysSinceEpoch: day)
    return digits(date.year, 4) + digits(date.month, 2) + digits(date.day, 2)
  }

  private static func digits(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }

  private static func bad(_ verb: Verb, _ detail: String) -> RequestError {
    Recurrence.bad(verb, detail)
  }
}

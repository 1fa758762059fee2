import Foundation

/// systemd's calendar expressions (`OnCalendar=`, systemd.time(7)) as a rule
/// form: `Mon..Fri *-*-* 09:00`, `*-*-* *:00/15`, `*-*~01 17:00 Europe/Berlin`
/// (chatbroker(7), "Series"). Each is read into the RFC 5545 rule it means
/// (`FREQ=DAILY`, or `MONTHLY` with days of the month, filtered by weekday,
/// month and day, at the listed times),
/// which is how the broker shows and keeps it: one word, whatever the form.
extension Recurrence {
  private static let longDayNames = [
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
  ]
  private static let icalDays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

  /// Whether `word` begins a calendar expression: a weekday list, a date
  /// with `*` or ranges, or a time with `*`, `..`, `,` or `/` (a plain
  /// `09:00` stays a `<when>`).
  public static func startsCalendarExpression(_ word: String) -> Bool {
    weekdays(inExpression: word) != nil || isDateSpec(word)
      || (isTimeSpec(word) && word.contains(where: { "*.,/".contains($0) }))
  }

  /// Whether `word` may continue a calendar expression: a date, a time, or
  /// the zone last.
  public static func continuesCalendarExpression(_ word: String) -> Bool {
    isDateSpec(word) || isTimeSpec(word)
      || (word.contains("/") || word == "UTC") && isZoneName(word)
  }

  private static func isZoneName(_ word: String) -> Bool {
    word.utf8.allSatisfy {
      (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
        || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "/_+-".utf8.contains($0)
    } && TimeZone(identifier: word) != nil
  }

  private static func isDateSpec(_ word: String) -> Bool {
    word.contains(where: { $0 == "-" || $0 == "~" }) && word.first != "-"
      && word.allSatisfy({ "0123456789*-~.,/".contains($0) })
  }

  private static func isTimeSpec(_ word: String) -> Bool {
    word.contains(":") && word.first != ":" && word.allSatisfy({ "0123456789*:.,/".contains($0) })
  }

  /// `Mon..Fri`, `Sat,Sun`, `monday`: the days as a mask, or nil.
  private static func weekdays(inExpression word: String) -> UInt8? {
    var mask: UInt8 = 0
    for item in word.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
      let ends = item.components(separatedBy: "..")
      let days = ends.map { name in
        dayNames.firstIndex(of: name) ?? longDayNames.firstIndex(of: name)
      }
      guard (1...2).contains(ends.count), let first = days.first ?? nil, let last = days.last ?? nil
      else { return nil }
      var day = first
      while true {
        mask |= 1 << day
        if day == last { break }
        day = (day + 1) % 7
      }
    }
    return mask == 0 ? nil : mask
  }

  /// The RFC 5545 rule parts and the zone name (if the expression ends
  /// with one) that `expression` means.
  static func calendarExpression(_ expression: String, verb: Verb) throws(RequestError) -> (
    String, String?
  ) {
    var words = expression.split(separator: " ").map(String.init)
    var zone: String?
    if let last = words.last, !isDateSpec(last), !isTimeSpec(last),
      weekdays(inExpression: last) == nil
    {
      zone = last
      words.removeLast()
    }
    var parts = ["FREQ=DAILY"]
    var index = 0
    if index < words.count, let mask = weekdays(inExpression: words[index]) {
      parts.append(
        "BYDAY="
          + (0..<7).filter { mask & (1 << $0) != 0 }.map { icalDays[$0] }
          .joined(separator: ","))
      index += 1
    }
    if index < words.count, isDateSpec(words[index]) {
      parts += try date(words[index], verb: verb)
      index += 1
    }
    var time = "00:00:00"
    if index < words.count, isTimeSpec(words[index]) {
      time = words[index]
      index += 1
    }
    guard index == words.count, index > 0 else {
      throw bad(
        verb,
        "\(quoted(expression)) is not a calendar expression such as Mon..Fri *-*-* 09:00 "
          + "or *-*-* *:00/15")
    }
    let fields = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    guard (2...3).contains(fields.count) else {
      throw bad(verb, "\(quoted(time)) is not a time such as 09:00 or *:00/15")
    }
    parts.append("BYHOUR=" + (try values(fields[0], 0...23, verb: verb)).joined(separator: ","))
    parts.append("BYMINUTE=" + (try values(fields[1], 0...59, verb: verb)).joined(separator: ","))
    let seconds = try values(fields.count == 3 ? fields[2] : "0", 0...59, verb: verb)
    guard seconds.count == 1 else {
      throw bad(verb, "a series may come at most once a minute: give one second, such as :00")
    }
    parts.append("BYSECOND=" + seconds[0])
    // libical filters a DAILY rule by month days counted forward only; a
    // MONTHLY one with the same parts is the same set and takes ~01 too.
    if parts.contains(where: { $0.hasPrefix("BYMONTHDAY=") }) { parts[0] = "FREQ=MONTHLY" }
    return (parts.joined(separator: ";"), zone)
  }

  /// `*-*-*`, `*-12-24`, `*-*~01` (the last day), `*-02,08-01..07`: the
  /// BYMONTH and BYMONTHDAY parts. A year must be `*`.
  private static func date(_ word: String, verb: Verb) throws(RequestError) -> [String] {
    var text = word
    var fromEnd = false
    if let tilde = text.lastIndex(of: "~") {
      fromEnd = true
      text.replaceSubrange(tilde...tilde, with: "-")
    }
    let fields = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
    guard (2...3).contains(fields.count) else {
      throw bad(verb, "\(quoted(word)) is not a date such as *-*-* or *-12-24")
    }
    if fields.count == 3, fields[0] != "*" {
      throw bad(verb, "a calendar expression's year must be *; end a series with ,until:")
    }
    var parts: [String] = []
    let month = fields[fields.count - 2]
    let day = fields[fields.count - 1]
    if month != "*" {
      parts.append("BYMONTH=" + (try values(month, 1...12, verb: verb)).joined(separator: ","))
    }
    if day != "*" {
      let days = try values(day, 1...31, verb: verb)
      parts.append("BYMONTHDAY=" + days.map { fromEnd ? "-" + $0 : $0 }.joined(separator: ","))
    }
    return parts
  }

  /// `*`, `5`, `1,15`, `9..17`, `*/15` or `00/15` (from 0 every 15): the
  /// values in `range`, ascending.
  private static func values(_ field: String, _ range: ClosedRange<Int>, verb: Verb)
    throws(RequestError) -> [String]
  {
    var found = Set<Int>()
    for item in field.split(separator: ",", omittingEmptySubsequences: false) {
      let step = item.split(separator: "/", omittingEmptySubsequences: false)
      guard (1...2).contains(step.count) else { throw badValue(field, verb) }
      let every = step.count == 2 ? Int(step[1]) : 1
      guard let every, every > 0 else { throw badValue(field, verb) }
      var low = range.lowerBound
      var high = range.upperBound
      if step[0] != "*" {
        let ends = step[0].components(separatedBy: "..")
        guard (1...2).contains(ends.count), let first = Int(ends[0]), let last = Int(ends.last!),
          range.contains(first), range.contains(last), first <= last
        else { throw badValue(field, verb) }
        low = first
        high = ends.count == 2 || step.count == 2 ? last : first
        if ends.count == 1 && step.count == 2 { high = range.upperBound }
      }
      found.formUnion(stride(from: low, through: high, by: every))
    }
    return found.sorted().map(String.init)
  }

  private static func badValue(_ field: String, _ verb: Verb) -> RequestError {
    bad(verb, "\(quoted(field)) is not a value, a list, a range a..b or a repetition a/b")
  }
}

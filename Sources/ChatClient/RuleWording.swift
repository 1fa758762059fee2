/// A series' rule said in words, as chatsh(1) and chatbroker(7) write them
/// ("weekdays at 09:00"): the broker answers `SAYEVERY` with the rule it
/// stores, and a calendar expression comes back as a long `rrule:` that
/// would break the `/scheduled` table.
public enum RuleWording {
  /// Words for `rule`, or nil when it has no plain wording.
  public static func words(_ rule: String) -> String? {
    var body = rule
    var zone = ""
    if let slash = body.firstIndex(of: "/") {
      zone = " (" + body[body.index(after: slash)...] + ")"
      body = String(body[..<slash])
    }
    var parts = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    var tail = ""
    while let last = parts.last, last.hasPrefix("until:") || last.hasPrefix("count:") {
      parts.removeLast()
      let value = last.dropFirst(6)
      tail = (last.hasPrefix("until:") ? ", until \(value)" : ", \(value) times") + tail
    }
    let head = parts.joined(separator: ",")
    guard let said = head.hasPrefix("rrule:") ? rruleWords(head) : shortWords(head) else {
      return nil
    }
    return said + zone + tail
  }

  /// The rule in words, or raw and cut to `width` columns with an ellipsis.
  public static func display(_ rule: String, width: Int) -> String {
    if let said = words(rule) { return said }
    guard TextWidth.of(rule) > width, width > 1 else { return rule }
    return String(rule.prefix(width - 1)) + "…"
  }

  private static let dayNames = [
    "mon": "Mon", "tue": "Tue", "wed": "Wed", "thu": "Thu", "fri": "Fri", "sat": "Sat",
    "sun": "Sun",
  ]
  private static let rruleDays = [
    "MO": "mon", "TU": "tue", "WE": "wed", "TH": "thu", "FR": "fri", "SA": "sat", "SU": "sun",
  ]

  /// `daily@09:00`, `weekdays@09:00`, `mon,wed@18:00`, `every:15m`.
  private static func shortWords(_ rule: String) -> String? {
    if rule.hasPrefix("every:") {
      let span = rule.dropFirst(6)
      guard let unit = span.last, let count = Int(span.dropLast()), count > 0 else { return nil }
      let names: [Character: String] = ["m": "minute", "h": "hour", "d": "day", "w": "week"]
      guard let name = names[unit] else { return nil }
      return count == 1 ? "every \(name)" : "every \(count) \(name)s"
    }
    let halves = rule.split(separator: "@", omittingEmptySubsequences: false)
    guard halves.count == 2, isClock(halves[1]) else { return nil }
    let at = " at \(halves[1])"
    switch halves[0] {
    case "daily", "weekdays", "weekends": return halves[0] + at
    default:
      let days = halves[0].split(separator: ",").map { dayNames[String($0)] }
      guard !days.isEmpty, !days.contains(nil) else { return nil }
      return days.compactMap { $0 }.joined(separator: ", ") + at
    }
  }

  /// The `rrule:` a calendar expression becomes: a daily or weekly rule at
  /// one time of day, on all days or on some week days; nil for any other.
  private static func rruleWords(_ rule: String) -> String? {
    var fields: [String: String] = [:]
    for part in rule.dropFirst(6).split(separator: ";") {
      let pair = part.split(separator: "=", maxSplits: 1)
      guard pair.count == 2 else { return nil }
      fields[pair[0].uppercased()] = String(pair[1])
    }
    guard let freq = fields.removeValue(forKey: "FREQ")?.uppercased(),
      freq == "DAILY" || freq == "WEEKLY",
      let hour = fields.removeValue(forKey: "BYHOUR").flatMap({ Int($0) }), (0..<24) ~= hour
    else { return nil }
    let minute = fields.removeValue(forKey: "BYMINUTE").map { Int($0) } ?? 0
    guard let minute, (0..<60) ~= minute else { return nil }
    if let second = fields.removeValue(forKey: "BYSECOND"), second != "0" { return nil }
    fields.removeValue(forKey: "DTSTART")
    let byDay = fields.removeValue(forKey: "BYDAY")
    guard fields.isEmpty else { return nil }
    let clock = (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    guard let byDay else { return freq == "DAILY" ? shortWords("daily@" + clock) : nil }
    let days = byDay.uppercased().split(separator: ",").map { rruleDays[String($0)] }
    guard !days.isEmpty, !days.contains(nil) else { return nil }
    let set = days.compactMap { $0 }
    let short: String
    switch Set(set) {
    case ["mon", "tue", "wed", "thu", "fri"]: short = "weekdays"
    case ["sat", "sun"]: short = "weekends"
    case Set(rruleDays.values): short = "daily"
    default: short = set.joined(separator: ",")
    }
    return shortWords(short + "@" + clock)
  }

  private static func isClock(_ text: Substring) -> Bool {
    let parts = text.split(separator: ":")
    return text.count == 5 && parts.count == 2 && parts.allSatisfy { $0.allSatisfy(\.isNumber) }
  }
}

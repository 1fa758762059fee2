/// The `<rule>` of `SAYEVERY` and `RESCHEDULE` in every grammar
/// chatbroker(7) ("Series") has for it, valid and nearly: the short forms
/// (`daily@09:00`, `monthly:last-fri@17:00`, `every:2w:tue@09:00`,
/// `every:15m` with `/zone`, `,from:`, `,until:`, `,count:`), RFC 5545
/// rules with every part (`rrule:FREQ=...;BYSETPOS=...;WKST=...` with
/// `DTSTART`, `UNTIL`, `EXDATE`), and systemd's calendar expressions
/// (`Mon..Fri *-*-* 09:00`). Rules whose filters seldom or never match
/// are drawn often: they are what makes a broker expand a rule for long.
enum RuleGenerator {
  /// One rule; a calendar expression has spaces, so `oneWord` leaves them
  /// out (IRC's `sched|bot every` reads one word).
  static func rule(using random: inout SplitMix64, oneWord: Bool = false) -> String {
    switch Int.random(in: 0..<10, using: &random) {
    case 0..<3: return short(using: &random)
    case 3..<8: return rrule(using: &random)
    default:
      return oneWord ? rrule(using: &random) : calendarExpression(using: &random)
    }
  }

  // MARK: - Short forms

  static func short(using random: inout SplitMix64) -> String {
    let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    var rule: String
    switch Int.random(in: 0..<8, using: &random) {
    case 0: rule = random.pick(["daily", "weekdays", "weekends", "Daily"]) + "@" + times(&random)
    case 1:
      rule =
        random.pick(days) + random.pick(["", ",\(random.pick(days))", "-\(random.pick(days))"])
        + "@" + times(&random)
    case 2: rule = "monthly:\(random.pick(["1", "15", "28", "29", "30", "31", "0", "32"]))@09:00"
    case 3:
      rule =
        "monthly:\(random.pick(["1st", "2nd", "3rd", "4th", "5th", "last", "6th"]))-"
        + "\(random.pick(days))@\(times(&random))"
    case 4: rule = "yearly:\(random.pick(["03-14", "02-29", "12-31", "13-01", "02-30"]))@09:00"
    case 5:
      rule = "every:\(random.pick(["1", "2", "3", "52", "53", "0"]))w:\(random.pick(days))@09:00"
    case 6:
      rule =
        "every:"
        + random.pick(["1m", "15m", "1h30m", "2h", "1d", "30s", "0m", "366d", "99999999999d"])
    default: rule = random.pick(["@09:00", "daily@", "daily@25:00", "every:", "monthly:@09:00"])
    }
    if random.chance(30) { rule += "/" + zone(&random) }
    if random.chance(20) {
      rule += ",from:" + random.pick(["2026-12-07", "2030-01-01", "1999-01-01"])
    }
    if random.chance(30) {
      rule += random.pick([
        ",until:2027-03-01", ",until:2026-12-05", ",until:2025-01-01", ",count:1", ",count:3",
        ",count:1000000", ",count:0", ",until:2027-02-30",
      ])
    }
    return rule
  }

  private static func times(_ random: inout SplitMix64) -> String {
    random.pick(["09:00", "9:00", "09:00,17:00", "23:59", "00:00:30", "09:00,09:00:30", "24:00"])
  }

  private static func zone(_ random: inout SplitMix64) -> String {
    random.pick(["Europe/Berlin", "America/New_York", "UTC", "Pacific/Apia", "Nowhere/Zone"])
  }

  // MARK: - RFC 5545

  /// `rrule:` with a frequency and any of the parts, each drawn from
  /// values that match often, seldom, never, or are out of range.
  static func rrule(using random: inout SplitMix64) -> String {
    var parts = [
      "FREQ="
        + random.pick([
          "MINUTELY", "MINUTELY", "HOURLY", "HOURLY", "DAILY", "DAILY", "WEEKLY", "MONTHLY",
          "MONTHLY", "YEARLY", "YEARLY", "SECONDLY",
        ])
    ]
    let draws: [(String, (inout SplitMix64) -> String)] = [
      ("INTERVAL", { random in random.pick(["1", "2", "5", "7", "12", "400", "1440", "0"]) }),
      ("BYSECOND", { random in random.pick(["0", "30", "0,30", "60"]) }),
      ("BYMINUTE", { random in list(&random, 0...59, ["0", "0,30", "*"]) }),
      ("BYHOUR", { random in list(&random, 0...23, ["9", "9,17", "24"]) }),
      ("BYDAY", { random in byDay(&random) }),
      ("BYMONTHDAY", { random in list(&random, -31...31, ["1", "-1", "13", "29", "31", "0"]) }),
      ("BYYEARDAY", { random in list(&random, -366...366, ["1", "-1", "60", "366", "-366"]) }),
      ("BYWEEKNO", { random in list(&random, -53...53, ["1", "-1", "53", "20"]) }),
      ("BYMONTH", { random in list(&random, 1...12, ["1", "2", "11", "2,8", "13"]) }),
      ("BYSETPOS", { random in list(&random, -366...366, ["1", "-1", "2", "32", "367"]) }),
      ("WKST", { random in random.pick(["MO", "SU", "TH", "XX"]) }),
      ("COUNT", { random in random.pick(["1", "3", "10", "1000", "10000", "10001", "0"]) }),
      ("UNTIL", { random in random.pick(["20270301", "20261205T090000", "20270101T000000Z"]) }),
      ("DTSTART", { random in random.pick(["20261201T090000", "20000101T000000", "25820101"]) }),
      ("EXDATE", { random in random.pick(["20261224", "20261224T090000,20261231", "2026"]) }),
    ]
    for (name, draw) in draws where random.chance(name.hasPrefix("BY") ? 30 : 15) {
      parts.append(name + "=" + draw(&random))
    }
    // The sparse rules chatbroker(7) warns of: a fine frequency filtered
    // down to a day a year, or to none.
    if random.chance(15) {
      parts.append(
        random.pick([
          "BYMONTH=11;BYMONTHDAY=1", "BYYEARDAY=1;BYMONTH=2", "BYMONTH=2;BYMONTHDAY=29",
          "BYMONTHDAY=31;BYSETPOS=2", "BYWEEKNO=53;BYDAY=MO;BYSETPOS=2", "BYDAY=1MO",
          "BYMONTHDAY=13;BYDAY=FR",
        ]))
    }
    random.shuffle(&parts, keepingFirst: random.chance(90))
    var rule = "rrule:" + parts.joined(separator: ";")
    if random.chance(20) { rule += "/" + zone(&random) }
    return rule
  }

  private static func byDay(_ random: inout SplitMix64) -> String {
    let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
    return (0..<Int.random(in: 1...4, using: &random)).map { _ in
      random.pick(["", "", "1", "2", "-1", "5", "-5", "53", "+3", "0"]) + random.pick(days)
    }.joined(separator: ",")
  }

  /// A list of 1 to 4 values of `range`, a named one, or all of it.
  private static func list(
    _ random: inout SplitMix64, _ range: ClosedRange<Int>, _ named: [String]
  ) -> String {
    switch Int.random(in: 0..<4, using: &random) {
    case 0: return random.pick(named).replacingStar(with: range)
    case 1: return range.map(String.init).joined(separator: ",")
    default:
      return (0..<Int.random(in: 1...4, using: &random)).map { _ in
        String(Int.random(in: range, using: &random))
      }.joined(separator: ",")
    }
  }

  // MARK: - Calendar expressions

  static func calendarExpression(using random: inout SplitMix64) -> String {
    var words: [String] = []
    if random.chance(50) {
      words.append(random.pick(["Mon..Fri", "Sat,Sun", "monday", "Mon", "Fri..Mon", "Tue,Thu"]))
    }
    if random.chance(70) {
      words.append(
        random.pick([
          "*-*-*", "*-12-24", "*-*~01", "*-02-29", "*-02,08-01..07", "*-11-01", "2026-*-*",
          "*-13-01", "*-*-31", "*-*-01/7",
        ]))
    }
    words.append(
      random.pick([
        "09:00", "*:00/15", "9..17:00", "*:*", "*:*:00", "00/2:30", "12:00:00", "*:00:1,2",
        "25:00",
      ]))
    if random.chance(20) { words.append(random.pick(["Europe/Berlin", "UTC"])) }
    return words.joined(separator: " ")
  }
}

extension SplitMix64 {
  /// Shuffles `parts`, leaving the first (FREQ) first when `keepingFirst`.
  fileprivate mutating func shuffle(_ parts: inout [String], keepingFirst: Bool) {
    let start = keepingFirst ? 1 : 0
    guard parts.count - start > 1 else { return }
    for index in stride(from: parts.count - 1, to: start, by: -1) {
      parts.swapAt(index, Int.random(in: start...index, using: &self))
    }
  }
}

extension String {
  /// `*` as every value of `range`, as a list.
  fileprivate func replacingStar(with range: ClosedRange<Int>) -> String {
    self == "*" ? range.map(String.init).joined(separator: ",") : self
  }
}

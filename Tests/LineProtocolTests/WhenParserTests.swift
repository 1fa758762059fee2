import Foundation
import LineProtocol
import Testing

private let utcZone = TimeZone(identifier: "UTC")!
private let berlin = TimeZone(identifier: "Europe/Berlin")!
private let newYork = TimeZone(identifier: "America/New_York")!

/// A `<when>` word asked at a pinned "now" in a pinned zone, and the instant
/// it must resolve to (written in UTC).
struct WhenCase: Sendable, CustomTestStringConvertible {
  let word: String
  let now: String
  let zone: TimeZone
  let due: String

  init(_ word: String, at now: String, in zone: TimeZone = utcZone, is due: String) {
    self.word = word
    self.now = now
    self.zone = zone
    self.due = due
  }

  var testDescription: String { "\(word) at \(now) in \(zone.identifier)" }
}

/// A `<when>` word that must fail with `code`.
struct BadWhen: Sendable, CustomTestStringConvertible {
  let word: String
  let now: String
  let code: ErrorCode

  init(_ word: String, _ code: ErrorCode, at now: String = "2026-11-30T17:55:00Z") {
    self.word = word
    self.code = code
    self.now = now
  }

  var testDescription: String { "\(word) -> \(code.rawValue)" }
}

private let now = "2026-11-30T17:55:00Z"

private let absoluteCases: [WhenCase] = [
  // RFC 3339: seconds and fraction optional, Z or an offset.
  WhenCase("2026-12-24T18:00:00+01:00", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-24T17:00Z", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-24T17:00:30Z", at: now, is: "2026-12-24T17:00:30Z"),
  WhenCase("2026-12-24T17:00:30.5Z", at: now, is: "2026-12-24T17:00:30.500Z"),
  WhenCase("2026-12-24T17:00:30.25Z", at: now, is: "2026-12-24T17:00:30.250Z"),
  WhenCase("2026-12-24T17:00:30.123Z", at: now, is: "2026-12-24T17:00:30.123Z"),
  WhenCase("2026-12-24T17:00:30.123999Z", at: now, is: "2026-12-24T17:00:30.123Z"),
  WhenCase("2026-12-24T17:00:30,5Z", at: now, is: "2026-12-24T17:00:30.500Z"),
  WhenCase("2026-12-24t17:00:30z", at: now, is: "2026-12-24T17:00:30Z"),
  WhenCase("2026-12-24T12:00:00-05:00", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-24T22:30+05:30", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-25T02:00+09:00", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-24T18:00:00+0100", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("2026-12-01T00:30+01:00", at: now, is: "2026-11-30T23:30:00Z"),
  WhenCase("2026-11-30T23:59:59.999-23:59", at: now, is: "2026-12-01T23:58:59.999Z"),
  WhenCase("2027-01-01T00:00Z", at: now, is: "2027-01-01T00:00:00Z"),
  WhenCase("2028-02-29T12:00Z", at: "2027-12-01T00:00:00Z", is: "2028-02-29T12:00:00Z"),
  // The local zone plays no part in absolute forms.
  WhenCase("2026-12-24T17:00Z", at: now, in: berlin, is: "2026-12-24T17:00:00Z"),
  // Unix seconds, optionally with a fraction.
  WhenCase("@1798131600", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("@1798131600.25", at: now, is: "2026-12-24T17:00:00.250Z"),
  WhenCase("@1798131600.1239", at: now, is: "2026-12-24T17:00:00.123Z"),
  WhenCase("@1798131600.", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("@01798131600", at: now, is: "2026-12-24T17:00:00Z"),
  WhenCase("@00000000000000001798131600", at: now, is: "2026-12-24T17:00:00Z"),
  // Relative: units d, h, m, s, largest first, each at most once.
  WhenCase("+90s", at: now, is: "2026-11-30T17:56:30Z"),
  WhenCase("+10m", at: now, is: "2026-11-30T18:05:00Z"),
  WhenCase("+2h", at: now, is: "2026-11-30T19:55:00Z"),
  WhenCase("+1d", at: now, is: "2026-12-01T17:55:00Z"),
  WhenCase("+1h30m", at: now, is: "2026-11-30T19:25:00Z"),
  WhenCase("+1d2h3m4s", at: now, is: "2026-12-01T19:58:04Z"),
  WhenCase("+1d4s", at: now, is: "2026-12-01T17:55:04Z"),
  WhenCase("+0h1s", at: now, is: "2026-11-30T17:55:01Z"),
  WhenCase("+120m", at: now, is: "2026-11-30T19:55:00Z"),
  WhenCase("+001m", at: now, is: "2026-11-30T17:56:00Z"),
  WhenCase("+1s", at: "2026-11-30T17:55:00.999Z", is: "2026-11-30T17:55:01.999Z"),
  // A day is 86,400 s, even across a DST change.
  WhenCase("+1d", at: "2026-03-28T12:00:00Z", in: berlin, is: "2026-03-29T12:00:00Z"),
  // The horizon: exactly 366 days ahead is allowed.
  WhenCase("+366d", at: now, is: "2027-12-01T17:55:00Z"),
  WhenCase("+365d23h59m60s", at: now, is: "2027-12-01T17:55:00Z"),
  WhenCase("2027-12-01T17:55:00.000Z", at: now, is: "2027-12-01T17:55:00Z"),
  WhenCase("2027-12-01T18:55:00+01:00", at: now, is: "2027-12-01T17:55:00Z"),
  // Just after now is the future.
  WhenCase("2026-11-30T17:55:00.001Z", at: now, is: "2026-11-30T17:55:00.001Z"),
  WhenCase("@1796061300.001", at: now, is: "2026-11-30T17:55:00.001Z"),
]

private let localCases: [WhenCase] = [
  // UTC: today if still ahead, else tomorrow.
  WhenCase("18:00", at: now, is: "2026-11-30T18:00:00Z"),
  WhenCase("17:00", at: now, is: "2026-12-01T17:00:00Z"),
  WhenCase("17:55", at: now, is: "2026-12-01T17:55:00Z"),
  WhenCase("17:55:01", at: now, is: "2026-11-30T17:55:01Z"),
  WhenCase("07:30:15", at: now, is: "2026-12-01T07:30:15Z"),
  WhenCase("7:30", at: now, is: "2026-12-01T07:30:00Z"),
  WhenCase("00:00", at: now, is: "2026-12-01T00:00:00Z"),
  WhenCase("23:59:59", at: now, is: "2026-11-30T23:59:59Z"),
  // Month and year ends.
  WhenCase("00:15", at: "2026-12-31T23:30:00Z", is: "2027-01-01T00:15:00Z"),
  WhenCase("01:00", at: "2026-02-28T23:00:00Z", is: "2026-03-01T01:00:00Z"),
  WhenCase("01:00", at: "2028-02-28T23:00:00Z", is: "2028-02-29T01:00:00Z"),
  WhenCase("01:00", at: "2026-04-30T23:00:00Z", is: "2026-05-01T01:00:00Z"),
  // Berlin, 23:30 CET on New Year's Eve (22:30Z): 00:15 is tomorrow, next year.
  WhenCase("00:15", at: "2026-12-31T22:30:00Z", in: berlin, is: "2026-12-31T23:15:00Z"),
  WhenCase("23:45", at: "2026-12-31T22:30:00Z", in: berlin, is: "2026-12-31T22:45:00Z"),
  // New York, 23:30 EST on New Year's Eve (04:30Z the next day).
  WhenCase("00:15", at: "2027-01-01T04:30:00Z", in: newYork, is: "2027-01-01T05:15:00Z"),
  WhenCase("23:45", at: "2027-01-01T04:30:00Z", in: newYork, is: "2027-01-01T04:45:00Z"),
  // Berlin springs forward on 2026-03-29 (02:00 CET becomes 03:00 CEST).
  // At 17:00 CET the day before, 18:00 is still today...
  WhenCase("18:00", at: "2026-03-28T16:00:00Z", in: berlin, is: "2026-03-28T17:00:00Z"),
  // ...and 16:00 is tomorrow, in summer time: 22 hours ahead, not 23.
  WhenCase("16:00", at: "2026-03-28T16:00:00Z", in: berlin, is: "2026-03-29T14:00:00Z"),
  // At 19:00 CET, 18:00 is 18:00 CEST tomorrow (16:00Z, not 17:00Z).
  WhenCase("18:00", at: "2026-03-28T18:00:00Z", in: berlin, is: "2026-03-29T16:00:00Z"),
  WhenCase("18:00:30", at: "2026-03-28T18:00:00Z", in: berlin, is: "2026-03-29T16:00:30Z"),
  // On the day itself, before and after the change.
  WhenCase("01:30", at: "2026-03-29T00:00:00Z", in: berlin, is: "2026-03-29T00:30:00Z"),
  WhenCase("03:30", at: "2026-03-29T00:00:00Z", in: berlin, is: "2026-03-29T01:30:00Z"),
  // Berlin falls back on 2026-10-25 (03:00 CEST becomes 02:00 CET).
  WhenCase("18:00", at: "2026-10-24T15:00:00Z", in: berlin, is: "2026-10-24T16:00:00Z"),
  WhenCase("16:00", at: "2026-10-24T15:00:00Z", in: berlin, is: "2026-10-25T15:00:00Z"),
  WhenCase("18:00", at: "2026-10-24T17:00:00Z", in: berlin, is: "2026-10-25T17:00:00Z"),
  WhenCase("03:30", at: "2026-10-24T22:00:00Z", in: berlin, is: "2026-10-25T02:30:00Z"),
  // New York springs forward on 2026-03-08 (02:00 EST becomes 03:00 EDT).
  WhenCase("18:00", at: "2026-03-07T22:00:00Z", in: newYork, is: "2026-03-07T23:00:00Z"),
  WhenCase("16:00", at: "2026-03-07T22:00:00Z", in: newYork, is: "2026-03-08T20:00:00Z"),
  WhenCase("18:00", at: "2026-03-08T00:00:00Z", in: newYork, is: "2026-03-08T22:00:00Z"),
  // New York falls back on 2026-11-01 (02:00 EDT becomes 01:00 EST).
  WhenCase("16:00", at: "2026-10-31T21:00:00Z", in: newYork, is: "2026-11-01T21:00:00Z"),
  WhenCase("18:00", at: "2026-10-31T23:00:00Z", in: newYork, is: "2026-11-01T23:00:00Z"),
]

/// Clock times that the local clock skips or shows twice on a DST day.
private let dstEdgeCases: [WhenCase] = [
  // 02:30 does not exist in Berlin on 2026-03-29: the clock next shows it
  // on 2026-03-30 (02:30 CEST = 00:30Z).
  WhenCase("02:30", at: "2026-03-28T02:00:00Z", in: berlin, is: "2026-03-30T00:30:00Z"),
  WhenCase("02:30", at: "2026-03-29T00:45:00Z", in: berlin, is: "2026-03-30T00:30:00Z"),
  // The day before, 02:30 is an ordinary time.
  WhenCase("02:30", at: "2026-03-28T00:00:00Z", in: berlin, is: "2026-03-28T01:30:00Z"),
  // 02:30 comes twice in Berlin on 2026-10-25: first in CEST (00:30Z)...
  WhenCase("02:30", at: "2026-10-24T12:00:00Z", in: berlin, is: "2026-10-25T00:30:00Z"),
  // ...and once more in CET (01:30Z), for someone asking in between.
  WhenCase("02:30", at: "2026-10-25T00:45:00Z", in: berlin, is: "2026-10-25T01:30:00Z"),
  // New York: 02:30 is skipped on 2026-03-08; 01:30 comes twice on 2026-11-01.
  WhenCase("02:30", at: "2026-03-07T08:00:00Z", in: newYork, is: "2026-03-09T06:30:00Z"),
  WhenCase("01:30", at: "2026-10-31T12:00:00Z", in: newYork, is: "2026-11-01T05:30:00Z"),
  WhenCase("01:30", at: "2026-11-01T05:45:00Z", in: newYork, is: "2026-11-01T06:30:00Z"),
]

@Test(arguments: absoluteCases + localCases + dstEdgeCases)
func resolvesWhen(_ when: WhenCase) throws {
  let due = try WhenParser.resolve(when.word, now: utc(when.now), timeZone: when.zone)
  #expect(due == utc(when.due), "got \(due)")
}

private let badWhens: [BadWhen] = [
  // RFC 3339 without a zone, or not a date and time at all.
  BadWhen("2026-12-24T18:00", .badTime),
  BadWhen("2026-12-24T18:00:00", .badTime),
  BadWhen("2026-12-24T18:00:00.5", .badTime),
  BadWhen("2026-12-24", .badTime),
  BadWhen("2026-12-24T", .badTime),
  BadWhen("2026-12-24T18Z", .badTime),
  BadWhen("2026-12-24T18:00Zjunk", .badTime),
  BadWhen("2026-12-24T18:00:00.Z", .badTime),
  BadWhen("2026-12-24T18:00+1", .badTime),
  BadWhen("2026-12-24T18:00+24:00", .badTime),
  BadWhen("2026-12-24T18:00+01:60", .badTime),
  BadWhen("2026-12-24_18:00Z", .badTime),
  BadWhen("26-12-24T18:00Z", .badTime),
  BadWhen("2026-1-24T18:00Z", .badTime),
  BadWhen("2026-13-01T00:00Z", .badTime),
  BadWhen("2026-00-01T00:00Z", .badTime),
  BadWhen("2026-12-00T00:00Z", .badTime),
  BadWhen("2026-12-32T00:00Z", .badTime),
  BadWhen("2027-02-29T00:00Z", .badTime),
  BadWhen("2026-04-31T00:00Z", .badTime),
  BadWhen("2026-12-24T24:00Z", .badTime),
  BadWhen("2026-12-24T18:60Z", .badTime),
  BadWhen("2026-12-24T18:00:60Z", .badTime),
  BadWhen("-5", .badTime),
  // Unix seconds.
  BadWhen("@", .badTime),
  BadWhen("@abc", .badTime),
  BadWhen("@-5", .past),
  BadWhen("@1.2.3", .badTime),
  BadWhen("@.5", .badTime),
  BadWhen("@17981316e2", .badTime),
  // Relative: wrong order, repeated unit, no unit, unknown unit.
  BadWhen("+30m1h", .badTime),
  BadWhen("+1s1m", .badTime),
  BadWhen("+1h1h", .badTime),
  BadWhen("+1d1d", .badTime),
  BadWhen("+90", .badTime),
  BadWhen("+1h30", .badTime),
  BadWhen("+", .badTime),
  BadWhen("+h", .badTime),
  BadWhen("+1hm", .badTime),
  BadWhen("+1w", .badTime),
  BadWhen("+1H", .badTime),
  BadWhen("+1.5h", .badTime),
  BadWhen("+-1h", .badTime),
  BadWhen("+1h 30m", .badTime),
  // Local clock times.
  BadWhen("24:00", .badTime),
  BadWhen("18:60", .badTime),
  BadWhen("18:00:60", .badTime),
  BadWhen("18:0", .badTime),
  BadWhen("18:00:0", .badTime),
  BadWhen("180:00", .badTime),
  BadWhen("1800", .badTime),
  BadWhen("18", .badTime),
  BadWhen(":30", .badTime),
  BadWhen("18:00Z", .badTime),
  BadWhen("18:00+01:00", .badTime),
  BadWhen("6pm", .badTime),
  BadWhen("tomorrow", .badTime),
  BadWhen("１８:００", .badTime),
  // Not after now.
  BadWhen("2026-11-30T17:55:00Z", .past),
  BadWhen("2026-11-30T17:54:59.999Z", .past),
  BadWhen("2026-11-30T18:55:00+01:00", .past),
  BadWhen("2020-01-01T00:00Z", .past),
  BadWhen("@1796061300", .past),
  BadWhen("@0", .past),
  BadWhen("+0s", .past),
  BadWhen("+0d0h0m0s", .past),
  // More than 366 days ahead.
  BadWhen("2027-12-01T17:55:00.001Z", .tooFar),
  BadWhen("+366d1s", .tooFar),
  BadWhen("+367d", .tooFar),
  BadWhen("+8785h", .tooFar),
  BadWhen("+99999999999999999999999d", .tooFar),
  BadWhen("+99999999999999999999999d", .tooFar, at: "1960-01-01T00:00:00Z"),
  BadWhen("+9999999999d9999999999h9999999999m9999999999s", .tooFar),
  BadWhen("@999999999999", .tooFar),
  BadWhen("@1000000000000", .tooFar),
  BadWhen("@99999999999999999999999999.5", .tooFar),
  BadWhen("9999-12-31T23:59:59.999Z", .tooFar),
]

@Test(arguments: badWhens)
func rejectsWhen(_ bad: BadWhen) {
  do {
    let due = try WhenParser.resolve(bad.word, now: utc(bad.now), timeZone: berlin)
    Issue.record("resolved to \(due)")
  } catch {
    #expect(error.code == bad.code)
    #expect(error.verb == "SAYAT")
    #expect(!error.text.isEmpty)
  }
}

@Test func horizonAndVerbCanBeChosen() throws {
  let start = utc(now)
  let day: Int64 = 86_400_000
  #expect(
    try WhenParser.resolve("+1d", now: start, timeZone: utcZone, horizonMilliseconds: day) == start
      + day)
  do {
    _ = try WhenParser.resolve(
      "+1d1s", now: start, timeZone: utcZone, horizonMilliseconds: day, verb: .say)
    Issue.record("past the horizon")
  } catch {
    #expect(error.code == .tooFar)
    #expect(error.verb == "SAY")
  }
  #expect(WhenParser.defaultHorizonMilliseconds == 366 * day)
}

@Test func zoneMissingSaysSo() {
  do {
    _ = try WhenParser.resolve("2026-12-24T18:00", now: utc(now), timeZone: utcZone)
  } catch {
    #expect(error.text.contains("zone"))
  }
}

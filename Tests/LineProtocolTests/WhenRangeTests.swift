import Foundation
import LineProtocol
import Testing

/// Every `<when>` resolves or is refused, never traps, whatever the word,
/// the clock or the horizon; an instant outside years 1 to 9999 is PAST or
/// TOOFAR, and the error quotes the word as the user sent it
/// (chatbroker(7), "Scheduled messages").
@Suite("When: range and overflow")
struct WhenRangeTests {
  private let utcZone = TimeZone(identifier: "UTC")!
  private let now = Timestamp(rfc3339: "2026-11-30T17:55:00.000Z")!

  private func refusal(
    _ word: String, now: Timestamp? = nil, horizon: Int64 = WhenParser.defaultHorizonMilliseconds,
    zone: TimeZone? = nil
  ) -> RequestError? {
    do {
      let due = try WhenParser.resolve(
        word, now: now ?? self.now, timeZone: zone ?? utcZone, horizonMilliseconds: horizon)
      Issue.record("\(word) resolved to \(due)")
      return nil
    } catch {
      return error
    }
  }

  @Test(
    "a time before year 1 is PAST, and the text quotes the word sent",
    arguments: [
      "0000-01-01T00:00+00:01", "0000-01-01T00:00Z", "0001-01-01T00:00+00:01",
      "0000-12-31T23:59:59.999+23:59", "@-62135596801", "@-99999999999999999999999",
    ])
  func beforeYearOne(word: String) throws {
    let error = try #require(refusal(word))
    #expect(error.code == .past)
    #expect(error.text.hasPrefix("\"\(word)\" is not in the future (now is "))
    #expect(!error.text.contains("-0001"))
  }

  @Test(
    "a time after year 9999 is TOOFAR, whatever the horizon, quoting the word sent",
    arguments: [
      "9999-12-31T23:59-00:01", "@253402300800", "@2733000000000", "@99999999999999999999.999",
      "+99999999999999999999d", "+9999999999d9999999999h9999999999m9999999999s",
    ])
  func afterYear9999(word: String) throws {
    for horizon in [WhenParser.defaultHorizonMilliseconds, Int64.max] {
      let error = try #require(refusal(word, horizon: horizon))
      #expect(error.code == .tooFar)
      #expect(error.text.hasPrefix("\"\(word)\" is more than "))
      // The year was once shown cut to its last four digits ("8857").
      #expect(!error.text.contains("8857"))
    }
  }

  @Test("the last instant of year 9999 can be scheduled when the horizon allows")
  func lastInstant() throws {
    let due = try WhenParser.resolve(
      "9999-12-31T23:59:59.999Z", now: now, timeZone: utcZone, horizonMilliseconds: .max)
    #expect(due == Timestamp.latest)
  }

  @Test("a negative epoch is read, and is PAST")
  func negativeEpoch() throws {
    let error = try #require(refusal("@-1"))
    #expect(error.code == .past)
    #expect(error.text.hasPrefix("\"@-1\" is 1969-12-31T23:59:59.000Z, not in the future"))
    #expect(try #require(refusal("@-")).code == .badTime)
    #expect(try #require(refusal("@--1")).code == .badTime)
  }

  @Test("PAST and TOOFAR in range name the instant the word means")
  func inRangeTexts() throws {
    let past = try #require(refusal("2026-11-30T18:00+05:00"))
    #expect(
      past.text
        == "\"2026-11-30T18:00+05:00\" is 2026-11-30T13:00:00.000Z, not in the future "
        + "(now is 2026-11-30T17:55:00.000Z); pick a later time")
    let far = try #require(refusal("+367d"))
    #expect(
      far.text
        == "\"+367d\" is 2027-12-02T17:55:00.000Z, more than 366 days ahead; pick an earlier time")
  }

  @Test("the examples in chatbroker(7) are what the broker says")
  func manPageExamples() throws {
    #expect(
      try #require(refusal("@999999999999")).text
        == "\"@999999999999\" is more than 366 days ahead; pick an earlier time")
    #expect(
      try #require(refusal("2026-11-30T18:00+01:00")).text
        == "\"2026-11-30T18:00+01:00\" is 2026-11-30T17:00:00.000Z, not in the future "
        + "(now is 2026-11-30T17:55:00.000Z); pick a later time")
  }

  @Test("BADTIME quotes the word sent, shortened when long, never a control character")
  func badTimeTexts() throws {
    #expect(try #require(refusal("25:00")).text.hasPrefix("\"25:00\" is not a time of day; use "))
    let long = "+" + String(repeating: "1", count: 100) + "x"
    let shortened = try #require(refusal(long)).text
    #expect(shortened.hasPrefix("\"+111111111111111111111111111111111111111...\" (102 characters)"))
    let escape = try #require(refusal("18:00\u{1B}[2J"))
    #expect(escape.code == .badTime)
    #expect(escape.text.hasPrefix("that time is not a time of day"))
    #expect(!containsControlCharacter(escape.text))
  }

  @Test(
    "any clock, even outside years 1 to 9999, gives an answer or an error, never a trap",
    arguments: [Int64.min, Int64.min + 1, -62_135_596_800_001, 253_402_300_800_000, Int64.max])
  func anyClock(milliseconds: Int64) {
    let clock = Timestamp(milliseconds: milliseconds)
    for word in ["+1s", "18:00", "@0", "@-1", "0001-01-01T00:00Z", "9999-12-31T23:59Z", "+9999d"] {
      for zone in ["UTC", "Europe/Berlin", "Pacific/Kiritimati"] {
        for horizon in [Int64.min, -1, 0, WhenParser.defaultHorizonMilliseconds, Int64.max] {
          do {
            let due = try WhenParser.resolve(
              word, now: clock, timeZone: TimeZone(identifier: zone)!,
              horizonMilliseconds: horizon)
            #expect(due.isInCalendarRange && due > clock, "\(word) at \(clock)")
          } catch {
            #expect([.past, .tooFar, .badTime].contains(error.code), "\(word) at \(clock)")
            #expect(!containsControlCharacter(error.text))
          }
        }
      }
    }
  }
}

@Suite("Timestamp: years 1 to 9999")
struct TimestampRangeTests {
  @Test("the first and last instants RFC 3339 can write")
  func edges() {
    #expect(Timestamp.earliest.description == "0001-01-01T00:00:00.000Z")
    #expect(Timestamp.latest.description == "9999-12-31T23:59:59.999Z")
    #expect(Timestamp(rfc3339: "0001-01-01T00:00:00.000Z") == Timestamp.earliest)
    #expect(Timestamp(rfc3339: "9999-12-31T23:59:59.999Z") == Timestamp.latest)
    #expect(!Timestamp(milliseconds: Timestamp.earliest.milliseconds - 1).isInCalendarRange)
    #expect(!Timestamp(milliseconds: Timestamp.latest.milliseconds + 1).isInCalendarRange)
  }

  @Test("year 0 is not a journal time")
  func yearZero() {
    #expect(Timestamp(rfc3339: "0000-01-01T00:00:00.000Z") == nil)
    #expect(Timestamp(rfc3339: "0000-12-31T23:59:59.999Z") == nil)
  }

  @Test(
    "formatting any instant never traps, and shows the whole year",
    arguments: [
      (Int64.min, "-292275055-05-16T16:47:04.192Z"),
      (-62_135_596_800_001, "0000-12-31T23:59:59.999Z"),
      (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
      (253_402_300_800_000, "10000-01-01T00:00:00.000Z"),
      (Int64.max, "292278994-08-17T07:12:55.807Z"),
    ])
  func anyInstant(milliseconds: Int64, text: String) {
    #expect(Timestamp(milliseconds: milliseconds).description == text)
  }
}

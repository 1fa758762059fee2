import Foundation
import LineProtocol
import TestSupport
import Testing

struct KnownInstant: Sendable, CustomTestStringConvertible {
  let milliseconds: Int64
  let text: String

  init(_ milliseconds: Int64, _ text: String) {
    self.milliseconds = milliseconds
    self.text = text
  }

  var testDescription: String { text }
}

/// Seconds from GNU `date -u -d ... +%s`, which counts in the proleptic
/// Gregorian calendar as RFC 3339 does.
private let knownInstants: [KnownInstant] = [
  KnownInstant(0, "1970-01-01T00:00:00.000Z"),
  KnownInstant(1, "1970-01-01T00:00:00.001Z"),
  KnownInstant(999, "1970-01-01T00:00:00.999Z"),
  KnownInstant(86_399_999, "1970-01-01T23:59:59.999Z"),
  KnownInstant(86_400_000, "1970-01-02T00:00:00.000Z"),
  // Before 1970.
  KnownInstant(-1, "1969-12-31T23:59:59.999Z"),
  KnownInstant(-1000, "1969-12-31T23:59:59.000Z"),
  KnownInstant(-1001, "1969-12-31T23:59:58.999Z"),
  KnownInstant(-86_400_000, "1969-12-31T00:00:00.000Z"),
  KnownInstant(-86_400_001, "1969-12-30T23:59:59.999Z"),
  KnownInstant(-14_182_940_000, "1969-07-20T20:17:40.000Z"),
  KnownInstant(-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),
  KnownInstant(-2_203_891_200_001, "1900-02-28T23:59:59.999Z"),
  KnownInstant(-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
  // Leap days.
  KnownInstant(951_782_400_000, "2000-02-29T00:00:00.000Z"),
  KnownInstant(951_868_800_000, "2000-03-01T00:00:00.000Z"),
  KnownInstant(1_709_164_800_000, "2024-02-29T00:00:00.000Z"),
  KnownInstant(1_709_210_096_789, "2024-02-29T12:34:56.789Z"),
  KnownInstant(1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
  KnownInstant(1_709_251_200_000, "2024-03-01T00:00:00.000Z"),
  // Year ends.
  KnownInstant(1_798_761_599_999, "2026-12-31T23:59:59.999Z"),
  KnownInstant(1_798_761_600_000, "2027-01-01T00:00:00.000Z"),
  KnownInstant(946_684_799_999, "1999-12-31T23:59:59.999Z"),
  KnownInstant(946_684_800_000, "2000-01-01T00:00:00.000Z"),
  KnownInstant(253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
  // The example session.
  KnownInstant(1_796_061_372_031, "2026-11-30T17:56:12.031Z"),
]

@Test(arguments: knownInstants)
func formatsKnownInstant(_ known: KnownInstant) {
  let time = Timestamp(milliseconds: known.milliseconds)
  #expect(time.description == known.text)
  var appended = Array("x".utf8)
  time.appendRFC3339(to: &appended)
  #expect(appended == Array(("x" + known.text).utf8))
}

@Test(arguments: knownInstants)
func parsesKnownInstantBack(_ known: KnownInstant) throws {
  let time = Timestamp(milliseconds: known.milliseconds)
  let parsed = try WhenParser.resolve(
    known.text, now: time + -1, timeZone: TimeZone(identifier: "UTC")!, horizonMilliseconds: .max)
  #expect(parsed == time)
}

/// Outside years 1 to 9999 nothing is shown to users, but formatting
/// never traps: year 0 still has four digits, the years beyond get as many
/// as they need, and a negative year a `-`.
@Test func formatsInstantsOutsideTheCalendarRange() {
  let yearZero = Timestamp.earliest + -1
  let yearMinusOne = Timestamp.earliest + -(366 * 86_400_000 + 1)
  #expect(yearZero.description == "0000-12-31T23:59:59.999Z")
  #expect(yearMinusOne.description == "-0001-12-31T23:59:59.999Z")
  #expect((Timestamp.latest + 1).description == "10000-01-01T00:00:00.000Z")
  var appended = Array("x".utf8)
  (Timestamp.latest + 1).appendRFC3339(to: &appended)
  #expect(appended == Array("x10000-01-01T00:00:00.000Z".utf8))
}

/// Random instants from year 1 to year 9999: format, parse, compare.
@Test(arguments: 1...8)
func roundTripsRandomInstants(seed: Int) throws {
  var generator = SeededGenerator(seed: UInt64(seed))
  let first = knownInstants.map(\.milliseconds).min()!
  let last = knownInstants.map(\.milliseconds).max()!
  for _ in 0..<2000 {
    let time = Timestamp(milliseconds: Int64.random(in: first...last, using: &generator))
    let text = time.description
    #expect(text.utf8.count == 24)
    let parsed = try WhenParser.resolve(
      text, now: time + -1, timeZone: TimeZone(identifier: "UTC")!, horizonMilliseconds: .max)
    #expect(parsed == time, "seed \(seed): \(text)")
  }
}

@Test func comparesAndAdds() {
  let time = Timestamp(milliseconds: 1000)
  #expect(time + 1 > time)
  #expect(time + -1 < time)
  #expect((time + 500).milliseconds == 1500)
  #expect([time + 2, time, time + 1].sorted() == [time, time + 1, time + 2])
  #expect(Set([time, Timestamp(milliseconds: 1000)]).count == 1)
}

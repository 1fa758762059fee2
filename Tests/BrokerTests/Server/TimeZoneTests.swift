import Broker
import Foundation
import LineProtocol
import TestSupport
import Testing

/// The broker's own zone (chatbroker(8), ENVIRONMENT, `TZ`): what
/// `SAYAT 09:00` and a rule without `/zone` are read in, and the name the
/// rule keeps.
@Suite("The broker's time zone")
struct TimeZoneTests {
  @Test(
    "TZ names the broker's zone as glibc reads it: with or without a colon, or as a path",
    arguments: [
      (":Europe/Berlin", "Europe/Berlin"), ("Europe/Berlin", "Europe/Berlin"),
      ("/usr/share/zoneinfo/Europe/Berlin", "Europe/Berlin"), ("UTC", "UTC"), (":UTC", "UTC"),
      ("", "UTC"), ("America/New_York", "America/New_York"),
    ])
  func fromTZ(_ value: String, _ name: String) throws {
    let broker = try BrokerProcess().start(environment: ["TZ": value])
    let client = try broker.connect()
    let started = try #require(client.request("SAYEVERY #a daily@09:00 :hi").last)
    #expect(started.words.count == 5 && started.words[4] == "daily@09:00/\(name)", "\(started)")
    // SAYAT 09:00 is due when that zone's clock shows 09:00.
    let zone = TimeZone(identifier: name)!
    let sent = try #require(client.request("SAYAT #a 09:00 :once").last)
    let due = try #require(Timestamp(rfc3339: String(sent.words[3])))
    let local =
      due.milliseconds / 1000
      + Int64(
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(due.milliseconds / 1000))))
    #expect(local % 86_400 == 9 * 3600, "\(sent) in \(name)")
    #expect(
      try client.request("SAYEVERY #a every:2m :tick").last?.words.last == "every:2m", "no zone")
  }

  @Test("a TZ that names no zone of the database is not used, and the log says so")
  func posixRuleRefused() throws {
    let broker = try BrokerProcess().start(environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"])
    let client = try broker.connect()
    let expected = LocalZone(environment: [:]).name
    let started = try #require(client.request("SAYEVERY #a daily@09:00 :hi").last)
    #expect(started.words.last == "daily@09:00/\(expected)")
    try broker.waitForLog("the time zone in TZ is not used", timeout: 5)
  }

  @Test("without TZ the zone is the one /etc/localtime links to, else /etc/timezone, else UTC")
  func withoutTZ() throws {
    let directory = try makeShortTemporaryDirectory("tz")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let link = directory + "/localtime"
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: "/usr/share/zoneinfo/Asia/Tokyo")
    #expect(LocalZone(environment: [:], localtime: link).name == "Asia/Tokyo")
    let file = directory + "/timezone"
    try "Australia/Sydney\n".write(toFile: file, atomically: true, encoding: .utf8)
    let none = directory + "/none"
    #expect(
      LocalZone(environment: [:], localtime: none, timezoneFile: file).name == "Australia/Sydney")
    #expect(LocalZone(environment: [:], localtime: none, timezoneFile: none).name == "UTC")
    #expect(
      LocalZone(environment: ["TZ": ":Europe/Berlin"], localtime: link).name == "Europe/Berlin")
    let refused = LocalZone(environment: ["TZ": "Mars/Olympus"], localtime: link)
    #expect(refused.name == "Asia/Tokyo" && refused.problem != nil)
  }
}

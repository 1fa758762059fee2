import Foundation
import TestSupport
import Testing

/// A series in a shared room (chatbroker(7), "Series"; chatbroker(8),
/// "FEDERATION") on real nats-server processes and two real brokers: it
/// fires on its author's host and travels like any line, with its id.
@Suite(
  "Federation: series in shared rooms", .serialized, .enabled(if: NatsCluster.server != nil))
struct FederationSeriesTests {
  @Test(
    "a series on h1 in a shared room reaches h2 once per occurrence, with SERIES, across a restart of h1 (real time)"
  )
  func seriesTravelsRealTime() throws {
    let cluster = try NatsCluster()
    try cluster.start()
    let hosts = try (1...2).map { try FederationTests.broker($0, cluster) }
    try FederationTests.diagnosed(cluster, hosts) {
      for host in hosts { try host.waitForLog("federation link caught up", timeout: 20) }
      let author = try hosts[0].connect()
      let reader = try hosts[1].connect()
      _ = try reader.request("JOIN #ops")
      let started = try #require(author.request("SAYEVERY #ops daily@09:00/UTC :stand-up").last)
      #expect(started.hasPrefix("OK SAYEVERY "), "\(started)")
      let id = started.words[2]
      let due = try author.dataLines("SCHEDULED \(id) NEXT 2").map { $0.words[3] }
      #expect(
        try author.request("RESCHEDULE \(id) now").last?.hasPrefix("OK RESCHEDULE \(id) ") == true)
      let first = try reader.expect("MSG #ops ", timeout: 20)
      #expect(first.hasSuffix(" root@h1 SERIES \(id) :stand-up"), "\(first)")

      // Restarted, h1 keeps the series due at the occurrence after the
      // one sent now, which does not come again (chatbroker(7),
      // RESCHEDULE); sent now again, it comes once, with a new id.
      try hosts[0].restart()
      try hosts[0].waitForLog("federation link caught up", timeout: 20)
      let again = try hosts[0].connect()
      #expect(try again.dataLines("SCHEDULED \(id) NEXT 1").first?.words[3] == due[1])
      _ = try again.request("RESCHEDULE \(id) now")
      let second = try reader.expect("MSG #ops ", timeout: 20)
      #expect(
        second.hasSuffix(" root@h1 SERIES \(id) :stand-up") && second.words[2] != first.words[2])
      try FederationTests.waitForHistory(reader, count: 2)
      let history = try reader.dataLines("HISTORY #ops")
      #expect(
        history.count == 2 && history.allSatisfy { $0.hasSuffix(" root@h1 SERIES \(id) :stand-up") }
      )
      #expect(try reader.request("PING").filter { $0.hasPrefix("MSG ") }.isEmpty, "each once")
      // The author's own host shows them as it shows any shared line: as
      // they come back from the stream.
      try FederationTests.waitForHistory(again, count: 2)
    }
  }
}

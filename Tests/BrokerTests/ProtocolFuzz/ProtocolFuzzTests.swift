import Foundation
import ProtocolFuzz
import TestSupport
import Testing

/// The protocol fuzzer (chatfuzz) against the real broker, for a bounded
/// time: misbehaving clients, some as other Unix users, must not crash,
/// freeze or deceive the broker, and a well-behaved client's PING stays
/// fast (chatbroker(7), "Limits" and "Lines from the broker").
@Suite("Protocol fuzzing")
struct ProtocolFuzzTests {
  /// `CHATFUZZ_SECONDS` and `CHATFUZZ_SEED` change the run, e.g. to fuzz
  /// longer, or with the seed of a failure seen elsewhere.
  static var configuration: FuzzConfiguration {
    let environment = ProcessInfo.processInfo.environment
    var configuration = FuzzConfiguration()
    configuration.seconds = environment["CHATFUZZ_SECONDS"].flatMap(Double.init) ?? 20
    configuration.seed = environment["CHATFUZZ_SEED"].flatMap(UInt64.init) ?? 2026
    configuration.connections = 16
    // The broker's bound is 10 ms a step in a release build; the suite's
    // is a debug build, several times slower at HISTORY's and SAYEVERY's
    // limits. A rule libical walks for seconds is caught either way.
    configuration.stepLimit = 0.100
    configuration.behaviours = [
      "chatter", "flooder", "non-reading", "trickling", "half-closing", "vanishing",
    ]
    return configuration
  }

  @Test(
    "random, mutated and flooding clients neither crash, freeze nor deceive the broker, and PING stays fast (real time)",
    .timeLimit(.minutes(5)))
  func fuzzRealTime() throws {
    let broker = try BrokerProcess().start()
    var configuration = Self.configuration
    configuration.socketPath = broker.socketPath
    configuration.logPath = broker.logPath
    // As root, some connections are two other Unix users' (made with their
    // ids, no relay in between), so limits per user and identity are
    // fuzzed too.
    if UnixUsers.isRoot {
      try UnixUsers.ensure()
      configuration.users = ["cbtest1", "cbtest2"]
    }
    let report = try Fuzzer.run(configuration)
    let summary = Comment(rawValue: report.summary)

    #expect(report.findings("crash").isEmpty && report.findings("log").isEmpty, summary)
    #expect(report.findings("contract").isEmpty, summary)
    #expect(
      report.findings("freeze").isEmpty && report.findings("liveness").isEmpty, summary)
    let p99 = try #require(report.latency(percentile: 0.99), "the PING probe got no answer")
    #expect(p99 < configuration.latencyLimit, summary)
    #expect(report.requestsSent > 1000, "the fuzzer hardly ran: \(report.summary)")

    // Alive, and answering, after all that.
    let client = try broker.connect()
    #expect(try client.request("PING after") == ["OK PING after"])
    #expect(broker.process?.isRunning == true)
    #expect(LogScan.alarms(in: broker.log).isEmpty, Comment(rawValue: broker.log))
  }

  /// The same over the IRC door (chatbroker(7), "IRC"): IRC clients on
  /// irc.sock and loopback TCP, with every line they get checked as IRC and
  /// for who it claims to come from. `CHATFUZZ_IRC_SECONDS` changes its
  /// length.
  @Test(
    "IRC clients neither crash, freeze nor deceive the broker, and get only clean IRC lines (real time)",
    .timeLimit(.minutes(5)))
  func fuzzIRCRealTime() throws {
    let environment = ProcessInfo.processInfo.environment
    var configuration = Self.configuration
    configuration.seconds = environment["CHATFUZZ_IRC_SECONDS"].flatMap(Double.init) ?? 15
    configuration.brokerBinary = BuiltProducts.path("chatbroker")
    configuration.ircShare = 100
    configuration.tcp = true
    if UnixUsers.isRoot {
      try UnixUsers.ensure()
      configuration.users = ["cbtest1", "cbtest2"]
    }
    let report = try Fuzzer.run(configuration)
    let summary = Comment(rawValue: report.summary)

    #expect(report.requestsSent > 1000, "the fuzzer hardly ran: \(report.summary)")
    #expect(report.findings("crash").isEmpty && report.findings("log").isEmpty, summary)
    #expect(report.findings("contract").isEmpty, summary)
    #expect(report.findings("identity").isEmpty, summary)
    #expect(
      report.findings("freeze").isEmpty && report.findings("liveness").isEmpty
        && report.findings("restart").isEmpty, summary)
    let p99 = try #require(report.latency(percentile: 0.99), "the PING probe got no answer")
    #expect(p99 < configuration.latencyLimit, summary)
  }

  /// The same through the web door (chatbroker(7), "The web door"): the
  /// two users' line-protocol clients are pages, each with a token of its
  /// user, one line per WebSocket frame; their lines are checked as every
  /// line-protocol client's. `CHATFUZZ_WEB_SECONDS` changes its length.
  @Test(
    "pages through the web door neither crash, freeze nor deceive the broker (real time)",
    UnixUsers.required, .timeLimit(.minutes(5)))
  func fuzzWebRealTime() throws {
    try UnixUsers.ensure()
    let environment = ProcessInfo.processInfo.environment
    var configuration = Self.configuration
    configuration.seconds = environment["CHATFUZZ_WEB_SECONDS"].flatMap(Double.init) ?? 15
    configuration.brokerBinary = BuiltProducts.path("chatbroker")
    configuration.webShare = 100
    configuration.users = ["cbtest1", "cbtest2"]
    let report = try Fuzzer.run(configuration)
    let summary = Comment(rawValue: report.summary)

    #expect(report.webConnectionsOpened > 10, "hardly any page: \(report.summary)")
    #expect(report.requestsSent > 1000, "the fuzzer hardly ran: \(report.summary)")
    #expect(report.findings("crash").isEmpty && report.findings("log").isEmpty, summary)
    #expect(report.findings("contract").isEmpty, summary)
    #expect(
      report.findings("freeze").isEmpty && report.findings("liveness").isEmpty
        && report.findings("restart").isEmpty, summary)
    let p99 = try #require(report.latency(percentile: 0.99), "the PING probe got no answer")
    #expect(p99 < configuration.latencyLimit, summary)
  }
}

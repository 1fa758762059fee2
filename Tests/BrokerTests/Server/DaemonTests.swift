import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// The daemon's command line, signals and start-up refusals.
@Suite("Daemon")
struct DaemonTests {
  @Test(
    "--help and --version print and exit 0",
    arguments: [
      ("--help", "usage: chatbroker"), ("-h", "usage: chatbroker"),
      ("--version", "chatbroker \(chatbrokerVersion)\n"),
      ("-V", "chatbroker \(chatbrokerVersion)\n"),
    ])
  func informational(option: String, printed: String) throws {
    let result = try runCommand([BuiltProducts.path("chatbroker"), option])
    #expect(result.status == 0)
    #expect(result.output.contains(printed), "\(result.output)")
    #expect(result.errors.isEmpty)
  }

  @Test(
    "a bad command line exits 64 and says what was wrong",
    arguments: [
      (["--bogus"], "--bogus"), (["--sessions-per-user", "0"], "--sessions-per-user"),
      (["--socket"], "--socket"), (["--socket-mode", "999"], "--socket-mode"),
    ])
  func badCommandLine(arguments: [String], named: String) throws {
    let result = try runCommand([BuiltProducts.path("chatbroker")] + arguments)
    #expect(result.status == 64)
    #expect(result.errors.contains(named) && result.errors.contains("usage:"), "\(result.errors)")
    #expect(result.output.isEmpty)
  }

  @Test(
    "SIGTERM and SIGINT say BYE to connected clients, remove the socket and exit 0",
    arguments: [SIGTERM, SIGINT], [["--no-sync"], []])
  func terminate(signal: Int32, options: [String]) throws {
    let broker = try BrokerProcess().start(options)
    let client = try broker.connect()
    #expect(try client.request("JOIN #a") == ["OK JOIN #a 1"])
    // Pipelined, so the signal may come while their records are being synced.
    try client.send((1...200).map { "SAY #a m\($0)\n" }.joined())
    #expect(try broker.stop(signal: signal) == 0)
    let rest = try client.readToEnd()
    #expect(rest.last?.hasPrefix("BYE :") == true, "\(rest.suffix(3))")
    #expect(rest.dropLast().allSatisfy { $0.hasPrefix("OK SAY ") }, "\(rest)")
    #expect(!FileManager.default.fileExists(atPath: broker.socketPath))
    // Whatever was acknowledged before the BYE is there after a restart.
    try broker.start(options)
    let history = try broker.connect().dataLines("HISTORY #a 1000").map { $0.words[2] }
    let acknowledged = rest.dropLast().map { $0.words[2] }
    #expect(Array(history.prefix(acknowledged.count)) == acknowledged)
  }

  @Test("a socket file left by a killed broker is replaced")
  func staleSocket() throws {
    let broker = try BrokerProcess().start()
    #expect(try broker.stop(signal: SIGKILL) == SIGKILL)
    #expect(FileManager.default.fileExists(atPath: broker.socketPath))
    try broker.start()
    #expect(try broker.connect().request("PING") == ["OK PING"])
  }

  @Test("a second broker on a live socket refuses, naming the socket; the first goes on")
  func liveSocket() throws {
    let first = try BrokerProcess().start()
    let second = try BrokerProcess()
    let result = try second.runToExit([
      "--socket", first.socketPath, "--state-dir", second.stateDirectory, "--no-sync",
    ])
    #expect(result.status != 0)
    #expect(result.errors.contains(first.socketPath), "\(result.errors)")
    #expect(try first.connect().request("PING") == ["OK PING"])
  }

  @Test("a second broker on the same state directory refuses: it is locked")
  func lockedStateDirectory() throws {
    let first = try BrokerProcess().start()
    let second = try BrokerProcess()
    let result = try second.runToExit([
      "--socket", second.socketPath, "--state-dir", first.stateDirectory, "--no-sync",
    ])
    #expect(result.status != 0)
    #expect(result.errors.contains(first.stateDirectory), "\(result.errors)")
    #expect(result.errors.contains("another chatbroker"), "\(result.errors)")
    #expect(!FileManager.default.fileExists(atPath: second.socketPath))
    #expect(try first.connect().request("PING") == ["OK PING"])
  }
}

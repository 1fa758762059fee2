import Foundation
import TestSupport
import Testing

/// `--verbose` adds debug lines that say who connected and what each asked,
/// and never what anyone wrote (chatbroker(8), "LOGGING").
@Suite("Debug log lines with --verbose")
struct VerboseLogTests {
  @Test("with --verbose each connection's uid and each request's verb are logged, never its text")
  func verboseLogsRequests() throws {
    let broker = try BrokerProcess().start(["--no-sync", "--verbose"])
    let client = try broker.connect()
    #expect(try client.request("JOIN #debug") == ["OK JOIN #debug 1"])
    #expect(try client.request("SAY #debug :a secret").last?.hasPrefix("OK SAY") == true)
    #expect(try client.request("SAY").last?.hasPrefix("ERR SAY SYNTAX") == true)
    #expect(try client.request("FROB").last?.hasPrefix("ERR - UNKNOWN") == true)
    try broker.waitForLog("verb=- error=UNKNOWN")
    let log = broker.log
    #expect(
      log.contains("level=debug msg=\"connection accepted\" conn=2 uid=\(getuid()) wire=line"))
    #expect(log.contains("level=debug msg=request conn=2 user="))
    #expect(log.contains("verb=JOIN"))
    #expect(log.contains("verb=SAY\n"))
    #expect(log.contains("verb=SAY error=SYNTAX\n"))
    #expect(!log.contains("secret"))
  }

  @Test("without --verbose no debug line is logged")
  func quietByDefault() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    #expect(try client.request("PING") == ["OK PING"])
    client.finishWriting()
    _ = try client.readToEnd()
    try broker.waitForLog("msg=\"connection closed\" conn=2")
    #expect(!broker.log.contains("level=debug"))
  }
}

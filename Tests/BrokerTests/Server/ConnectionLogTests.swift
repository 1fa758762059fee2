import Foundation
import TestSupport
import Testing

/// A user who opens and closes connections in a loop cannot flood the
/// broker's log (chatbroker(8), "LOGGING").
@Suite("Connection log lines", UnixUsers.required)
struct ConnectionLogTests {
  @Test("300 connections opened and closed by one user log 30 lines of each kind; others still log")
  func connectingInALoop() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    for _ in 0..<300 {
      let client = try broker.connect()
      client.finishWriting()
      _ = try client.readToEnd()
    }
    let other = try broker.connect(as: "cbtest2")
    #expect(try other.request("PING") == ["OK PING"])
    try broker.waitForLog("msg=\"connection opened\" conn=302 user=cbtest2")

    // The broker's start-up probe was the first of this user's minute.
    let lines = broker.log.split(separator: "\n")
    func count(_ message: String) -> Int {
      lines.filter { $0.contains("msg=\"\(message)\"") && $0.contains(" user=\(user)") }.count
    }
    #expect(count("connection opened") == 30)
    #expect(count("connection closed") == 30)
    #expect(lines.count < 100, "\(lines.count) lines in all")
  }
}

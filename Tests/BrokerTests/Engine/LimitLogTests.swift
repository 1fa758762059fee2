import LineProtocol
import Testing

@testable import Broker

/// A client hitting a limit in a loop must not flood the log
/// (chatbroker(8), "SECURITY CONSIDERATIONS").
@Suite("Limit log")
struct LimitLogTests {
  /// The fields as `key=value` words, to compare.
  private func words(_ fields: [(key: String, value: String)]?) -> [String]? {
    fields?.map { "\($0.key)=\($0.value)" }
  }

  @Test("a limit reached again and again is logged once a minute per user, with what was left out")
  func onceAMinute() {
    var log = LimitLog()
    let start = Timestamp(milliseconds: 1_800_000_000_000)
    #expect(
      words(log.admit("new-rooms", user: "bob", now: start, [])) == ["limit=new-rooms", "user=bob"])
    for step in 1...1000 {
      #expect(log.admit("new-rooms", user: "bob", now: start + Int64(step * 50), []) == nil)
    }
    #expect(log.admit("new-rooms", user: "alice", now: start + 1, []) != nil, "per user")
    #expect(log.admit("pending", user: "bob", now: start + 1, []) != nil, "per limit")
    #expect(
      words(log.admit("new-rooms", user: "bob", now: start + 60_000, [("rooms", "3")]))
        == ["limit=new-rooms", "user=bob", "rooms=3", "suppressed=1000"])
  }

  @Test("connection lines are logged 30 a minute per user and kind, then counted until the next")
  func connectionLinesPerMinute() {
    var log = LimitLog(perMinute: 30)
    let start = Timestamp(milliseconds: 1_800_000_000_000)
    for step in 0..<30 {
      #expect(log.admit("connection opened", user: "bob", now: start + Int64(step)) == 0)
    }
    for step in 30..<1000 {
      #expect(log.admit("connection opened", user: "bob", now: start + Int64(step)) == nil)
    }
    #expect(log.admit("connection closed", user: "bob", now: start + 1000) == 0, "per kind")
    #expect(log.admit("connection opened", user: "alice", now: start + 1000) == 0, "per user")
    #expect(
      log.admit("connection opened", user: "bob", now: start + 60_000) == 970,
      "the first line of the next minute counts the ones left out")
    #expect(log.admit("connection opened", user: "bob", now: start + 60_001) == 0)
  }
}

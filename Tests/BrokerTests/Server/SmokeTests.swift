import TestSupport
import Testing

@Suite("Smoke")
struct SmokeTests {
  @Test("a broker starts, greets and answers PING")
  func ping() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    #expect(try client.request("PING hello") == ["OK PING hello"])
    #expect(try broker.stop() == 0)
  }
}

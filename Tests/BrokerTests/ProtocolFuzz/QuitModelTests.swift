import LineProtocol
import Testing

@testable import ProtocolFuzz

/// The fuzzer's model of which lines end a session (chatbroker(7), QUIT):
/// it must agree with the broker's parser, or the reply checker expects
/// replies that never come, or misses ones that do.
@Suite("Fuzzer's model of QUIT")
struct QuitModelTests {
  static let lines = [
    "QUIT", "quit", "QUIT   ", "QUIT :bye x", "QUIT now", "QUIT  two spaces", "QUIT :",
    "QUIT :\u{7}ring", "QUIT :tab\there", "QUIT :c1 \u{85}", "QUIT :del\u{7F}", "QUITS",
    "PART #a :QUIT",
  ]

  @Test(
    "a line ends the session in the model exactly when the broker parses it as QUIT",
    arguments: lines)
  func agreesWithTheParser(_ line: String) {
    let parsed: Bool
    if case .success(.quit) = RequestParser.parse(line) { parsed = true } else { parsed = false }
    #expect(ProtocolModel.isQuit(Array(line.utf8)) == parsed)
  }
}

import Testing

@testable import ChatClient

@Suite struct OptionParserTests {
  @Test func interactiveWithRooms() throws {
    let invocation = try OptionParser.parse(["--socket", "/tmp/s", "#general", "@bob"])
    #expect(invocation.socket == "/tmp/s")
    #expect(invocation.command == .interactive(targets: ["#general", "@bob"]))
  }
}

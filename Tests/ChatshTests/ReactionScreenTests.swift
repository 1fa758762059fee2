import Foundation
import TestSupport
import Testing

/// Reactions with the real chatsh and broker (chatbroker(7), `REACT`):
/// counted under the message on the chat screen, put and taken off with
/// `/react` and `/unreact` or `chatsh react` and `chatsh unreact`.
extension RoomScreenTests {
  @Test(
    "someone's reaction is counted under the line on my screen; /react, /unreact and chatsh react change it",
    UnixUsers.required)
  func reactionsOnTheScreen() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let bob = try broker.connect(as: "cbtest1")
    _ = try bob.request("JOIN #ops")
    let id = okID(try bob.request("SAY #ops :deploy at 18:00"))
    let terminal = try chatScreen(broker, "#ops")
    defer { terminal.close() }
    try terminal.waitFor("deploy at 18:00")

    #expect(try bob.request("REACT #ops \(id) 👍").last == "OK REACT #ops \(id) 👍")
    try terminal.waitFor { $0.contains("      👍 1") }
    let script = try broker.chatsh("react", "#ops", id, "👍")
    #expect(script.status == 0 && script.output.isEmpty && script.errors.isEmpty, "\(script)")
    #expect(try bob.expect("REACT ") == "REACT #ops \(id) \(NSUserName()) 👍")
    try terminal.waitFor { $0.contains("      👍 2") }

    try terminal.enter("/react 🎉")
    #expect(try bob.expect("REACT ") == "REACT #ops \(id) \(NSUserName()) 🎉")
    try terminal.waitFor { $0.contains("      👍 2  🎉 1") }
    try terminal.enter("/unreact 👍")
    #expect(try bob.expect("UNREACT ") == "UNREACT #ops \(id) \(NSUserName()) 👍")
    try terminal.waitFor { $0.contains("      👍 1  🎉 1") }
    try terminal.enter("/react 999 👀")
    try terminal.waitFor("could not put 👀 on 999: no message 999 in the history of #ops")

    let json = try broker.chatsh("history", "--json", "#ops")
    #expect(
      json.output.contains(#""reactions":{"👍":["cbtest1"],"🎉":["\#(NSUserName())"]}"#), "\(json)")
    let missing = try broker.chatsh("unreact", "#ops", "999", "👍")
    #expect(missing.status == 1 && missing.errors.contains("NOSUCHMSG"), "\(missing)")
    let wrong = try broker.chatsh("react", "#ops", id, "a,b")
    #expect(wrong.status == 64 && wrong.errors.contains("not a reaction"), "\(wrong)")
  }
}

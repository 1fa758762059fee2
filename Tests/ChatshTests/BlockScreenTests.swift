import Foundation
import TestSupport
import Testing

/// Messages of several lines on the chat screen (chatbroker(7), `BLOCK`;
/// chatsh(1), "The chat screen"): someone's block under one header, a
/// paste of several lines sent as one.
extension RoomScreenTests {
  @Test(
    "a block from someone else shows under one header, a line a row, indented; a pasted block and Alt-Enter send one BLOCK",
    UnixUsers.required)
  func blocksOnTheScreen() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let bob = try broker.connect(as: "cbtest1")
    _ = try bob.request("JOIN #ops")
    let terminal = try chatScreen(broker, "#ops")
    defer { terminal.close() }
    try terminal.waitFor(" #ops")

    _ = try bob.request(#"BLOCK #ops :build 42\n  step one\nstep two"#)
    try terminal.waitFor { $0.contains("      step two") }
    let rows = terminal.screen().split(separator: "\n").map(String.init)
    let first = try #require(rows.firstIndex { $0.hasPrefix("      build 42") }, "\(rows)")
    #expect(rows[first - 1].contains("cbtest1"), "the header: \(rows)")
    #expect(rows[first + 1] == "        step one", "\(rows)")
    #expect(rows.dropFirst().filter { $0.contains("cbtest1") }.count == 1, "\(rows)")

    // A paste as the terminal marks it (bracketed paste, which chatsh asks for).
    try terminal.tmux(["set-buffer", "pasted one\npasted two"])
    try terminal.tmux(["paste-buffer", "-p", "-t", "0"])
    try terminal.waitFor { $0.contains("> pasted one↵pasted two") }
    try terminal.press("Enter")
    #expect(try bob.expect("MSG #ops ").hasSuffix(#" BLOCK :pasted one\npasted two"#))

    try terminal.type("up")
    try terminal.press("M-Enter")
    try terminal.enter("down")
    #expect(try bob.expect("MSG #ops ").hasSuffix(#" BLOCK :up\ndown"#))
    try terminal.waitFor { $0.contains("down") && !$0.contains("↵") }
  }
}

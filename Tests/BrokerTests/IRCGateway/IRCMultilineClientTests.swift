import Foundation
import Glibc
import TestSupport
import Testing

/// draft/multiline on the real broker (chatbroker(7), "IRC"): a raw IRC
/// client's batch reaches a line client as one `BLOCK`, and a line
/// client's `BLOCK` reaches the IRC client as one batch.
@Suite("IRC draft/multiline on the real broker", .serialized)
struct IRCMultilineClientTests {
  @Test("a batch from irc.sock is one BLOCK on the line protocol, and back")
  func bothWays() throws {
    let broker = try BrokerProcess().start()
    let irc = try LineClient(path: broker.ircSocketPath)
    try irc.send(
      "CAP LS 302\r\nNICK somebody\r\nUSER x 0 * :X\r\n"
        + "CAP REQ :batch message-tags draft/multiline\r\nCAP END\r\n")
    _ = try irc.expect(":\(Host.name) 422 ")
    try irc.send("JOIN #lab\r\n")
    _ = try irc.expect(":\(Host.name) 366 ")
    let line = try broker.connect()
    _ = try line.request("JOIN #lab")

    try irc.send(
      "BATCH +b1 draft/multiline #lab\r\n@batch=b1 PRIVMSG #lab :first\r\n"
        + "@batch=b1 PRIVMSG #lab :\r\n@batch=b1 PRIVMSG #lab :third \r\n"
        + "@batch=b1;draft/multiline-concat PRIVMSG #lab :line\r\nBATCH -b1\r\n")
    #expect(try line.expect("MSG #lab ").hasSuffix(#" BLOCK :first\n\nthird line"#))

    let id = try line.request(#"BLOCK #lab :one\ntwo"#).last!.split(separator: " ")[2]
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    let source = ":\(user)!\(user)@\(Host.name)"
    #expect(
      try irc.expect("@msgid=\(id) ")
        == "@msgid=\(id) \(source) BATCH +m\(id) draft/multiline #lab\r")
    #expect(try irc.expect("@") == "@batch=m\(id) \(source) PRIVMSG #lab :one\r")
    #expect(try irc.expect("@") == "@batch=m\(id) \(source) PRIVMSG #lab :two\r")
    #expect(try irc.expect(":") == ":\(Host.name) BATCH -m\(id)\r")
  }
}

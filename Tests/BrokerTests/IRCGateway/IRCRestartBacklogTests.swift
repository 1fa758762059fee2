import Foundation
import Posix
import TestSupport
import Testing

/// An IRC client without `draft/read-marker` (WeeChat, irssi) that comes
/// back after the broker restarted is sent what it missed, not again what
/// it was sent live: where the user's last session left each room is kept
/// in the journal (chatbroker(7), "IRC"; chatbroker(8), `seen`).
@Suite("IRC gateway: after a broker restart, only what was missed", .serialized)
struct IRCRestartBacklogTests {
  /// cbtest1 registers on the IRC socket with no capability, as WeeChat
  /// and irssi do by default, and is joined to its rooms; returns the
  /// client and every `PRIVMSG #lab` line up to the end of the burst (a
  /// PING sent after #lab's 366, answered after its backlog).
  func register(_ broker: BrokerProcess) throws -> (LineClient, [String]) {
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest1"))
    try irc.send("NICK cbtest1\r\nUSER cbtest1 0 * :cbtest1\r\n")
    try irc.expect(":\(Host.name) 001 cbtest1 ")
    return (irc, try backlog(irc))
  }

  /// The `PRIVMSG #lab` lines before the answer to a PING sent now.
  func backlog(_ irc: LineClient) throws -> [String] {
    try irc.send("PING :end\r\n")
    var lines: [String] = []
    while true {
      let line = try irc.expect(":")
      if line.hasSuffix(" :end\r") { return lines.filter { $0.contains(" PRIVMSG #lab :") } }
      lines.append(line)
    }
  }

  @Test(
    "lines sent live before a restart are not sent again on reconnect; a line said while away is",
    UnixUsers.required)
  func noLineTwice() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start(["--no-sync"])
    let (irc, _) = try register(broker)
    try irc.send("JOIN #lab\r\n")
    try irc.expect(":\(Host.name) 366 cbtest1 #lab ")
    let said = ":cbtest2!cbtest2@\(Host.name) PRIVMSG #lab :"
    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    for text in ["one", "two", "three"] {
      _ = try person.request("SAY #lab \(text)")
      #expect(try irc.expect(said) == said + text + "\r")
    }

    try broker.restart()
    _ = try irc.readToEnd()
    let again = try broker.connect(as: "cbtest2")
    _ = try again.request("JOIN #lab")
    _ = try again.request("SAY #lab said while away")
    let (back, lines) = try register(broker)
    #expect(lines.count == 1, "only the line said while away: \(lines)")
    #expect(lines.first?.hasSuffix("] said while away\r") == true, "\(lines)")

    // Live again, then away again across a second restart: still once.
    _ = try again.request("SAY #lab four")
    #expect(try back.expect(said) == said + "four\r")
    try broker.restart()
    _ = try back.readToEnd()
    let (_, after) = try register(broker)
    #expect(after.isEmpty, "nothing new since: \(after)")
  }
}

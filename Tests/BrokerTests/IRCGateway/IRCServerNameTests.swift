import Foundation
import Glibc
import TestSupport
import Testing

/// `--server-name` (chatbroker(8)): the name the IRC gateway calls itself
/// in its replies, numerics and masks, instead of the host name.
@Suite("IRC gateway: --server-name")
struct IRCServerNameTests {
  let nick = String(cString: getpwuid(getuid())!.pointee.pw_name)

  @Test(
    "the gateway's replies, WHOIS and masks name the server as told, up to 63 bytes",
    arguments: ["My.Little.Server", "irc-1.example", String(repeating: "a", count: 63)])
  func named(name: String) throws {
    let broker = try BrokerProcess().start(["--no-sync", "--server-name", name])
    let irc = try LineClient(path: broker.ircSocketPath)
    try irc.send("NICK \(nick)\r\nUSER \(nick) 0 * :\(nick)\r\n")
    #expect(
      try irc.expect(":\(name) 001 ")
        == ":\(name) 001 \(nick) :Welcome to chatbroker on \(name), \(nick)\r")
    #expect(try irc.expect(":\(name) 005 ").contains(" NETWORK=\(name) "))
    try irc.send("WHOIS \(nick)\r\nJOIN #named\r\n")
    #expect(try irc.expect(":\(name) 312 ") == ":\(name) 312 \(nick) \(nick) \(name) :chatbroker\r")
    #expect(try irc.expect(":\(nick)!") == ":\(nick)!\(nick)@\(name) JOIN #named\r")
  }

  @Test(
    "a name that is not a host name's letters, digits, . and -, or is longer than 63 bytes, exits 64",
    arguments: [
      "", "-first", ".first", "two words", "nick!user", "ünicode",
      String(repeating: "a", count: 64),
    ])
  func refused(name: String) throws {
    let result = try runCommand([BuiltProducts.path("chatbroker"), "--server-name", name])
    #expect(result.status == 64)
    #expect(
      result.errors.contains("--server-name needs a name of 1 to 63 letters"), "\(result.errors)")
  }
}

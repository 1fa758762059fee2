import Foundation
import Glibc
import Posix

/// The IRC servers `chatbench fanout` measures: chatbroker's IRC door on
/// loopback TCP, and the two IRC daemons Debian packages that someone
/// would run instead (tools/install-deps installs them). Each starts in a
/// fresh temporary directory on a port free a moment before, with a
/// configuration written here and nothing read from /etc, in the
/// foreground, so that stopping it is a signal to our child.
///
/// The peers' configurations lift what a public server limits and a
/// benchmark must not meet: connections per address (every client is
/// 127.0.0.1), and flood control, so that the sender's lines are served
/// as fast as the server can rather than at a human's pace. What cannot
/// be lifted is said where it is set.
extension ServerUnderTest {
  /// chatbroker with its IRC door also on 127.0.0.1 (`--irc-listen`): the
  /// same listener WeeChat uses, and the same transport as the peers.
  static func chatbrokerIRC(_ arguments: [String]) throws -> ServerUnderTest {
    try chatbroker(arguments, ircPort: try LoopbackSocket.freePort())
  }

  /// ngIRCd (`ngircd -n`), configured as ngircd.conf(5) describes.
  static func ngircd() throws -> ServerUnderTest {
    let directory = makeTemporaryDirectory()
    let port = try LoopbackSocket.freePort()
    let configuration = """
      [Global]
      Name = bench.invalid
      Info = chatbench
      AdminInfo1 = chatbench
      AdminInfo2 = chatbench
      AdminEMail = bench@bench.invalid
      Listen = 127.0.0.1
      Ports = \(port)
      MotdPhrase = chatbench
      [Limits]
      # No limit on connections, in all and from one address (default 5).
      MaxConnections = 0
      MaxConnectionsIP = 0
      MaxJoins = 0
      MaxNickLength = 30
      # 0 turns off the penalty time each command adds, ngIRCd's flood
      # control: with it, a client's commands are read at a few a second.
      MaxPenaltyTime = 0
      # Idle receivers are not pinged in a run of seconds (they would
      # answer anyway).
      PingTimeout = 3600
      PongTimeout = 3600
      [Options]
      # No reverse DNS, ident or PAM at registration.
      DNS = no
      Ident = no
      PAM = no

      """
    let path = directory + "/ngircd.conf"
    try write(configuration, to: path)
    try requireInstalled("/usr/sbin/ngircd")
    // Started as root, ngIRCd drops to nobody by itself once it listens.
    return try ServerUnderTest(
      executable: "/usr/sbin/ngircd", directory: directory, socketPath: "", ircPort: port,
      arguments: ["--nodaemon", "--passive", "--config", path])
  }

  /// InspIRCd 3 (`inspircd --nofork`), with the `<connect>` class of its
  /// inspircd.conf.example set to its most permissive.
  static func inspircd() throws -> ServerUnderTest {
    let directory = makeTemporaryDirectory()
    let port = try LoopbackSocket.freePort()
    // threshold and commandrate are its flood control: a client may owe
    // `threshold` commands, and is forgiven `commandrate` thousandths of a
    // command a second; beyond that it is fake-lagged (its commands held
    // back) or, with fakelag="no", disconnected. Neither can be turned
    // off: here it may owe a million and is forgiven a million a second,
    // and so never owes any. softsendq is the output a client may have
    // waiting before its own commands are held back, hardsendq before it is
    // dropped; recvq the input it may have waiting. netbuffersize is
    // how much it reads from a client at once: at the default 10240, 300
    // lines written at once were read one buffer a second (87 messages a
    // second, InspIRCd 3.15), which 65534 avoids for a window of 256.
    let configuration = """
      <server name="bench.invalid" description="chatbench" network="bench">
      <admin name="chatbench" nick="chatbench" email="bench@bench.invalid">
      <bind address="127.0.0.1" port="\(port)" type="clients">
      <connect name="bench" allow="*" timeout="60" pingfreq="1h"
               threshold="1000000" commandrate="1000000000" fakelag="no"
               softsendq="64M" hardsendq="64M" recvq="64M"
               localmax="100000" globalmax="100000" limit="100000"
               maxconnwarn="no" resolvehostnames="no">
      <performance netbuffersize="65534" softlimit="100000" clonesonconnect="no">
      <log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="\(directory)/inspircd.log">

      """
    let path = directory + "/inspircd.conf"
    try write(configuration, to: path)
    try requireInstalled("/usr/sbin/inspircd")
    // It refuses to run as root unless told.
    let root = getuid() == 0 ? ["--runasroot"] : []
    return try ServerUnderTest(
      executable: "/usr/sbin/inspircd", directory: directory, socketPath: "", ircPort: port,
      arguments: ["--nofork", "--nopid", "--config", path] + root)
  }

  private static func requireInstalled(_ executable: String) throws {
    guard access(executable, X_OK) == 0 else {
      throw BenchError("no \(executable): tools/install-deps installs it")
    }
  }

  private static func write(_ text: String, to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
      throw BenchError("cannot write \(path)")
    }
  }
}

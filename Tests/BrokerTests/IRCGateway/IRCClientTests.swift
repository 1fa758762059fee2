import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// A python3-irc bot (Debian's python3-irc): joins #lab, prints what it
/// sees one line per event, answers "ping" in the room and every private
/// message. It connects to the Unix socket given as its first argument.
private let botScript = """
  import socket, sys
  import irc.client

  path, nick = sys.argv[1], sys.argv[2]

  def factory(address):
      sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      sock.connect(path)
      return sock

  def out(*words):
      print(*words, flush=True)

  def welcome(conn, event):
      out("WELCOME", event.target)
      conn.join("#lab")

  def joined(conn, event):
      out("JOIN", event.source.nick, event.target)

  def pubmsg(conn, event):
      out("PUBMSG", event.source.nick, event.target, event.arguments[0])
      if event.arguments[0] == "ping":
          conn.privmsg("#lab", "pong from " + conn.get_nickname())

  def privmsg(conn, event):
      out("PRIVMSG", event.source.nick, event.arguments[0])
      conn.privmsg(event.source.nick, "got " + event.arguments[0])

  reactor = irc.client.Reactor() if hasattr(irc.client, "Reactor") else irc.client.IRC()
  for name, handler in [("welcome", welcome), ("join", joined), ("pubmsg", pubmsg),
                        ("privmsg", privmsg)]:
      reactor.add_global_handler(name, handler)
  reactor.server().connect("broker", 0, nick, connect_factory=factory)
  reactor.process_forever(timeout=0.2)
  """

@Suite("IRC clients on the real broker", .serialized)
struct IRCClientTests {
  @Test(
    "a raw IRC client registers on irc.sock, joins, talks with a line client and survives bad UTF-8"
  )
  func rawClient() throws {
    let broker = try BrokerProcess().start()
    let irc = try LineClient(path: broker.ircSocketPath)
    try irc.send(
      "CAP LS 302\r\nNICK somebody\r\nUSER x 0 * :X\r\nCAP REQ :server-time message-tags\r\n")
    _ = try irc.expect(":")  // CAP LS
    _ = try irc.expect(":")  // CAP ACK
    try irc.send("CAP END\r\n")
    let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
    let welcome = try irc.expect(":")
    #expect(welcome.contains(" 001 \(user) "), "the nick is the login name")
    _ = try irc.expect(":\(Host.name) 422 ")
    try irc.send("JOIN #lab\r\n")
    #expect(try irc.expect(":").hasSuffix(" JOIN #lab\r"))
    _ = try irc.expect(":\(Host.name) 366 ")
    try irc.send("MODE #lab\r\n")
    _ = try irc.expect(":\(Host.name) 324 ")
    let created = try irc.expect(":\(Host.name) 329 ").split(separator: " ").last ?? ""
    let seconds = Int(created.dropLast()) ?? 0
    let now = Int(time(nil))
    #expect((now - 60...now).contains(seconds), "329 is when #lab was created: \(created)")

    let line = try broker.connect()
    _ = try line.request("JOIN #lab")
    let said = try line.request("SAY #lab hello irc")
    let words = said.last!.split(separator: " ")
    let got = try irc.expect("@")
    #expect(
      got
        == "@time=\(words[3]);msgid=\(words[2]) :\(user)!\(user)@\(Host.name) PRIVMSG #lab :hello irc\r"
    )

    try irc.sendBytes(Array("PRIVMSG #lab :caf".utf8) + [0xE9] + Array("\r\nPING :still\r\n".utf8))
    #expect(try irc.expect(":").contains(" FAIL * INVALID_UTF8 :Your line was not valid UTF-8"))
    #expect(try irc.expect(":").contains(" NOTICE \(user) :Your line was not valid UTF-8"))
    #expect(try irc.expect(":").hasSuffix("PONG \(Host.name) :still\r"))
    try irc.send("PRIVMSG #lab :hello line\r\n")
    #expect(try line.expect("MSG #lab ").hasSuffix(" \(user) :hello line"))
    try irc.send("QUIT\r\n")
    #expect(try irc.readToEnd().last?.hasPrefix("ERROR :Closing link") == true)
  }

  @Test(
    "on the real broker, a CR sent in PING, NICK or a command forges no line for the sender, lines over 512 bytes get 417, and a PRIVMSG of 60 targets is 20 SAYs and 407",
    UnixUsers.required)
  func rawClientLimits() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start(["--no-sync"])
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest1"))
    try irc.send("NICK x\r\nUSER x 0 * :x\r\n")
    try irc.expect(":\(Host.name) 422 cbtest1 ")
    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    try irc.send(
      "PING :x\r:root!root@h PRIVMSG cbtest1 :forged\r\n"
        + "NICK y\r:root!root@h\r\nWHO\u{1B}[2J #lab\r\nPING :done\r\n")
    var lines: [String] = []
    while lines.last?.hasSuffix(" :done\r") != true {
      lines.append(try irc.readLine() ?? "")
    }
    #expect(lines.count == 4, "one answer each: \(lines)")
    for line in lines {
      #expect(
        line.hasPrefix(":\(Host.name) "), "from the server, not forged: \(line.debugDescription)")
      #expect(
        !line.dropLast().contains("\r") && !line.contains("\u{1B}"), "\(line.debugDescription)")
    }

    try irc.send("PRIVMSG #lab :" + String(repeating: "a", count: 600) + "\r\nPING :after\r\n")
    #expect(try irc.expect(":").hasPrefix(":\(Host.name) 417 cbtest1 :Input line was too long"))
    #expect(try irc.expect(":").hasSuffix(" :after\r"))

    let targets = Array(repeating: "#lab", count: 60).joined(separator: ",")
    try irc.send("JOIN #lab\r\nPRIVMSG \(targets) :many\r\n")
    #expect(
      try irc.expect(":\(Host.name) 407 ").hasPrefix(":\(Host.name) 407 cbtest1 #lab :Too many"))
    _ = try person.expect("JOIN #lab cbtest1")
    for _ in 0..<20 { #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :many")) }
    #expect(try person.request("PING end") == ["OK PING end"], "no 21st line came before")
  }

  @Test(
    "a python3-irc bot, as a real Unix user, answers a line-protocol user in a room and in private",
    UnixUsers.required,
    .enabled(
      if: FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/irc"),
      "needs python3-irc"))
  func pythonBot() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let script = broker.directory + "/bot.py"
    try botScript.write(toFile: script, atomically: true, encoding: .utf8)
    chmod(script, 0o644)
    let bot = try LineClient(
      running: [
        "/usr/bin/setpriv", "--reuid=cbtest1", "--regid=cbtest1", "--clear-groups",
        "/usr/bin/python3", script, broker.ircSocketPath, "impostor",
      ], timeout: 20)
    #expect(try bot.expect("WELCOME ") == "WELCOME cbtest1", "nobody takes another's nick")
    _ = try bot.expect("JOIN cbtest1 #lab")

    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    _ = try bot.expect("JOIN cbtest2 #lab")
    _ = try person.request("SAY #lab ping")
    #expect(try bot.expect("PUBMSG ") == "PUBMSG cbtest2 #lab ping")
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest1 :pong from cbtest1"))

    _ = try person.request("SAY @cbtest1 :are you a bot?")
    #expect(try bot.expect("PRIVMSG ") == "PRIVMSG cbtest2 are you a bot?")
    #expect(try person.expect("MSG @cbtest1 ").hasSuffix(" cbtest1 :got are you a bot?"))
  }

  @Test(
    "ii, as a real Unix user, joins and posts from a shell pipe; the line user reads it",
    UnixUsers.required,
    .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/ii"), "needs ii"))
  func iiPostsFromAPipe() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let person = try broker.connect(as: "cbtest2")
    _ = try person.request("JOIN #lab")
    let directory = broker.directory + "/ii"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let pw = getpwnam("cbtest3")!.pointee
    chown(directory, pw.pw_uid, pw.pw_gid)
    let ii = try ChildProcess(
      [
        "/usr/bin/setpriv", "--reuid=cbtest3", "--regid=cbtest3", "--clear-groups",
        "/usr/bin/ii", "-s", "chat", "-u", broker.ircSocketPath, "-i", directory, "-n", "someone",
      ], standardOutput: .null)
    defer {
      ii.signal(SIGKILL)
      ii.waitUntilExit()
    }
    let server = directory + "/chat"
    try waitUntil(timeout: 10, "ii's in fifo") {
      FileManager.default.fileExists(atPath: server + "/in")
    }
    _ = try runShell("echo '/j #lab' > '\(server)/in'")
    _ = try person.expect("JOIN #lab cbtest3")
    try waitUntil(timeout: 10, "ii's room fifo") {
      FileManager.default.fileExists(atPath: server + "/#lab/in")
    }
    _ = try runShell("echo 'posted from a pipe' > '\(server)/#lab/in'")
    #expect(try person.expect("MSG #lab ").hasSuffix(" cbtest3 :posted from a pipe"))
    _ = try person.request("SAY #lab seen it")
    try waitUntil(timeout: 10, "the answer in ii's out file") {
      let out = (try? String(contentsOfFile: server + "/#lab/out", encoding: .utf8)) ?? ""
      return out.contains("<cbtest2> seen it")
    }
  }

  @Test(
    "over the loopback TCP listener, the nick is the Unix user the kernel lists as the peer's owner",
    UnixUsers.required)
  func loopbackTCP() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("irc_tcp=127.0.0.1:\(port)")
    let irc = try LineClient(
      running: [
        "/usr/bin/setpriv", "--reuid=cbtest1", "--regid=cbtest1", "--clear-groups",
        "/usr/bin/nc", "-N", "127.0.0.1", String(port),
      ])
    try irc.send("NICK root\r\nUSER root 0 * :root\r\n")
    #expect(try irc.expect(":").contains(" 001 cbtest1 :"), "the kernel, not NICK, names the user")
    try irc.send("JOIN #tcp\r\n")
    #expect(try irc.expect(":cbtest1!").hasSuffix(" JOIN #tcp\r"))
  }

  @Test(
    "WeeChat (weechat-headless) over the loopback TCP listener is the Unix user the kernel names, and talks both ways (real time)",
    UnixUsers.required,
    .enabled(
      if: FileManager.default.fileExists(atPath: "/usr/bin/weechat-headless"),
      "needs weechat-headless"))
  func weechatOverTCPRealTime() throws {
    try UnixUsers.ensure()
    let port = freeLoopbackPort()
    let broker = try BrokerProcess().start(["--no-sync", "--irc-listen", "127.0.0.1:\(port)"])
    let person = try broker.connect(as: "cbtest3")
    _ = try person.request("JOIN #lab")
    let home = broker.directory + "/weechat"
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    let pw = getpwnam("cbtest2")!.pointee
    chown(home, pw.pw_uid, pw.pw_gid)
    let weechat = try ChildProcess(
      [
        "/usr/bin/setpriv", "--reuid=cbtest2", "--regid=cbtest2", "--clear-groups",
        "/usr/bin/weechat-headless",
        "--dir", home, "-r",
        "/set logger.file.flush_delay 0; /set plugins.var.fifo.fifo on; "
          + "/server add chat 127.0.0.1/\(port) -notls -nicks=someone -autojoin=#lab; /connect chat; "
          // weechat-headless has no fifo plugin: the line is typed in 3 s.
          + "/wait 3 /msg -server chat #lab hello from weechat",
      ], standardOutput: .null, standardError: .null)
    defer {
      weechat.signal(SIGKILL)
      weechat.waitUntilExit()
    }
    _ = try person.expect("JOIN #lab cbtest2", timeout: 20)
    #expect(try person.expect("MSG #lab ", timeout: 20).hasSuffix(" cbtest2 :hello from weechat"))
    _ = try person.request("SAY #lab hello weechat")
    try waitUntil(timeout: 10, "the answer in WeeChat's log of #lab") {
      let log =
        (try? String(contentsOfFile: home + "/logs/irc.chat.#lab.weechatlog", encoding: .utf8))
        ?? ""
      return log.contains("cbtest3\thello weechat")
    }
  }

  @Test(
    "--irc-listen refuses an address that is not loopback, with status 64",
    arguments: [
      "0.0.0.0:6667", "10.1.2.3:6667", "127.0.0.1:0", "localhost", "127.0.0.1:70000",
    ])
  func refusesNonLoopback(address: String) throws {
    let broker = try BrokerProcess()
    let result = try broker.runToExit([
      "--state-dir", broker.stateDirectory, "--irc-listen", address,
    ])
    #expect(result.status == 64)
    #expect(result.errors.contains("--irc-listen needs a loopback address"))
  }
}

/// The host name the broker gives IRC clients as its server name.
enum Host {
  static let name = ProcessInfo.processInfo.hostName
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() -> UInt16 {
  (try? LoopbackSocket.freePort()) ?? 0
}

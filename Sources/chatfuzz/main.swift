import Foundation
import LineProtocol
import ProtocolFuzz

/// chatfuzz: a protocol fuzzer for chatbroker. It opens many connections
/// that send random and mutated requests, floods and half-closes, while one
/// well-behaved client measures PING latency, and checks every reply
/// against chatbroker(7); with `--wire irc` or `--irc-share`, IRC clients
/// on irc.sock (and loopback TCP) too, each of their lines checked as IRC
/// and for who it claims to be from. Exit status 0 when nothing was found, 1 when
/// something was, 64 for a bad option.
let usage = """
  usage: chatfuzz (--socket path | --broker path) [--seconds n] [--connections n]
                  [--seed n] [--users name,...] [--log path] [--latency-limit ms]
                  [--step-limit ms] [--behaviours name,...] [--keep]
                  [--wire line|irc] [--irc-share percent] [--irc-socket path]
                  [--tcp] [--irc-port port] [--web-share percent] [--web-port port]
                  [--failing-syncs percent] [--privacy]
    --socket path      fuzz the broker listening on path
    --broker path      start this chatbroker (with --no-sync on a temporary
                       socket and state directory), restart it after a crash
                       and find the request that crashed it
    --seconds n        how long to fuzz (default 30)
    --connections n    misbehaving connections at once (default 24)
    --seed n           the generator's seed (default 1); a run that found
                       something finds much the same again with its seed
    --users a,b        also connect as these Unix users (root only)
    --log path         the broker's log, scanned for traps at the end
    --latency-limit ms the PING p99 that still passes (default 50)
    --step-limit ms    the longest step the broker may log (chatbroker(8),
                       LOGGING) that still passes (default 10, its bound)
    --keep             keep the started broker's logs (with backtraces) and state
    --behaviours a,b   only these kinds of clients: \(FuzzConfiguration.behaviourNames.joined(separator: ", "))
                       (default: all)
    --wire line|irc    what the misbehaving clients speak: chatbroker(7)'s line
                       protocol (default) or IRC, on the IRC socket; the PING
                       probe speaks the line protocol either way
    --irc-share n      n percent of the clients speak IRC, the rest the line
                       protocol (--wire irc is 100)
    --irc-socket path  the broker's IRC socket (default irc.sock beside --socket)
    --tcp              half of the IRC clients (those of the fuzzer's own user)
                       use loopback TCP: the started broker gets --irc-listen
                       127.0.0.1 on a free port; with --socket, give --irc-port
    --irc-port port    the TCP port of the running broker's --irc-listen
    --web-share n      n percent of the --users' line-protocol clients speak it
                       over the web door instead, as a browser's page does: a
                       token from WEB, the upgrade, then one line per
                       WebSocket text frame (root; the started broker gets
                       --web-listen 127.0.0.1 on a free port; with --socket,
                       give --web-port); every oracle judges their lines
    --web-port port    the TCP port of the running broker's --web-listen
    --failing-syncs p  with --broker: the broker syncs its journal, and p percent
                       of its fdatasync calls fail with EIO (a library in its
                       LD_PRELOAD, seeded with --seed), while scenes in fresh
                       rooms watch for dirty reads: a request refused STORAGE
                       was rolled back, so no line any session gets, before or
                       after, may show its text, topic, key, ban, limit, mode,
                       room or invitation; at the end the broker is restarted
                       on its journal, and every acknowledged message must be
                       in its room's HISTORY
    --privacy          also check who reads what (root, two --users at least):
                       the users and root make public, group, invite-only and
                       +s rooms, post lines with unique tokens, invite, kick,
                       ban, redact, send direct messages, and are added to and
                       taken out of a Unix group made for the run (gpasswd);
                       every line any of them gets, on either wire, must show
                       no room, member, topic or line they may not read
                       (findings of category privacy, with the request). The
                       other clients speak as the first of three or more users
                       only. After its first round the started broker is
                       restarted: kicks and bans must hold; IRC LUSERS must
                       count only rooms the asker may see. Runs of 90 s and
                       more also check a session opened before a user left
                       the group, past the 60 s bound of group lookups.
  IRC clients register (CAP LS 302, CAP REQ, NICK, USER, CAP END), then send
  every command of the gateway, lines of many targets, tags, control
  characters, invalid UTF-8 and floods; every line they get must be IRC
  (CR LF, no NUL, CR or other control character but formatting in a text, at
  most 512 bytes after tags of at most 8191) and come from whoever wrote it.
  A finding on IRC is replayed line by line on a fresh connection, and the
  line that shows it again printed as a printf ... | nc -N -U "$IRCSOCK" line.
  """

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("chatfuzz: \(message)\n\(usage)\n".utf8))
  exit(64)
}

var configuration = FuzzConfiguration()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  var name = argument
  var inlineValue: String?
  if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
    name = String(argument[..<equals])
    inlineValue = String(argument[argument.index(after: equals)...])
  }
  func value() -> String {
    if let inlineValue { return inlineValue }
    guard let next = arguments.next() else { fail("\(name) needs a value") }
    return next
  }
  func number(_ range: ClosedRange<Double>) -> Double {
    let text = value()
    guard let parsed = Double(text), range.contains(parsed) else {
      fail("\(name) takes a number from \(range.lowerBound) to \(range.upperBound), not \(text)")
    }
    return parsed
  }
  switch name {
  case "--socket": configuration.socketPath = value()
  case "--broker": configuration.brokerBinary = value()
  case "--seconds": configuration.seconds = number(1...86_400)
  case "--connections": configuration.connections = Int(number(1...1000))
  case "--seed":
    let text = value()
    guard let seed = UInt64(text) else { fail("--seed takes a whole number, not \(text)") }
    configuration.seed = seed
  case "--users": configuration.users = value().split(separator: ",").map(String.init)
  case "--log": configuration.logPath = value()
  case "--keep": configuration.keepFiles = true
  case "--behaviours":
    configuration.behaviours = value().split(separator: ",").map(String.init)
    for name in configuration.behaviours where !FuzzConfiguration.behaviourNames.contains(name) {
      fail("no behaviour \(name)")
    }
  case "--wire":
    switch value() {
    case "line": configuration.ircShare = 0
    case "irc": configuration.ircShare = 100
    case let other: fail("--wire takes line or irc, not \(other)")
    }
  case "--irc-share": configuration.ircShare = Int(number(0...100))
  case "--irc-socket": configuration.ircSocketPath = value()
  case "--tcp": configuration.tcp = true
  case "--irc-port": configuration.ircTCPPort = UInt16(number(1...65535))
  case "--web-share": configuration.webShare = Int(number(0...100))
  case "--web-port": configuration.webPort = UInt16(number(1...65535))
  case "--privacy": configuration.privacy = true
  case "--latency-limit": configuration.latencyLimit = number(1...60_000) / 1000
  case "--failing-syncs": configuration.failingSyncs = number(0...100)
  case "--step-limit": configuration.stepLimit = number(1...60_000) / 1000
  case "-h", "--help":
    print(usage)
    exit(0)
  case "--version":
    print("chatfuzz \(chatbrokerVersion)")
    exit(0)
  default: fail("unknown option \(argument)")
  }
}
if (configuration.socketPath == nil) == (configuration.brokerBinary == nil) {
  fail("give exactly one of --socket and --broker")
}
if configuration.failingSyncs != nil && configuration.brokerBinary == nil {
  fail("--failing-syncs needs a broker to start: give --broker")
}
if configuration.tcp && configuration.ircShare == 0 {
  fail("--tcp is for IRC clients: give --wire irc or --irc-share")
}
if configuration.privacy && (getuid() != 0 || configuration.users.count < 2) {
  fail("--privacy needs root and at least two --users")
}
if configuration.webShare > 0 && (getuid() != 0 || configuration.users.isEmpty) {
  fail("--web-share needs root and --users: the web door refuses root and the broker's own user")
}
if configuration.webShare > 0 && configuration.socketPath != nil && configuration.webPort == nil {
  fail("--web-share with --socket needs the broker's --web-listen port as --web-port")
}
if configuration.tcp && configuration.socketPath != nil && configuration.ircTCPPort == nil {
  fail("--tcp with --socket needs the broker's --irc-listen port as --irc-port")
}

do {
  let report = try Fuzzer.run(configuration)
  print(report.summary)
  exit(report.passed ? 0 : 1)
} catch {
  FileHandle.standardError.write(Data("chatfuzz: \(error)\n".utf8))
  exit(1)
}

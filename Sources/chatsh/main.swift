import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

setlocale(LC_ALL, "")
let localeNote = useUTF8Locale()
// A parent may hand down blocked signals (Foundation's Process does, from a
// Dispatch thread); chatsh must still end on SIGTERM and SIGINT.
var noSignals = sigset_t()
sigemptyset(&noSignals)
sigprocmask(SIG_SETMASK, &noSignals, nil)
signal(SIGPIPE, SIG_IGN)

let environment = ProcessInfo.processInfo.environment
let invocation: Invocation
do {
  invocation = try OptionParser.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  complain(error.message)
  if let command = error.command {
    // Only the usage line; the whole text is one `--help` away.
    let usage = Usage.command(command).split(separator: "\n").first.map(String.init) ?? ""
    writeAll(2, usage + "\n(see chatsh \(command) --help)\n")
  } else {
    writeAll(2, Usage.synopsis + "\n")
  }
  exit(ExitCode.usage.rawValue)
}

let socket = SocketPath.resolve(option: invocation.socket, environment: environment)
let trust = BrokerTrust(options: invocation.trustUsers, environment: environment)

// A TZ that names no zone: said once, with the zone used instead, rather
// than showing and reading times in another zone without a word
// (chatsh(1), ENVIRONMENT).
let zone = LocalZone.current
let zoneNote = zone.problem.map { "\($0): times are in \(zone.name)" }

// NO_COLOR applies to everything that colours (no-color.org); --color
// overrides it either way (chatsh(1)).
let noColor = !(environment["NO_COLOR"] ?? "").isEmpty

switch invocation.command {
case .help(let command):
  writeAll(1, Usage.command(command ?? "") + "\n")
case .version:
  writeAll(1, "chatsh \(chatbrokerVersion) (protocol \(chatbrokerVersion))\n")
case .interactive(let targets):
  guard isatty(0) == 1 && isatty(1) == 1 else {
    complain("the chat screen needs a terminal; in scripts use a command such as say or tail")
    writeAll(2, Usage.synopsis + "\n")
    exit(ExitCode.usage.rawValue)
  }
  exit(
    runInteractive(
      socket: socket, trust: trust, targets: targets, environment: environment,
      notes: [localeNote, zoneNote].compactMap { $0 }, zone: zone,
      color: invocation.color == .always || (invocation.color == .auto && !noColor)
    ).rawValue)
default:
  if let zoneNote { complain(zoneNote) }
  let color: Bool
  switch invocation.color {
  case .always: color = true
  case .never: color = false
  case .auto: color = isatty(1) == 1 && !noColor
  }
  var script = ScriptMode(socket: socket, trust: trust, color: color)
  script.wait = invocation.wait
  script.notice = invocation.notice
  script.block = invocation.block
  script.replyTo = invocation.replyTo.flatMap(MessageID.init)
  exit(script.run(invocation.command).rawValue)
}

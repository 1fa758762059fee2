import Broker
import Foundation
import LineProtocol

/// The command line of chatbroker. The usage text is the man page's SYNOPSIS.
struct Options {
  var socketPath: String?
  var socketMode: mode_t = 0o666
  var stateDirectory: String?
  var sync = true
  var repair = false
  var verbose = false
  /// `--compact-min-size`: the journal is never compacted below this size.
  var compactMinSize = FileJournal.defaultCompactionFloor
  /// `--purge-interval`: seconds between two compactions that taken-back
  /// texts start, the longest such a text stays in the journal file.
  var purgeInterval = JournalCommitter.defaultPurgeInterval
  var limits = Limits()
  /// `--irc-socket`: nil for irc.sock beside the main socket, empty for none.
  var ircSocketPath: String?
  var ircBacklog = 50
  /// `--server-name`: what the IRC gateway calls itself; nil for the host name.
  var serverName: String?
  /// `--irc-listen`: a loopback address and port for IRC over TCP.
  var ircListen: LoopbackTCP.Endpoint?
  /// `--web-listen`, each time it is given: loopback addresses and ports
  /// of the browser door.
  var webListen: [LoopbackTCP.Endpoint] = []
  /// `--nats`, `--node`, `--share` and the NATS credentials.
  var federation = FederationOptions()

  static let usage = """
    usage: chatbroker [-hV] [--socket path] [--socket-mode mode] [--state-dir dir]
                      [--no-sync] [--repair] [--verbose] [--compact-min-size bytes]
                      [--purge-interval seconds] [--max-line-bytes n]
                      [--history-per-conversation n]
                      [--history-bytes-per-conversation bytes] [--history-request n]
                      [--pending-per-user n] [--horizon-days n]
                      [--sessions-per-user n] [--output-limit bytes]
                      [--max-rooms n] [--new-rooms-per-minute n]
                      [--irc-socket path] [--irc-listen address:port] [--irc-backlog n]
                      [--server-name name] [--web-listen address:port]
                      [--nats urls] [--node name] [--share patterns]
                      [--nats-user user] [--nats-password password] [--nats-token token]
                      [--nats-creds file] [--nats-replicas n]
    """

  static let help = """
    chatbroker \(chatbrokerVersion): chat for the people who share this host

    \(usage)

      --socket path        Unix socket to listen on (env CHATBROKER_SOCKET); ignored
                           when systemd passes sockets
      --socket-mode mode   octal mode of a socket bound here (default 0666)
      --state-dir dir      where the journal lives (env STATE_DIRECTORY)
      --no-sync            do not fdatasync the journal (throwaway state only)
      --repair             keep every readable journal record, set damaged ones aside
      --verbose            log debug events too
      --compact-min-size bytes  journal size below which it is never compacted
                           (default 67108864)
      --purge-interval seconds  longest a taken-back text stays in the journal
                           file, and least time between the compactions it
                           starts (default 60)
      --max-line-bytes n   longest request line (default 4096)
      --history-per-conversation n  messages kept per conversation (default 10000)
      --history-bytes-per-conversation bytes  bytes of text kept per conversation,
                           the newest message always (default 4194304)
      --history-request n  most lines one HISTORY returns (default 1000)
      --pending-per-user n scheduled messages per user (default 1000)
      --horizon-days n     how far ahead SAYAT may schedule (default 366)
      --sessions-per-user n  connections per user (default 64)
      --output-limit bytes unsent output before a client is dropped (default 8388608)
      --max-rooms n        rooms in all (default 10000)
      --new-rooms-per-minute n  rooms one user may create per minute (default 60)
      --irc-socket path    Unix socket for IRC clients (default irc.sock beside the
                           socket; empty for none)
      --irc-listen address:port  also IRC over TCP, on a loopback address only
                           (127.0.0.1:6667, [::1]:6667); the kernel names each
                           client's owner (sock_diag), or it is refused
      --irc-backlog n      lines of a room an IRC client gets on JOIN (default 50, 0 for none)
      --server-name name   the server's name to IRC clients (default: the host name)
      --web-listen address:port  the browser door, on a loopback address only
                           (127.0.0.1:8080, [::1]:8080; may be given twice); the
                           kernel names each client's owner, a token from
                           chatsh web must match it
      --nats urls          NATS servers of the JetStream cluster that shares rooms with
                           other hosts (nats://host:port, separated by commas)
      --node name          this host's name in the federation (default: the host name)
      --share patterns     rooms shared with the other hosts: fnmatch(3) patterns
                           (#ops, '#team-*'), separated by commas; default none
      --nats-user user     NATS user name (with --nats-password)
      --nats-password password  NATS password
      --nats-token token   NATS token
      --nats-creds file    NATS credentials file (JWT and NKey seed)
      --nats-replicas n    replicas of the stream if this host creates it (default 3)
      -h, --help           show this help
      -V, --version        show the version

    See chatbroker(8) for the daemon and chatbroker(7) for the protocol.
    """

  enum Outcome {
    case run(Options)
    case exit(message: String, status: ExitCode)
  }

  static func parse(_ arguments: [String]) -> Outcome {
    var options = Options()
    var index = 0
    func value(_ name: String) -> String? {
      index += 1
      return index < arguments.count ? arguments[index] : nil
    }
    while index < arguments.count {
      var argument = arguments[index]
      var inline: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        inline = String(argument[argument.index(after: equals)...])
        argument = String(argument[..<equals])
      }
      let next = { inline ?? value(argument) }
      switch argument {
      case "-h", "--help": return .exit(message: help, status: .success)
      case "-V", "--version":
        return .exit(message: "chatbroker \(chatbrokerVersion)", status: .success)
      case "--socket":
        guard let path = next(), !path.isEmpty else { return missing(argument) }
        options.socketPath = path
      case "--socket-mode":
        guard let text = next(), let mode = mode_t(text, radix: 8), mode <= 0o777 else {
          return bad(argument, "an octal mode such as 0660")
        }
        options.socketMode = mode
      case "--state-dir":
        guard let path = next(), !path.isEmpty else { return missing(argument) }
        options.stateDirectory = path
      case "--irc-socket":
        guard let path = next() else { return missing(argument) }
        options.ircSocketPath = path
      case "--irc-listen":
        guard let text = next(), let listen = LoopbackTCP.parse(text) else {
          return bad(argument, "a loopback address and port such as 127.0.0.1:6667 or [::1]:6667")
        }
        options.ircListen = listen
      case "--web-listen":
        guard let text = next(), let listen = LoopbackTCP.parse(text) else {
          return bad(argument, "a loopback address and port such as 127.0.0.1:8080 or [::1]:8080")
        }
        guard options.webListen.count < 2, !options.webListen.contains(listen) else {
          return bad(argument, "at most two loopback addresses, each once")
        }
        options.webListen.append(listen)
      case "--irc-backlog":
        guard let text = next(), let number = Int(text), number >= 0 else {
          return bad(argument, "a whole number from 0")
        }
        options.ircBacklog = min(number, 1000)
      case "--server-name":
        guard let name = next(), Server.Options.isServerName(name) else {
          return bad(
            argument,
            "a name of 1 to \(Server.Options.maximumServerNameBytes) letters, digits, . and -, "
              + "starting with a letter or digit")
        }
        options.serverName = name
      case "--no-sync": options.sync = false
      case "--repair": options.repair = true
      case "--verbose", "-v": options.verbose = true
      case "--compact-min-size":
        guard let text = next(), let number = Int64(text), number >= 0 else {
          return bad(argument, "a number of bytes from 0")
        }
        options.compactMinSize = number
      case "--purge-interval":
        guard let text = next(), let number = Int(text), (0...86_400).contains(number) else {
          return bad(argument, "a number of seconds from 0 to 86400")
        }
        options.purgeInterval = number
      case "--max-line-bytes", "--history-per-conversation", "--history-bytes-per-conversation",
        "--history-request",
        "--pending-per-user", "--horizon-days", "--sessions-per-user", "--output-limit",
        "--max-rooms", "--new-rooms-per-minute":
        guard let text = next(), let number = Int(text), number > 0 else {
          return bad(argument, "a whole number from 1")
        }
        if argument == "--max-line-bytes" && number > Limits.maximumLineBytes {
          return bad(argument, "a whole number from 1 to \(Limits.maximumLineBytes)")
        }
        options.setLimit(argument, number)
      case _ where FederationOptions.names.contains(argument):
        guard let text = next() else { return missing(argument) }
        if let expected = options.federation.set(argument, text) { return bad(argument, expected) }
      default:
        return .exit(message: "chatbroker: unknown option \(argument)\n\(usage)", status: .usage)
      }
      index += 1
    }
    if let clash = options.federation.check() {
      return .exit(message: "chatbroker: \(clash)\n\(usage)", status: .usage)
    }
    return .run(options)
  }

  private mutating func setLimit(_ name: String, _ number: Int) {
    switch name {
    case "--max-line-bytes": limits.lineBytes = number
    case "--history-per-conversation": limits.historyPerConversation = number
    case "--history-bytes-per-conversation": limits.historyBytesPerConversation = number
    case "--history-request": limits.historyRequest = number
    case "--pending-per-user": limits.pendingPerUser = number
    case "--horizon-days": limits.horizonMilliseconds = Int64(min(number, 100_000)) * 86_400_000
    case "--sessions-per-user": limits.sessionsPerUser = number
    case "--max-rooms": limits.rooms = number
    case "--new-rooms-per-minute": limits.newRoomsPerUserPerMinute = number
    default: limits.outputBytesPerConnection = number
    }
  }

  private static func missing(_ option: String) -> Outcome {
    .exit(message: "chatbroker: \(option) needs a value\n\(usage)", status: .usage)
  }

  private static func bad(_ option: String, _ expected: String) -> Outcome {
    .exit(message: "chatbroker: \(option) needs \(expected)\n\(usage)", status: .usage)
  }
}

extension Options {
  /// `--irc-listen` as typed back: `127.0.0.1:6667`, `[::1]:6667`.
  var ircListenText: String { ircListen?.description ?? "" }
}

import Foundation
import LineProtocol

/// What a listener's clients speak.
public enum WireFormat: Sendable {
  /// chatbroker(7)'s line protocol.
  case line
  /// IRC (chatbroker(7), "IRC").
  case irc
  /// IRC on the loopback TCP listener: the owner comes from the kernel
  /// (netlink sock_diag, ``TCPPeerOwner``).
  case ircOverTCP

  var isIRC: Bool { self != .line }

  /// As the debug log names it (chatbroker(8), "LOGGING").
  var logName: String {
    switch self {
    case .line: "line"
    case .irc: "irc"
    case .ircOverTCP: "irc-tcp"
    }
  }
}

/// The wire format of a connection: how its input becomes requests for the
/// engine and how the engine's events become its bytes. The engine speaks
/// values only; this is where bytes begin.
extension Connection {
  /// The event in this connection's wire format, encoded once per format
  /// (and per IRC capability set) and shared by every connection that
  /// speaks it.
  func encode(_ outgoing: Outgoing) -> [UInt8] {
    if let irc { return irc.encode(outgoing) }
    return outgoing.line
  }
}

extension Engine {
  /// The zone local clock times are read in, for IRC's `[17:52]` prefixes.
  var timeZone: TimeZone { clock.timeZone }
}

extension IRCSession {
  /// IRC lines are 512 bytes, plus up to 4096 of tags from the client.
  static let maximumLineBytes = 512 + 4096
}

extension Server {
  /// One framed input line: decoded by the connection's codec and handed
  /// to the engine as a request, or answered with the codec's error.
  func receive(_ frame: Frame, from connection: Connection) {
    if let irc = connection.irc {
      let actions: [IRCSession.Action]
      if case .line(let line) = frame {
        actions = irc.receive(line) {
          IRCSession.Counts(
            connections: connections.count, rooms: engine.roomCount,
            roomCreated: engine.roomCreated,
            activeConversations: activeConversationsCharged)
        }
      } else {
        actions = irc.refuse(frame)
      }
      perform(actions, for: connection)
      return
    }
    switch LineCodec.request(from: frame, maximumLineBytes: options.limits.lineBytes) {
    case .success(let request):
      logRequest(request.verb.rawValue, from: connection)
      engine.receive(request, from: connection.id)
    case .failure(let error):
      logRequest(error.verb, from: connection, refused: error.code)
      engine.refuse(error, from: connection.id)
    }
  }

  /// `--verbose`: one debug line per request, its verb and who sent it
  /// (never its text), and the error code when it was refused unread
  /// (chatbroker(8), "LOGGING").
  private func logRequest(_ verb: String, from connection: Connection, refused: ErrorCode? = nil) {
    guard log.isLogging(.debug) else { return }
    var fields = [("conn", "\(connection.id)"), ("user", connection.user), ("verb", verb)]
    if let refused { fields.append(("error", refused.rawValue)) }
    log.log(.debug, "request", fields: fields.map { (key: $0.0, value: $0.1) })
  }

  /// What one step of an IRC line asks, in order.
  func perform(_ actions: [IRCSession.Action], for connection: Connection) {
    for action in actions {
      guard !connection.closing else { return }
      switch action {
      case .reply(let bytes): enqueue(bytes, to: connection, kind: .neutral)
      case .request(let request):
        logRequest(request.verb.rawValue, from: connection)
        engine.receive(request, from: connection.id)
      case .registered: break
      case .close:
        engine.disconnect(connection.id)
        close(connection.id)
      }
    }
  }
}

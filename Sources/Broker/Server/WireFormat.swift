import Foundation
import Glibc
import LineProtocol

/// What a listener's clients speak, and where their identity comes from:
/// one of chatbroker(8)'s doors.
public enum WireFormat: Sendable {
  /// chatbroker(7)'s line protocol.
  case line
  /// IRC (chatbroker(7), "IRC").
  case irc
  /// IRC on the loopback TCP listener.
  case ircOverTCP
  /// The browser door: HTTP and chatbroker(7) over WebSocket, on a
  /// loopback TCP listener (chatbroker(8), `--web-listen`).
  case web

  /// How the peer's Unix user is learned: always from the kernel, never
  /// from anything the client says.
  var credentials: CredentialSource {
    self == .ircOverTCP || self == .web ? .tcpSocketOwner : .peerCredentials
  }

  /// As the debug log names it (chatbroker(8), "LOGGING").
  var logName: String {
    switch self {
    case .line: "line"
    case .irc: "irc"
    case .ircOverTCP: "irc-tcp"
    case .web: "web"
    }
  }
}

/// Where a connection's Unix user comes from.
enum CredentialSource {
  /// `SO_PEERCRED` of a Unix socket: who connected (``PeerCredentials``).
  case peerCredentials
  /// The owner of the client's end of a loopback TCP connection, asked of
  /// the kernel by netlink sock_diag (``TCPPeerOwner``).
  case tcpSocketOwner

  /// The peer's uid; throws why it cannot be known, and the connection
  /// is refused.
  func uid(of fd: Int32) throws(UnknownPeer) -> uid_t {
    switch self {
    case .peerCredentials:
      do {
        return try PeerCredentials.uid(of: fd)
      } catch {
        throw UnknownPeer(reason: error.description)
      }
    case .tcpSocketOwner:
      switch TCPPeerOwner.uid(of: fd) {
      case .success(let uid): return uid
      case .failure(let refusal): throw UnknownPeer(reason: refusal.description)
      }
    }
  }
}

/// Why a connection's user could not be learned from the kernel.
struct UnknownPeer: Error {
  let reason: String
}

extension Engine {
  /// The zone local clock times are read in, for IRC's `[17:52]` prefixes.
  var timeZone: TimeZone { clock.timeZone }
}

import CShims
import Glibc

/// Who is at the other end of an accepted loopback TCP connection
/// (chatbroker(8), `--irc-listen`). A TCP peer has no SO_PEERCRED, so the
/// kernel is asked over netlink (sock_diag) for the one socket whose own
/// end is our peer's address and whose other end is our local address: the
/// client's. Its owner is believed only while a process still holds that
/// socket (a non-zero inode) and it is connected (ESTABLISHED, FIN_WAIT1,
/// FIN_WAIT2 or CLOSE_WAIT). A client that closed before the broker accepted
/// it leaves a timewait entry or an orphan, which the kernel lists with uid
/// 0 and no inode: such a connection, like one the kernel does not list or
/// a query that fails, is refused, with the reason.
public enum TCPPeerOwner {
  /// Why a connection has no owner the broker believes, as logged with
  /// `connection refused reason=...` (chatbroker(8), "LOGGING").
  public struct Refusal: Error, CustomStringConvertible, Equatable {
    public let description: String
  }

  /// How long one query may wait for the kernel's answer. The kernel answers
  /// within sendto(2), so this bounds only what should never happen; at most
  /// this many milliseconds of the serving thread per refused connection.
  public static let timeoutMilliseconds: Int32 = 10

  /// The uid owning the client's end of `fd`, an accepted connection on a
  /// loopback address, or why there is none.
  public static func uid(of fd: Int32) -> Result<uid_t, Refusal> {
    guard let local = LoopbackTCP.Endpoint(of: fd, peer: false),
      let peer = LoopbackTCP.Endpoint(of: fd, peer: true)
    else {
      return .failure(
        Refusal(description: "the TCP peer is gone (\(String(cString: strerror(errno))))"))
    }
    guard peer.isLoopback, peer.family == local.family else {
      return .failure(Refusal(description: "the TCP peer \(peer) is not on a loopback address"))
    }
    // The client's socket: its own end is our peer, its other end us.
    let socket: chat_tcp_socket
    switch lookup(source: peer, destination: local) {
    case .success(let found): socket = found
    case .failure(let refusal): return .failure(refusal)
    }
    guard socket.inode != 0 else {
      return .failure(
        Refusal(
          description:
            "the TCP peer \(peer) closed before it was accepted (\(stateName(socket.state)), no owner)"
        ))
    }
    guard [established, finWait1, finWait2, closeWait].contains(socket.state) else {
      return .failure(
        Refusal(description: "the TCP peer \(peer) is not connected (\(stateName(socket.state)))"))
    }
    return .success(socket.uid)
  }

  /// What the kernel lists for the TCP socket from `source` to
  /// `destination`, one netlink round trip.
  public static func lookup(source: LoopbackTCP.Endpoint, destination: LoopbackTCP.Endpoint)
    -> Result<chat_tcp_socket, Refusal>
  {
    var found = chat_tcp_socket()
    let status = source.address.withUnsafeBytes { sourceBytes in
      destination.address.withUnsafeBytes { destinationBytes in
        chat_tcp_socket_lookup(
          source.family, sourceBytes.baseAddress, source.port, destinationBytes.baseAddress,
          destination.port, timeoutMilliseconds, &found)
      }
    }
    switch status {
    case 0: return .success(found)
    case ENOENT:
      return .failure(Refusal(description: "the kernel lists no TCP socket for the peer \(source)"))
    case ETIMEDOUT:
      return .failure(
        Refusal(
          description: "sock_diag did not answer within \(timeoutMilliseconds) ms for \(source)"))
    case EPROTO:
      return .failure(
        Refusal(description: "sock_diag answered about another socket than \(source)"))
    default:
      return .failure(
        Refusal(description: "sock_diag failed for \(source): \(String(cString: strerror(status)))")
      )
    }
  }

  /// The kernel's TCP states that count as connected (include/net/tcp_states.h).
  static let established: UInt8 = 1
  static let finWait1: UInt8 = 4
  static let finWait2: UInt8 = 5
  static let closeWait: UInt8 = 8

  /// A state as ss(8) names it.
  static func stateName(_ state: UInt8) -> String {
    let names = [
      1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2",
      6: "TIME_WAIT", 7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING",
      12: "NEW_SYN_RECV",
    ]
    return names[Int(state)] ?? "state \(state)"
  }
}

import Foundation
import Glibc

/// The IRC listener on TCP, loopback only (chatbroker(8), `--irc-listen`):
/// a TCP peer has no SO_PEERCRED, so its owner is read from the kernel's
/// socket table, /proc/net/tcp, where the client's end of the connection
/// is listed with its uid. A connection whose owner cannot be found is
/// refused.
public enum LoopbackTCP {
  /// `127.0.0.1:6667` into an address and a port; nil unless the address
  /// is IPv4 loopback (127.0.0.0/8) and the port 1 to 65535.
  public static func parse(_ text: String) -> (address: in_addr, port: UInt16)? {
    guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
      port > 0
    else { return nil }
    var address = in_addr()
    guard inet_pton(AF_INET, String(text[..<colon]), &address) == 1 else { return nil }
    guard UInt32(bigEndian: address.s_addr) >> 24 == 127 else { return nil }
    return (address, port)
  }

  /// A listening, non-blocking TCP socket on a loopback address.
  public static func listen(address: in_addr, port: UInt16) throws(SystemError) -> Int32 {
    let fd = try systemCall("socket") {
      socket(
        AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
    }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = port.bigEndian
    socketAddress.sin_addr = address
    do throws(SystemError) {
      _ = try systemCall("bind") {
        withUnsafePointer(to: &socketAddress) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
          }
        }
      }
      _ = try systemCall("listen") { Glibc.listen(fd, SOMAXCONN) }
    } catch {
      close(fd)
      throw error
    }
    return fd
  }

  /// The uid owning the client's end of an accepted loopback connection,
  /// from /proc/net/tcp; nil when it is not listed (or not loopback).
  public static func ownerUID(of fd: Int32) -> uid_t? {
    guard let peer = address(of: fd, peer: true), let local = address(of: fd, peer: false),
      UInt32(bigEndian: peer.sin_addr.s_addr) >> 24 == 127
    else { return nil }
    // The client's socket: its local address is our peer, its remote ours.
    let wantedLocal = entry(peer)
    let wantedRemote = entry(local)
    guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .ascii) else {
      return nil
    }
    for line in table.split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ")
      guard fields.count > 7, fields[1] == wantedLocal, fields[2] == wantedRemote else { continue }
      return uid_t(fields[7])
    }
    return nil
  }

  /// An address as /proc/net/tcp writes it: the 32-bit address as stored,
  /// then the port, both in upper-case hexadecimal.
  static func entry(_ address: sockaddr_in) -> Substring {
    let host = String(format: "%08X", address.sin_addr.s_addr)
    let port = String(format: "%04X", UInt16(bigEndian: address.sin_port))
    return Substring(host + ":" + port)
  }

  private static func address(of fd: Int32, peer: Bool) -> sockaddr_in? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let status = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
      }
    }
    guard status == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
    return address
  }
}

import Foundation
import Glibc

/// The IRC listener on TCP, loopback only (chatbroker(8), `--irc-listen`):
/// IPv4 (127.0.0.0/8) or IPv6 (`[::1]`). A TCP peer has no SO_PEERCRED, so
/// its owner is asked of the kernel (``TCPPeerOwner``), and a connection
/// whose owner the kernel does not vouch for is refused.
public enum LoopbackTCP {
  /// One end of a TCP connection, or a listener's address: an IPv4 or IPv6
  /// address (in network order) and a port.
  public struct Endpoint: CustomStringConvertible, Equatable, Sendable {
    /// AF_INET or AF_INET6.
    public let family: Int32
    /// 4 or 16 bytes, in network order.
    public let address: [UInt8]
    public let port: UInt16

    public init(family: Int32, address: [UInt8], port: UInt16) {
      self.family = family
      self.address = address
      self.port = port
    }

    /// The local (`peer` false) or remote end of the socket `fd`; nil when
    /// it has none (not connected, or not IPv4 or IPv6).
    public init?(of fd: Int32, peer: Bool) {
      var storage = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let status = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
        }
      }
      guard status == 0 else { return nil }
      switch Int32(storage.ss_family) {
      case AF_INET:
        var address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
        self.init(
          family: AF_INET, address: withUnsafeBytes(of: &address.sin_addr) { Array($0) },
          port: UInt16(bigEndian: address.sin_port))
      case AF_INET6:
        var address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
        self.init(
          family: AF_INET6, address: withUnsafeBytes(of: &address.sin6_addr) { Array($0) },
          port: UInt16(bigEndian: address.sin6_port))
      default:
        return nil
      }
    }

    /// 127.0.0.0/8, or ::1.
    public var isLoopback: Bool {
      switch family {
      case AF_INET: address.count == 4 && address[0] == 127
      case AF_INET6: address == Array(repeating: 0, count: 15) + [1]
      default: false
      }
    }

    /// `127.0.0.1:6667` or `[::1]:6667`, as `--irc-listen` takes it.
    public var description: String {
      var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
      _ = address.withUnsafeBytes {
        inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count))
      }
      let host = String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
  }

  /// `127.0.0.1:6667` or `[::1]:6667` into an endpoint; nil unless the
  /// address is loopback (127.0.0.0/8, or ::1 in brackets) and the port 1
  /// to 65535.
  public static func parse(_ text: String) -> Endpoint? {
    guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
      port > 0
    else { return nil }
    var host = text[..<colon]
    let family: Int32
    var bytes = [UInt8](repeating: 0, count: 16)
    if host.hasPrefix("[") && host.hasSuffix("]") {
      host = host.dropFirst().dropLast()
      family = AF_INET6
    } else {
      family = AF_INET
      bytes = [0, 0, 0, 0]
    }
    guard inet_pton(family, String(host), &bytes) == 1 else { return nil }
    let endpoint = Endpoint(family: family, address: bytes, port: port)
    return endpoint.isLoopback ? endpoint : nil
  }

  /// A listening, non-blocking TCP socket on a loopback address; an IPv6
  /// one takes IPv6 only (IPV6_V6ONLY), so every peer is ::1.
  public static func listen(on endpoint: Endpoint) throws(SystemError) -> Int32 {
    let fd = try systemCall("socket") {
      socket(
        endpoint.family,
        Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
    }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    do throws(SystemError) {
      if endpoint.family == AF_INET6 {
        _ = try systemCall("setsockopt") {
          setsockopt(
            fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
      }
      _ = try systemCall("bind") { bindSocket(fd, to: endpoint) }
      _ = try systemCall("listen") { Glibc.listen(fd, SOMAXCONN) }
    } catch {
      close(fd)
      throw error
    }
    return fd
  }

  private static func bindSocket(_ fd: Int32, to endpoint: Endpoint) -> Int32 {
    if endpoint.family == AF_INET6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = endpoint.port.bigEndian
      withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: endpoint.address) }
      return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = endpoint.port.bigEndian
    withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: endpoint.address) }
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }
}

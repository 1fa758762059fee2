import Glibc

/// TCP on 127.0.0.1, for what reaches the broker's loopback IRC listener
/// (chatbroker(8), `--irc-listen`) from outside it: the fuzzer and the
/// tests. Descriptors are close-on-exec, like ``UnixSocket``'s.
public enum LoopbackSocket {
  /// A blocking connection to 127.0.0.1:`port`.
  public static func connect(port: UInt16) throws(SystemError) -> Int32 {
    let fd = try systemCall("socket") { socket(AF_INET, UnixSocket.streamSocketType, 0) }
    var address = loopback(port: port)
    do throws(SystemError) {
      _ = try systemCall("connect", subject: "127.0.0.1:\(port)") {
        withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
          }
        }
      }
    } catch {
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// A port of 127.0.0.1 that was free a moment ago (the kernel's choice
  /// for a socket bound to port 0).
  public static func freePort() throws(SystemError) -> UInt16 {
    let fd = try systemCall("socket") { socket(AF_INET, UnixSocket.streamSocketType, 0) }
    defer { Glibc.close(fd) }
    var address = loopback(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = try systemCall("bind", subject: "127.0.0.1:0") {
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1
        }
      }
    }
    return UInt16(bigEndian: address.sin_port)
  }

  private static func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }
}

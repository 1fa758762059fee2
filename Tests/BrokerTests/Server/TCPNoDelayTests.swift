import CShims
import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// The TCP doors (chatbroker(8), `--irc-listen`, `--web-listen`) hand
/// each pass's output to the kernel to leave at once: with Nagle's
/// algorithm on, a write waits while an earlier one is unacknowledged,
/// and a client that delays its acknowledgements (most do) would get
/// every line after the first a little late. Asked of the kernel, on the
/// broker's own end of a connection.
@Suite("TCP doors send without delay")
struct TCPNoDelayTests {
  @Test(
    "the broker's end of every connection on the IRC and web doors has TCP_NODELAY",
    arguments: ["--irc-listen", "--web-listen"])
  func acceptedWithoutDelay(door: String) throws {
    try UnixUsers.ensure()
    let port = try LoopbackSocket.freePort()
    let broker = try BrokerProcess().start(["--no-sync", door, "127.0.0.1:\(port)"])
    let pid = try #require(broker.process?.processIdentifier)
    let client = try WebDoorClient(port: port, as: "cbtest1")
    var end: Int32 = -1
    try waitUntil("the broker accepted the connection") {
      end = brokersEnd(of: client.fd, in: pid)
      return end >= 0
    }
    defer { close(end) }
    #expect(chat_sends_without_delay(end) == 1)
    // The client's own end is as the client made it: the check can fail.
    #expect(chat_sends_without_delay(client.fd) == 0)
  }

  /// A copy of the descriptor of process `pid` whose peer is `client`'s
  /// end (its port on 127.0.0.1), or -1 while there is none.
  private func brokersEnd(of client: Int32, in pid: pid_t) -> Int32 {
    guard let local = address(client, getsockname),
      let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
    else { return -1 }
    for fd in entries.compactMap(Int32.init) {
      let copy = chat_descriptor_of(pid, fd)
      guard copy >= 0 else { continue }
      if let peer = address(copy, getpeername), peer.sin_family == sa_family_t(AF_INET),
        peer.sin_port == local.sin_port
      {
        return copy
      }
      close(copy)
    }
    return -1
  }

  private func address(
    _ fd: Int32,
    _ name: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
  ) -> sockaddr_in? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(fd, $0, &length) }
    }
    return named == 0 ? address : nil
  }
}

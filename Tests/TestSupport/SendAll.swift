import Glibc

/// Sends every byte on a connected socket, going on after short sends and
/// EINTR, with MSG_NOSIGNAL: a broker that closed the connection is an
/// error the test reads, not a SIGPIPE that ends the test runner. The one
/// sender of the test clients (LineClient, WebDoorClient).
func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws {
  var offset = 0
  while offset < bytes.count {
    let written = bytes[offset...].withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
    if written < 0 && errno == EINTR { continue }
    guard written > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
    offset += written
  }
}

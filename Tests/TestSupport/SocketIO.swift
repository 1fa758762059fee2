import Foundation
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

/// What `fd` has, up to 64 KiB, waited for until `deadline`; nil at the
/// end of the stream (or a reset); `failure` is thrown when nothing came
/// in time. The one reader of the test clients (LineClient,
/// WebDoorClient).
func readSome(_ fd: Int32, before deadline: Date, failure: String) throws -> [UInt8]? {
  while true {
    let remaining = deadline.timeIntervalSinceNow
    guard remaining > 0 else { throw TestFailure(failure) }
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let ready = poll(&poller, 1, Int32(max(1, remaining * 1000)))
    if ready < 0 && errno == EINTR { continue }
    guard ready > 0 else { continue }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else { return nil }
    return Array(chunk[0..<count])
  }
}

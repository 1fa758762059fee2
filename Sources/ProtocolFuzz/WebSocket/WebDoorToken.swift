import Broker
import Glibc
import Posix

/// A token of the web door for a Unix user, as `chatsh web` gets one:
/// `WEB` on the Unix socket, connected as that user (chatbroker(7), `WEB`).
enum WebDoorToken {
  static func mint(socketPath: String, user: String, timeout: Double = 5) throws -> String {
    let fd: Int32
    do {
      fd = try connectUnixSocket(socketPath, as: user)
    } catch {
      throw FuzzError(error.description)
    }
    defer { close(fd) }
    let request = Array("WEB\nQUIT\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var buffer: [UInt8] = []
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
      while let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        let words = line.split(separator: " ")
        if line.hasPrefix("OK WEB "), words.count == 5 { return String(words[2]) }
        if line.hasPrefix("ERR ") { throw FuzzError("WEB as \(user) was answered \(line)") }
      }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 100) >= 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count == 0 { break }
      if count > 0 { buffer += chunk[0..<count] }
    }
    throw FuzzError("WEB as \(user) got no answer")
  }
}

import Glibc

/// Unix stream sockets by path: the listening socket when chatbroker binds it
/// itself (without systemd's socket activation), and connections to one:
/// chatsh's, the benchmarks', the fuzzer's and the tests', and the check
/// for a live broker. Descriptors are close-on-exec, so none leaks into a
/// child process.
public enum UnixSocket {
  /// Binds and listens on `path`, creating its directory (0755) if needed.
  /// A socket file left behind by a dead broker is replaced; one that a live
  /// broker answers on is not: that is an error naming the path.
  public static func bind(path: String, mode: mode_t = 0o666) throws(SystemError) -> Int32 {
    guard fits(path) else { throw SystemError("bind", errno: ENAMETOOLONG, subject: path) }
    try createParentDirectory(of: path)
    try removeStaleSocket(path)
    let fd = try systemCall("socket") {
      socket(AF_UNIX, streamSocketType | Int32(SOCK_NONBLOCK.rawValue), 0)
    }
    do throws(SystemError) {
      _ = try withAddress(path) { pointer, length throws(SystemError) in
        try systemCall("bind", subject: path) { Glibc.bind(fd, pointer, length) }
      }
      // The socket's mode decides who may connect: every local user by default.
      try systemCall("chmod", subject: path) { chmod(path, mode) }
      try systemCall("listen", subject: path) { listen(fd, SOMAXCONN) }
    } catch {
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// `SOCK_STREAM | SOCK_CLOEXEC`: no descriptor leaks into child processes.
  public static let streamSocketType = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)

  /// A blocking connection to the socket at `path`. Fails with the call
  /// `socket` when no socket can be made, else with `connect` (a path too
  /// long for `sun_path` is ENAMETOOLONG, never cut short).
  public static func connect(to path: String) throws(SystemError) -> Int32 {
    guard fits(path) else { throw SystemError("connect", errno: ENAMETOOLONG, subject: path) }
    let fd = try systemCall("socket") { socket(AF_UNIX, streamSocketType, 0) }
    do throws(SystemError) {
      _ = try withAddress(path) { pointer, length throws(SystemError) in
        try systemCall("connect", subject: path) { Glibc.connect(fd, pointer, length) }
      }
    } catch {
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// Whether a broker answers on `path` right now.
  public static func isLive(_ path: String) -> Bool {
    guard let fd = try? connect(to: path) else { return false }
    Glibc.close(fd)
    return true
  }

  private static func removeStaleSocket(_ path: String) throws(SystemError) {
    var status = stat()
    guard lstat(path, &status) == 0 else { return }
    guard status.st_mode & S_IFMT == S_IFSOCK else {
      throw SystemError("bind", errno: EEXIST, subject: "\(path) (not a socket)")
    }
    if isLive(path) {
      throw SystemError(
        "bind", errno: EADDRINUSE, subject: "\(path) (another broker answers there)")
    }
    try systemCall("unlink", subject: path) { unlink(path) }
  }

  private static func createParentDirectory(of path: String) throws(SystemError) {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
    let directory = String(path[..<slash])
    var status = stat()
    if stat(directory, &status) == 0 { return }
    try createParentDirectory(of: directory)
    if mkdir(directory, 0o755) != 0 && errno != EEXIST {
      throw SystemError("mkdir", subject: directory)
    }
  }

  /// Whether `path` fits in `sockaddr_un.sun_path` with its NUL.
  public static func fits(_ path: String) -> Bool {
    path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path)
  }

  /// Calls `body` with the `sockaddr_un` for `path` (for bind(2), connect(2)
  /// or sendto(2)), cut to fit: check ``fits(_:)`` first.
  public static func withAddress<T>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> T
  ) throws(SystemError) -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
      for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() {
        buffer[index] = byte
      }
    }
    return try withUnsafePointer(to: &address) { pointer throws(SystemError) in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { rebound throws(SystemError) in
        try body(rebound, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }
}

import Glibc

/// An open file descriptor, as swift-system's `FileDescriptor`: a plain
/// value over the `Int32`, closed only by ``close()``, never by going out
/// of scope, so whoever holds it decides when it ends (a dispatch source's
/// cancel handler, a `defer`).
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
  public let rawValue: Int32

  public init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  public static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
  public static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
  public static let standardError = FileDescriptor(rawValue: STDERR_FILENO)

  /// Closes the descriptor. Not retried on EINTR: on Linux the descriptor
  /// is gone even then, and a retry could close one opened meanwhile.
  public func close() {
    _ = Glibc.close(rawValue)
  }

  /// Writes every byte, going on after short writes and EINTR: for files,
  /// pipes and blocking sockets (on a non-blocking one, EAGAIN throws).
  /// With an `offset`, at that place in the file (pwrite(2)), leaving the
  /// file offset alone.
  public func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int64? = nil)
    throws(SystemError)
  {
    var done = 0
    while done < bytes.count {
      let start = bytes.baseAddress! + done
      let count = try systemCall(offset == nil ? "write" : "pwrite") {
        if let offset {
          Glibc.pwrite(rawValue, start, bytes.count - done, off_t(offset) + done)
        } else {
          Glibc.write(rawValue, start, bytes.count - done)
        }
      }
      // write(2) of at least one byte returns 0 only on a device that takes
      // nothing more: calling again would spin.
      guard count > 0 else { throw SystemError("write", errno: EIO) }
      done += count
    }
  }

  public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
    let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
      do throws(SystemError) {
        try writeAll(buffer)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }

  public func writeAll(_ text: String) throws(SystemError) {
    try writeAll(Array(text.utf8))
  }

  /// The whole of the file at `path`, read with read(2) until its end:
  /// a procfs or sysfs file says its size is 0, and a read sized by that
  /// (Foundation's `String(contentsOfFile:)`) comes back cut at 4 KiB.
  public static func readAll(path: String) throws(SystemError) -> [UInt8] {
    let fd = try systemCall("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
    defer { _ = Glibc.close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = try systemCall("read", subject: path) {
        chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      }
      if count == 0 { return bytes }
      bytes += chunk[..<count]
    }
  }
}

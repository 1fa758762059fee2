#if canImport(Glibc)
  import Glibc
#endif

/// Exit statuses, from sysexits(3) where one fits.
enum ExitStatus: Int32 {
  case success = 0
  /// The broker answered ERR (or refused the connection with ERR).
  case refused = 1
  /// EX_USAGE: the command line is wrong.
  case usage = 64
  /// EX_UNAVAILABLE: no broker answers.
  case unavailable = 69
}

/// Writes all of `text` to a descriptor, retrying short writes and EINTR.
/// Returns false when the reader is gone (EPIPE).
@discardableResult
func writeAll(_ fd: Int32, _ text: String) -> Bool {
  var bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let count = bytes.withUnsafeMutableBytes {
      write(fd, $0.baseAddress! + offset, $0.count - offset)
    }
    if count > 0 {
      offset += count
    } else if count < 0 && errno == EINTR {
      continue
    } else {
      return false
    }
  }
  return true
}

/// `chatsh: message` on standard error.
func complain(_ message: String) {
  writeAll(2, "chatsh: " + message + "\n")
}

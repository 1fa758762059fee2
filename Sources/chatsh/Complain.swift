import Posix

/// Writes all of `text` to a descriptor (``FileDescriptor/writeAll(_:)``).
/// Returns false when the reader is gone (EPIPE) or writing fails.
@discardableResult
func writeAll(_ fd: Int32, _ text: String) -> Bool {
  (try? FileDescriptor(rawValue: fd).writeAll(text)) != nil
}

/// `chatsh: message` on standard error.
func complain(_ message: String) {
  writeAll(2, "chatsh: " + message + "\n")
}

#if canImport(Glibc)
  import Glibc
#endif

/// Buffered standard output for script mode. A reader that went away
/// (`chatsh tail ... | head -1`) ends chatsh quietly with status 0.
struct StandardOutput {
  private var buffer = ""

  mutating func line(_ text: String) {
    buffer += text
    buffer += "\n"
    if buffer.utf8.count >= 65536 { flush() }
  }

  mutating func flush() {
    guard !buffer.isEmpty else { return }
    if !writeAll(1, buffer) { exit(0) }
    buffer = ""
  }
}

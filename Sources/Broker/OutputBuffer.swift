/// Bytes waiting to be written to one connection, in one contiguous buffer so
/// that a flush is a single `send(2)` however many lines are queued. Shared
/// lines are copied in once per recipient (a memcpy of ~100 bytes), which is
/// far cheaper than the system calls it saves.
struct OutputBuffer {
  private var storage: [UInt8] = []
  private var start = 0

  var count: Int { storage.count - start }
  var isEmpty: Bool { start == storage.count }

  mutating func append(_ bytes: [UInt8]) {
    storage.append(contentsOf: bytes)
  }

  /// Drops `written` bytes from the front.
  mutating func consume(_ written: Int) {
    start += written
    if start == storage.count {
      // Keep a small buffer for the next burst; give a large one back.
      if storage.capacity > 64 * 1024 {
        storage = []
      } else {
        storage.removeAll(keepingCapacity: true)
      }
      start = 0
    } else if start >= 64 * 1024 && start * 2 >= storage.count {
      storage.removeSubrange(0..<start)
      start = 0
    }
  }

  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
  }
}

import Foundation

/// A value behind a lock. An `NSLock` (a pthread mutex) rather than
/// Synchronization's `Mutex`: on Linux that one waits with raw futex calls,
/// which ThreadSanitizer cannot see, so it reports races that are none.
final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

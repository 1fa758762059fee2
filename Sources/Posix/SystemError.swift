import Glibc

/// A failed system call: which call, on what, and errno, in words. In the
/// spirit of swift-system's `Errno`, thin and typed; the one error type of
/// the support layer (the broker's start-up and journal report it too).
public struct SystemError: Error, CustomStringConvertible, Sendable {
  public let call: String
  public let errno: Int32
  public let subject: String?

  public init(_ call: String, errno: Int32 = Glibc.errno, subject: String? = nil) {
    self.call = call
    self.errno = errno
    self.subject = subject
  }

  /// errno in words, as strerror(3) says it.
  public var reason: String { String(cString: strerror(errno)) }

  public var description: String {
    if let subject { return "\(call) \(subject): \(reason)" }
    return "\(call): \(reason)"
  }
}

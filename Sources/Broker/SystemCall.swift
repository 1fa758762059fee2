import Glibc

/// A failed system call: which call, on what, and errno, in words. In the
/// spirit of swift-system's `Errno`, thin and typed.
public struct SystemError: Error, CustomStringConvertible, Sendable {
  public let call: String
  public let errno: Int32
  public let subject: String?

  public init(_ call: String, errno: Int32 = Glibc.errno, subject: String? = nil) {
    self.call = call
    self.errno = errno
    self.subject = subject
  }

  public var description: String {
    let reason = String(cString: strerror(errno))
    if let subject { return "\(call) \(subject): \(reason)" }
    return "\(call): \(reason)"
  }
}

/// Runs a system call, retrying it on EINTR, and turns -1 into a
/// ``SystemError`` that names the call.
@discardableResult
func systemCall<Result: BinaryInteger>(
  _ name: String, subject: String? = nil, _ body: () -> Result
) throws(SystemError) -> Result {
  while true {
    let result = body()
    if result != -1 { return result }
    if errno != EINTR { throw SystemError(name, subject: subject) }
  }
}

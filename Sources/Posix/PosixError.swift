import Glibc

/// A system call that failed: what was being done, and the error number.
public struct PosixError: Error, CustomStringConvertible {
  public let operation: String
  public let errorNumber: Int32

  public init(_ operation: String, errorNumber: Int32) {
    self.operation = operation
    self.errorNumber = errorNumber
  }

  public var description: String {
    "cannot \(operation): \(String(cString: strerror(errorNumber)))"
  }
}

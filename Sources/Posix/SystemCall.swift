import Glibc

/// What a system call on a descriptor did, when it may not have had to
/// (swift-nio's `IOResult`): "would block" is an answer on a non-blocking
/// descriptor, not a failure.
public enum IOResult<Value> {
  /// It ran, and returned this (never -1).
  case processed(Value)
  /// EAGAIN or EWOULDBLOCK: nothing to read, no room to write, no client
  /// waiting. Wait for the descriptor to be ready.
  case wouldBlock
  /// EINTR, returned only to a caller that chose ``OnInterrupt/report``: a
  /// signal arrived, and the caller wants to look before calling again.
  case interrupted
}

/// What to do when a signal interrupts a call (EINTR).
public enum OnInterrupt: Sendable {
  /// Call again at once: the caller has nothing to do about a signal.
  case retry
  /// Return ``IOResult/interrupted``: the caller waits for signals too (a
  /// `poll` that must let a SIGWINCH or SIGINT handler's flag be seen).
  case report
}

/// The one system call helper: runs `body`, a call that returns -1 and sets
/// errno on failure, and sorts the outcome. EINTR is retried or reported as
/// the caller chose; EAGAIN/EWOULDBLOCK is ``IOResult/wouldBlock``; any
/// other error throws a ``SystemError`` naming `name` and `subject`.
public func ioCall<Result: BinaryInteger>(
  _ name: String, subject: String? = nil, onInterrupt: OnInterrupt = .retry,
  _ body: () -> Result
) throws(SystemError) -> IOResult<Result> {
  while true {
    let result = body()
    if result != -1 { return .processed(result) }
    switch errno {
    case EINTR where onInterrupt == .retry: continue
    case EINTR: return .interrupted
    case EAGAIN, EWOULDBLOCK: return .wouldBlock
    default: throw SystemError(name, subject: subject)
    }
  }
}

/// ``ioCall(_:subject:onInterrupt:_:)`` for a call that waits until it is
/// done (a blocking descriptor, a path, a socket to set up): EINTR is
/// retried, and EAGAIN, which such a call reports only as a real failure
/// (no memory for a process, a full listen queue), throws like any error.
@discardableResult
public func systemCall<Result: BinaryInteger>(
  _ name: String, subject: String? = nil, _ body: () -> Result
) throws(SystemError) -> Result {
  switch try ioCall(name, subject: subject, body) {
  case .processed(let result): return result
  case .wouldBlock: throw SystemError(name, errno: EAGAIN, subject: subject)
  case .interrupted: preconditionFailure("EINTR is retried")
  }
}

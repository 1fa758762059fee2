import Foundation
import LineProtocol

/// Identifies one accepted connection for the life of the broker process.
/// Never reused, unlike file descriptors, so a stale id can never reach a
/// newer connection.
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
  public let value: Int

  public init(_ value: Int) {
    self.value = value
  }

  public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.value < rhs.value }

  public var description: String { String(value) }
}

/// The wall clock and the time zone that local clock times (`SAYAT #a 18:00`)
/// are read in. Injected, so engine tests run on virtual time.
public protocol WallClock: AnyObject {
  var now: Timestamp { get }
  var timeZone: TimeZone { get }
}

/// Where the engine's effects go. The I/O shell implements it with sockets
/// and a Dispatch timer; tests implement it with arrays.
public protocol EngineOutput: AnyObject {
  /// Queues a finished line for a connection. The shell releases it only once
  /// every journal record appended before it is durable.
  func send(_ line: [UInt8], to connection: ConnectionID)
  /// The engine has forgotten this connection: flush what was sent, then close.
  func close(_ connection: ConnectionID)
  /// Fire ``Engine/timerFired()`` when the wall clock reaches `due`, or never
  /// (`nil`). Replaces any earlier arming: there is one timer for all schedules.
  func armTimer(at due: Timestamp?)
}

/// The journal as the engine sees it: records are appended one request at a
/// time, so a failure can be answered `STORAGE` before any state changes.
public protocol JournalSink: AnyObject {
  /// Appends records as one write: all of them or, on failure, none.
  func append(_ records: [JournalRecord]) throws(StorageError)
}

/// The journal could not be written: the request is refused, nothing changed.
public struct StorageError: Error, Equatable, Sendable {
  public var reason: String

  public init(reason: String) {
    self.reason = reason
  }
}

/// Which login names exist, so `SAY @nobody` can be refused.
public protocol UserDirectory: AnyObject {
  func userExists(_ name: String) -> Bool
}

import Foundation
import LineProtocol

/// Identifies one accepted connection for the life of the broker process.
/// Never reused, unlike file descriptors, so a stale id can never reach a
/// newer connection.
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
  public let value: Int
  /// Where the server keeps the connection (``ConnectionTable``), so that
  /// finding a recipient costs an array index, not a hash; not part of its
  /// identity, and -1 for an id the server did not hand out.
  let slot: Int32

  public init(_ value: Int) {
    self.value = value
    slot = -1
  }

  init(_ value: Int, slot: Int) {
    self.value = value
    self.slot = Int32(truncatingIfNeeded: slot)
  }

  public static func == (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.value == rhs.value }
  public func hash(into hasher: inout Hasher) { hasher.combine(value) }
  public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.value < rhs.value }

  public var description: String { String(value) }

  /// What the server's ``ReadinessPoll`` reports the connection's events
  /// under: the slot and the low half of the value, so that an event still
  /// pending for a closed connection finds nothing in its slot's next one.
  var pollToken: UInt64 {
    UInt64(UInt32(bitPattern: slot)) | UInt64(UInt32(truncatingIfNeeded: value)) << 32
  }
}

/// The wall clock and the time zone that local clock times (`SAYAT #a 18:00`)
/// are read in. Injected, so engine tests run on virtual time.
public protocol WallClock: AnyObject {
  var now: Timestamp { get }
  var timeZone: TimeZone { get }
  /// The zone's name as rules keep it (`UTC`, which Foundation calls `GMT`).
  var timeZoneName: String { get }
}

extension WallClock {
  public var timeZoneName: String { timeZone.identifier }
}

/// Where the engine's effects go. The I/O shell implements it with sockets
/// and the poll's wall-clock timer; tests implement it with arrays.
public protocol EngineOutput: AnyObject {
  /// Queues an event for a connection, in order, to be encoded by the
  /// connection's wire format (once per format when the same ``Outgoing``
  /// goes to many). What `kind` says it shows decides whether it waits for
  /// a sync, and what becomes of it when that sync fails.
  func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind)
  /// The engine has forgotten this connection: flush what was sent, then close.
  func close(_ connection: ConnectionID)
  /// Fire ``Engine/timerFired()`` when the wall clock reaches `due`, or never
  /// (`nil`). Replaces any earlier arming: there is one timer for all schedules.
  func armTimer(at due: Timestamp?)
}

extension EngineOutput {
  /// Queues an event that shows nothing unsynced (``LineKind/neutral``).
  public func send(_ event: BrokerEvent, to connection: ConnectionID) {
    send(Outgoing(event), to: connection, kind: .neutral)
  }
}

/// What a line shows of the journal's records, so that the shell knows
/// without reading the line whether it must wait for a sync, and what
/// becomes of it when that sync fails and its records are rolled back
/// (chatbroker(7), "Order and durability"). Each connection's lines still
/// leave in the order they were sent.
public enum LineKind: Equatable, Sendable {
  /// Shows nothing that a record not yet synced changed: the greeting,
  /// `PING`, `HELP`, errors, `WHO`, `JOIN` and `PART` events, the reply to
  /// a request that wrote nothing. Never waits for a sync of its own, and
  /// leaves unchanged whatever a sync does.
  case neutral
  /// Shows what the records written so far changed (a `MSG`, an item of a
  /// list that shows unsynced state): waits until they are durable; dropped
  /// when they are rolled back.
  case revealing
  /// The final reply of a request that wrote records: waits until they are
  /// durable; becomes `ERR <verb> STORAGE` when they are rolled back.
  case outcome(Verb)
  /// The final reply of a query whose list showed unsynced state: waits
  /// with its items; when that state is rolled back the items are dropped
  /// and the query is answered again from what remains
  /// (``Engine/answerAgain(_:for:)``).
  case answer(Request)
}

/// The journal as the engine sees it: records are appended one request at a
/// time, so a failure can be answered `STORAGE` before any state changes.
public protocol JournalSink: AnyObject {
  /// Appends records as one write: all of them or, on failure, none.
  func append(_ records: [JournalRecord]) throws(StorageError)
  /// A text was taken back (`REDACT`): compact at the end of this pass,
  /// so that the journal file no longer holds it.
  func compactSoon()
}

extension JournalSink {
  public func compactSoon() {}
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

/// Which Unix groups a user is in, for rooms private to a group
/// (chatbroker(7), "Private rooms"). Asked once per session, when a
/// request first needs it, and at each JOIN that concerns a private room;
/// never once per room listed, so a slow directory (LDAP) costs one
/// lookup, not one per room. Injected, so engine tests use a fake one.
public protocol GroupDirectory: AnyObject {
  /// The names of the groups `user` is in, primary and supplementary, as
  /// NSS says now; empty for a user the system does not know.
  func groups(of user: String) -> Set<String>
}

/// A directory in which nobody is in any group: rooms private to a group
/// are readable only by their creator and the users invited. For a
/// scratch engine (compaction) and tests that need no groups.
public final class NoGroups: GroupDirectory {
  public init() {}
  public func groups(of user: String) -> Set<String> { [] }
}

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
  /// Queues a line that shows no journal record (``LineKind/stateless``):
  /// the shell's own lines, such as the `BYE` of a reader too far behind.
  public func send(_ event: BrokerEvent, to connection: ConnectionID) {
    send(Outgoing(event), to: connection, kind: .stateless)
  }
}

/// What a line shows of the journal's records, so that the shell knows
/// without reading the line whether it must wait for a sync, and what
/// becomes of it when that sync fails and its records are rolled back
/// (chatbroker(7), "Order and durability"). The engine decides it in one
/// place for every line it sends (``Engine/label(_:to:)``): nobody labels a
/// line by hand. Each connection's lines still leave in the order they
/// were sent.
public enum LineKind: Equatable, Sendable {
  /// Shows nothing of any record: the greeting, `BYE`, `PING`, `HELP`,
  /// a line the codec could not read. Never waits for a sync of its own,
  /// and leaves unchanged whatever a sync does.
  case stateless
  /// Shows the state as the records written so far left it, through a
  /// change that no rollback undoes (a session joined or left, someone
  /// went away): waits until those records are durable; left as it is
  /// when they are rolled back.
  case lasting
  /// Shows what the records of its own step changed (a `MSG`, an event
  /// of a change), or an item of a list: waits until they are durable;
  /// dropped when they are rolled back.
  case revealing
  /// The final reply of a request that wrote records: waits until they
  /// are durable; becomes `ERR <verb> STORAGE` when they are rolled back.
  case outcome(Verb)
  /// The final reply of a request that wrote nothing and may be answered
  /// again (a query, an error, a JOIN of a room already yours): waits
  /// with its items; when what it saw is rolled back the items are
  /// dropped and the request is answered again from what remains
  /// (``Engine/answerAgain(_:for:)``).
  ///
  /// Indirect, so that the kind is one word: every line held for a sync
  /// carries it (``HeldLine``), a `SAY` to 1,000 receivers holds 1,000 of
  /// them, and a request inline (65 bytes) made each held line 112 bytes
  /// instead of 48 (32 since). Measured with the broker on one core and
  /// `chatbench fanout --servers durable` on the other, four runs in turn
  /// each: 30,000 `SAY`s to 1,000 receivers took the serving thread
  /// 314–365 µs per `SAY` against 374–567, and to 100 receivers 22–24 µs
  /// against 24–28; an answer's box is one allocation per query, no
  /// measurable cost.
  indirect case answer(Request)

  /// Whether it waits for the records written before it.
  @inline(__always)
  public var waitsForSync: Bool {
    if case .stateless = self { false } else { true }
  }
}

/// The journal as the engine sees it: records are appended one request at a
/// time, so a failure can be answered `STORAGE` before any state changes.
public protocol JournalSink: AnyObject {
  /// Appends records as one write: all of them or, on failure, none.
  /// A record that takes a text out of the state (`REDACT`'s) also
  /// obliges the sink to make its file lose the text (chatbroker(8),
  /// `--purge-interval`): the engine asks for nothing more.
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

/// Which Unix groups a user is in, for rooms private to a group
/// (chatbroker(7), "Private rooms"). Asked when a request of a new session
/// first needs it, before a read once the answer is older than
/// ``Engine/groupFactsMaximumAge``, and at each JOIN that concerns a
/// private room; never once per room listed, so a slow directory (LDAP)
/// costs one lookup, not one per room. Injected, so engine tests use a
/// fake one.
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

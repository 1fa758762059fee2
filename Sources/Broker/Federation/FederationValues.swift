import Glibc
import LineProtocol

/// Which rooms this host shares, and under which node name (chatbroker(8),
/// "FEDERATION"). A room that no pattern matches never leaves the host.
public struct FederationSettings: Sendable {
  /// This host's name in the federation: `alice` here is `alice@node` on
  /// every other host.
  public var node: String
  /// fnmatch(3) patterns of room names, `#ops` or `#team-*`.
  public var patterns: [String]

  public init(node: String, patterns: [String]) {
    self.node = node
    self.patterns = patterns
  }

  public func shares(_ room: RoomName) -> Bool {
    let name = room.description
    return patterns.contains { fnmatch($0, name, 0) == 0 }
  }

  /// A node name: 1 to 32 of `a-z 0-9 _ -`, so that it is one NATS
  /// subject token and cannot be mistaken for part of a user name.
  public static func isValidNode(_ name: String) -> Bool {
    (1...32).contains(name.utf8.count)
      && name.utf8.allSatisfy {
        ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
          || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_")
          || $0 == UInt8(ascii: "-")
      }
  }
}

/// The ids of lines that came through the stream: the stream sequence
/// above a base that local counters never reach, so that a line has the
/// same id on every host and no local id can be taken for it. Written in
/// base 36 they are the 12-character ids starting with `z`.
public enum FederatedID {
  /// 35 * 36^11: `z00000000000`.
  public static let base: UInt64 = 4_606_759_634_479_349_760

  /// What a stream created at `created` adds to its sequences: a million
  /// for every second since 2026-01-01, the same on every host, and above
  /// every id of a stream created before it unless that one stored a
  /// million lines a second. A stream lost and created anew so gives its
  /// lines ids no line of the old one had.
  public static func offset(forStreamCreated created: Timestamp) -> UInt64 {
    UInt64(max(0, created.milliseconds / 1000 - 1_767_225_600)) * 1_000_000
  }

  public static func id(forSequence sequence: UInt64) -> MessageID? {
    guard sequence >= 1, sequence <= MessageID.maximumValue - base else { return nil }
    return MessageID(value: base + sequence)
  }
}

/// A line said on this host in a shared room, journaled and acknowledged,
/// waiting to be published to the stream (chatbroker(8), "FEDERATION").
public struct OutboxLine: Equatable, Sendable {
  /// The id its author's `OK SAY` named; with the node, the stream's
  /// de-duplication id.
  public var id: MessageID
  /// The node it is published as: this host's.
  public var node: String
  /// A shared room, or `@user@node` for a direct message to another host.
  public var target: Target
  public var author: String
  public var time: Timestamp
  public var text: String
  /// Since 1.4: an occurrence of this host's series with that id
  /// (chatbroker(7), `MSG`); other hosts show it as `SERIES <id>` too.
  public var series: MessageID?
  /// Journaled (`"standing"` in the `outbox` record), never published.
  public var standing: OutboxStanding
  /// Since 1.5: the secret its de-duplication id in the stream is computed
  /// from, drawn when the line is made (``DeduplicationKey``). Journaled
  /// (`"dedup_key"`), never published; nil in what the stream gets and in
  /// a record written before 1.5, and the link draws one for such a line.
  public var dedupKey: DeduplicationKey?

  public init(
    id: MessageID, node: String, target: Target, author: String, time: Timestamp, text: String,
    series: MessageID? = nil, standing: OutboxStanding = .waiting,
    dedupKey: DeduplicationKey? = .random()
  ) {
    self.id = id
    self.node = node
    self.target = target
    self.author = author
    self.time = time
    self.text = text
    self.series = series
    self.standing = standing
    self.dedupKey = dedupKey
  }

  /// The line as the stream gets it: its standing is this host's affair,
  /// and its de-duplication key this host's secret.
  public var asPublished: OutboxLine {
    var line = self
    line.standing = .waiting
    line.dedupKey = nil
    return line
  }
}

/// Where a line of this host's outbox stands (chatbroker(8), "FEDERATION",
/// "When the stream is lost"). A line leaves the outbox when the stream
/// brings it back, but the latest ones are kept: a stream lost or reset
/// later no longer holds them, and hosts that had not read them yet would
/// never see them unless this host publishes them again.
public enum OutboxStanding: String, Sendable {
  /// Said here, not yet back from the stream.
  case waiting
  /// Back from a stream that was then lost or reset: published again
  /// into the new one. Its id is among those applied already, which a
  /// waiting line's never is.
  case again
  /// Back from the stream: kept among this node's latest
  /// ``FederationState/publishedCapacity`` lines, out of the outbox.
  case published
}

/// Which of a host's three pull consumers read a line (chatbroker(8),
/// "FEDERATION"): each reads its own part of the stream, so that a direct
/// message reaches only the two hosts it is between, and each has its own
/// position in the stream.
public enum StreamReader: Int, CaseIterable, Sendable {
  /// Every shared room's lines, `chat.room.>`: consumer `<node>`.
  case rooms
  /// Direct messages with hosts whose names sort after this one's,
  /// `chat.dm.<node>.>`: consumer `<node>-dm1`.
  case dmFirst
  /// Direct messages with hosts whose names sort before this one's,
  /// `chat.dm.*.<node>.*`: consumer `<node>-dm2`.
  case dmSecond

  /// As the journal's `reader` field writes it.
  public var name: String {
    switch self {
    case .rooms: "rooms"
    case .dmFirst: "dm1"
    case .dmSecond: "dm2"
    }
  }

  public init?(name: String) {
    guard let reader = Self.allCases.first(where: { $0.name == name }) else { return nil }
    self = reader
  }
}

/// Where a line stands in the stream: its sequence, the node whose subject
/// it was published under (the only author a node can vouch for), the id
/// it had in that node's outbox, and the reader that read it: nil in a
/// journal written before hosts read the stream through three consumers,
/// when one consumer read all of it, so that the position holds for every
/// reader.
public struct StreamPosition: Equatable, Sendable {
  public var sequence: UInt64
  public var node: String
  public var origin: MessageID
  public var reader: StreamReader?

  public init(
    sequence: UInt64, node: String, origin: MessageID, reader: StreamReader? = .rooms
  ) {
    self.sequence = sequence
    self.node = node
    self.origin = origin
    self.reader = reader
  }
}

/// How far each reader has applied the stream: the last sequence each has
/// applied (chatbroker(8), "FEDERATION").
public struct StreamSequences: Equatable, Sendable {
  private var values: [UInt64] = [0, 0, 0]

  public init() {}

  public subscript(reader: StreamReader) -> UInt64 {
    get { values[reader.rawValue] }
    set { values[reader.rawValue] = newValue }
  }

  /// `reader` (nil: every reader) has applied up to `sequence`.
  public mutating func advance(_ reader: StreamReader?, to sequence: UInt64) {
    for each in reader.map({ [$0] }) ?? StreamReader.allCases {
      self[each] = max(self[each], sequence)
    }
  }
}

/// A line read from the stream, as the link hands it to the engine.
public struct StreamLine: Equatable, Sendable {
  public var position: StreamPosition
  /// As published: a room, or `@user@node`.
  public var target: Target
  /// The author's login name on their own host, without `@node`.
  public var user: String
  public var time: Timestamp
  public var text: String
  /// When the stream stored it, which its node cannot choose.
  public var stored: Timestamp?
  /// Since 1.4: the series, on its author's host, it is an occurrence of.
  public var series: MessageID?

  public init(
    position: StreamPosition, target: Target, user: String, time: Timestamp, text: String,
    stored: Timestamp? = nil, series: MessageID? = nil
  ) {
    self.position = position
    self.target = target
    self.user = user
    self.time = time
    self.text = text
    self.stored = stored
    self.series = series
  }

  /// How much earlier than the stream stored it a line may say it was
  /// said: a line waits in its host's outbox while the cluster is away.
  public static let earliest: Int64 = 30 * 24 * 3600 * 1000
  /// How much later: the hosts' clocks may differ that much.
  public static let latest: Int64 = 60 * 1000

  /// The time shown: the line's own, unless it lies outside the window
  /// around the time the stream stored it; then that time.
  public var shownTime: Timestamp {
    guard let stored else { return time }
    let earliest = stored.milliseconds - Self.earliest
    let latest = stored.milliseconds + Self.latest
    return (earliest...latest).contains(time.milliseconds) ? time : stored
  }
}

/// The outbox ids a host has applied from one node's lines, the most
/// recent ``capacity`` of them: a line is known by its node and id, never
/// by a counter, so that no payload (a forged id, a line another host
/// ignores) can make a later line of that node look old (chatbroker(8),
/// "FEDERATION"). A line stored twice further apart than that is shown
/// twice; the stream's de-duplication window stores a line sent again
/// within two minutes once.
struct SeenIDs: Equatable {
  static let capacity = 1024
  private(set) var order: [MessageID] = []
  private var members: Set<MessageID> = []

  func contains(_ id: MessageID) -> Bool { members.contains(id) }

  /// An id newly remembered, and the oldest one it pushed out: what
  /// ``undo(_:)`` needs.
  struct Insertion {
    var id: MessageID
    var evicted: MessageID?
  }

  /// Remembers `id`; nil when it was remembered already.
  @discardableResult
  mutating func insert(_ id: MessageID) -> Insertion? {
    guard members.insert(id).inserted else { return nil }
    order.append(id)
    guard order.count > Self.capacity else { return Insertion(id: id, evicted: nil) }
    let evicted = order.removeFirst()
    members.remove(evicted)
    return Insertion(id: id, evicted: evicted)
  }

  /// An ``insert(_:)`` undone, the newest first.
  mutating func undo(_ insertion: Insertion) {
    guard order.last == insertion.id else { return }
    order.removeLast()
    members.remove(insertion.id)
    if let evicted = insertion.evicted {
      order.insert(evicted, at: 0)
      members.insert(evicted)
    }
  }
}

/// How to undo one federation record not yet synced (``Engine/rollBack(_:)``):
/// the few fields it changed, never a copy of the whole state, which every
/// line from the stream would then copy as it changed it (measured: 75 µs a
/// line read back on a host with 300 lines in its outbox, which held up
/// its own publishing).
enum FederationUndo {
  /// The rare records (a stream found created anew, this node's last id):
  /// the state before, whole.
  case whole(FederationState)
  /// A line joined the end of the outbox; whether the journal knew this
  /// node's ids before.
  case appended(knewOwnIDs: Bool)
  /// The stream moved on: the sequence before, the id it made this host
  /// remember (of `node`), the outbox line that left and where it stood,
  /// and whether the journal knew this node's ids before.
  case advanced(
    sequence: StreamSequences, seen: (node: String, insertion: SeenIDs.Insertion)?,
    left: (position: Int, line: OutboxLine)?, knewOwnIDs: Bool)
}

/// The engine's journaled federation state: the outbox, and how far into
/// the stream this host has applied (the last sequence, and per node the
/// ids applied, so that a line published twice is shown once).
struct FederationState {
  var settings: FederationSettings?
  /// Oldest first; lines leave it from the front as they come back.
  var outbox = FIFOQueue<OutboxLine>()
  /// This node's latest lines back from the stream, oldest first: what a
  /// stream lost or reset is given again (``OutboxStanding``). As many as
  /// the other hosts remember of a node's ids (``SeenIDs/capacity``), so
  /// that none of them is shown twice on a host that had it. A rollback
  /// keeps it as it is (``durable``): each line in it is one the stream
  /// has stored, and a line given again is known by its id everywhere.
  var published = FIFOQueue<OutboxLine>()
  static let publishedCapacity = SeenIDs.capacity
  var sequences = StreamSequences()
  /// When the stream read was created, as the link last found it; nil
  /// before the first look.
  var streamCreated: Timestamp?
  /// What the ids of the stream's lines are above their sequences: the
  /// sequences of every stream read before this one.
  var idOffset: UInt64 = 0
  var seen: [String: SeenIDs] = [:]
  /// The journal holds a record of this node's own lines or of its last id
  /// in the stream: its id counter is past every id the node used before.
  var knowsOwnIDs = false
  /// Which connection said each outbox line, while this process runs: it
  /// got `OK SAY`, and not the line again when the stream brings it back,
  /// as in a local room. Not journaled.
  var senders: [MessageID: ConnectionID] = [:]
  /// What the link last said about this process's publishing; kept across
  /// rollbacks, like the settings.
  var live = LiveFederation()

  /// What a compacted journal keeps: everything but the settings.
  var durable: FederationState {
    var copy = self
    copy.settings = nil
    return copy
  }

  /// What a rollback restores: the durable state but the published lines
  /// (a copy of them kept with each unsynced record would make every line
  /// back from the stream copy them all).
  var restorable: FederationState {
    var copy = durable
    copy.published = FIFOQueue()
    return copy
  }
}

/// The link's word on publishing, while this process runs (chatbroker(8),
/// "FEDERATION"): a shared `SAY` is refused while either is set.
struct LiveFederation {
  /// Why the stream refuses this node's lines (permissions, no stream, a
  /// stream that does not cover its subjects); nil once one is stored.
  var refusal: String?
  /// The link has read this node's last id from the stream in this run.
  var checkedOwnIDs = false
  /// Who is in each shared room on each other host, as those hosts last
  /// announced (Engine+FederatedPresence).
  var presence: [RoomName: [String: RemoteMembers]] = [:]
  /// Shared rooms whose members here changed since the shell last
  /// announced them.
  var presenceChanged: Set<RoomName> = []
}

/// One host's members of a shared room, as it announced them, and when.
struct RemoteMembers {
  var users: [String]
  var announced: Timestamp
}

import CShims
import Dispatch
import Foundation
import Glibc
import LineProtocol

/// The I/O shell around the engine: it accepts connections, moves bytes and
/// time in and effects out, and keeps the promise "durable before visible":
/// a line queued after a journal record leaves only once the committer
/// (``JournalCommitter``) counts that record durable. Everything runs in
/// the passes of one poll thread (``ReadinessPoll``) on the engine's
/// queue, each ended by ``endOfPass()``; `fdatasync` runs on a thread of
/// its own, so the engine keeps working while the disk syncs (group
/// commit: whatever was appended meanwhile is covered by the next sync),
/// except when at most one connection waits for it
/// (``GroupCommit/syncNow(_:)``).
public final class Server: @unchecked Sendable {
  public struct Options: Sendable {
    public var limits = Limits()
    /// `--irc-backlog`: lines of a room an IRC client without chathistory
    /// gets when it joins.
    public var ircBacklog = 50
    /// The name IRC clients see for the server and network: the host name
    /// unless `--server-name` gives another.
    public var serverName = ProcessInfo.processInfo.hostName
    public init() {}

    /// The longest `--server-name`, in bytes: a host name's label.
    public static let maximumServerNameBytes = 63

    /// Whether `name` may be the server's name on IRC (`--server-name`):
    /// letters, digits, `.` and `-`, starting with a letter or digit, so it
    /// reads as a host name in every source and numeric.
    public static func isServerName(_ name: String) -> Bool {
      guard let first = name.unicodeScalars.first, name.utf8.count <= maximumServerNameBytes
      else { return false }
      func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && CharacterSet.alphanumerics.contains(scalar)
      }
      return isAlphanumeric(first)
        && name.unicodeScalars.allSatisfy { isAlphanumeric($0) || $0 == "." || $0 == "-" }
    }
  }

  let queue: DispatchQueue
  let engine: Engine
  let users: SystemUsers
  let options: Options
  let log: Logger

  var connections = ConnectionTable()
  /// The IRC door: makes the IRC connections' codecs and holds what they
  /// share.
  let irc: IRCGateway
  /// Every connection's readiness, one pass at a time (``ReadinessPoll``).
  let poll: ReadinessPoll
  var nextConnection = 1
  /// The listeners and what stops their accepting (Server+Accepting).
  var accepting = Accepting()
  /// Connections opened, closed and lost are logged at most this many
  /// times a minute per user and kind: a user connecting in a loop must
  /// not flood the log (chatbroker(8), "LOGGING").
  var connectionLog = LimitLog(perMinute: 30)
  /// The journal's one owner and the engine's journal sink: group commit,
  /// recovery, compaction, and the durable count (see Server+Journal).
  let committer: JournalCommitter
  /// The durable count held lines and the outbox were last released up to.
  var releasedUpTo: UInt64 = 0
  /// fdatasync calls so far: with group commit, far fewer than records.
  public var syncCount: Int { committer.syncCount }
  /// Called (on the queue) when the journal cannot be recovered after a
  /// failed write or sync: nothing more is acknowledged, and the caller
  /// must stop (chatbroker exits 74).
  public var onJournalFailure: ((JournalUnrecoverable) -> Void)?
  /// Connections with lines waiting for a sync.
  var holding: Set<ConnectionID> = []
  /// How many closing connections each user has (``close(_:)``).
  var closingByUser: [String: Int] = [:]
  /// Connections with released output not yet written.
  var dirty: [Connection] = []
  /// Every connection's reads land here (the queue is serial, and the
  /// framer copies what it keeps); freed with the server.
  let readBuffer = UnsafeMutableRawBufferPointer.allocate(
    byteCount: 64 * 1024, alignment: 16)
  var stopping = false
  /// A shutdown waiting for its clients to read their BYE (``endOfPass()``).
  var draining: (giveUp: DispatchTime, completion: @Sendable () -> Void)?
  /// Called (on the queue) whenever counts worth reporting may have changed.
  public var onStatusChange: (() -> Void)?
  /// Shared rooms' link to the stream (Server+Federation), nil without.
  var federation: FederationBridge?
  /// How many connections of each user wait to show a token at the
  /// browser door (Server+WebDoor).
  var awaitingAdmission: [String: Int] = [:]

  /// Bytes queued for all connections since the last flush
  /// (``flushAbove`` triggers one in the middle of a turn).
  var queuedSinceFlush = 0
  /// Connections with requests left after their turn, served round-robin,
  /// one per turn, each turn a separate block on the queue so that timers,
  /// accepts and other clients' input interleave.
  var ready = FIFOQueue<Connection>()
  var turnScheduled = false
  /// Requests' worth of work done beyond the one request being served, to
  /// take from its connection's turn (``conversationsPerRequest``).
  var extraTurnCost = 0
  /// Whether a slice of the start-up word index waits in the mailbox.
  var wordIndexPosted = false
  /// When the first slice of the word index was posted, and how many
  /// messages the slices have indexed since, for the log line at the end.
  var wordIndexStarted: UInt64?
  var wordIndexedMessages = 0
  /// Messages indexed a pass: about 2 ms of worded texts (``Engine/indexWords(messages:)``).
  static let wordIndexSlice = 500
  /// The connection whose requests are being handled: its own replies are
  /// bounded by back-pressure, so the output limit is not applied to them.
  var serving: ConnectionID?
  /// How long each request and timer step held the serving thread, and
  /// the longest so far (chatbroker(8), LOGGING).
  public let steps: StepWatch

  /// Serves `engine`, whose journal sink must be `committer` (the
  /// journal loaded already), on `queue`; nothing runs before the first
  /// pass of the poll but what the caller does on the queue.
  public init(
    queue: DispatchQueue, engine: Engine, committer: JournalCommitter, users: SystemUsers,
    options: Options, log: Logger, steps: StepWatch? = nil
  ) throws(SystemError) {
    precondition(engine.appends(to: committer), "the engine appends through the committer")
    self.queue = queue
    self.engine = engine
    self.users = users
    self.options = options
    self.log = log
    self.committer = committer
    self.steps = steps ?? StepWatch(log: log)
    irc = IRCGateway(
      serverName: options.serverName, timeZone: engine.timeZone, backlog: options.ircBacklog)
    poll = try ReadinessPoll(queue: queue)
    accepting.reserveDescriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    committer.start(engine: engine, loop: poll)
    releasedUpTo = committer.durableCount
    engine.attach(self)
    committer.delegate = self
    poll.start(
      ReadinessPoll.Handlers(
        timerFired: { [unowned self] in
          let started = self.steps.begin()
          self.engine.timerFired()
          self.steps.end(started, .timer)
        },
        ready: { [unowned self] event in ready(event) },
        endOfPass: { [unowned self] in endOfPass() }))
  }

  deinit {
    readBuffer.deallocate()
  }

  public var connectionCount: Int { connections.count }
}

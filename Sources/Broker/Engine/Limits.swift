import LineProtocol

/// The limits of chatbroker(7) (Limits). Each is an option of chatbroker(8).
public struct Limits: Sendable, Equatable {
  /// Longest request line, LF excluded.
  public var lineBytes = 4096
  /// Messages kept per conversation; older ones are dropped.
  public var historyPerConversation = 10_000
  /// Bytes of text kept per conversation; older messages are dropped past
  /// it, the newest always kept. A count alone lets long lines (up to
  /// `lineBytes` each, from local users or from other hosts) hold a
  /// conversation's memory and journal at 40 MB.
  public var historyBytesPerConversation = 4 << 20
  /// The most lines one `HISTORY` returns; larger `<n>` are clamped.
  public var historyRequest = 1000
  /// Pending scheduled messages per user.
  public var pendingPerUser = 1000
  /// How far ahead a message may be scheduled.
  public var horizonMilliseconds = WhenParser.defaultHorizonMilliseconds
  /// Sessions (connections) per user.
  public var sessionsPerUser = 64
  /// Unsent output a connection may have before it is dropped.
  public var outputBytesPerConnection = 8 * 1024 * 1024
  /// Rooms in all; past it no new room is created.
  public var rooms = 10_000
  /// New rooms one user may create per minute (a burst of as many at once).
  public var newRoomsPerUserPerMinute = 60
  /// How long after sending it a message may be taken back with `REDACT`
  /// (a fixed window, not an option: what people may rely on staying said).
  public var redactionMilliseconds: Int64 = 24 * 3_600_000
  /// Candidates one `SEARCH` examines at most before it answers `MORE`
  /// (chatbroker(7), `SEARCH`): bounds the work of one request however
  /// common its words (a fixed bound, not an option; tests lower it).
  public var searchCandidates = 2000
  /// Since 1.6: how long a token of the browser door works after `WEB`
  /// made it (chatbroker(7), `WEB`), and how many a user may hold: the
  /// oldest goes when a new one would pass it (fixed, not options; tests
  /// lower them).
  public var webTokenMilliseconds: Int64 = 7 * 86_400_000
  public var webTokensPerUser = 16

  /// The largest `lineBytes` an administrator may set: a text in the
  /// journal longer than this cannot have come from a request, so replay
  /// treats it as damage (chatbroker(8)).
  public static let maximumLineBytes = 1 << 20

  public init() {}
}

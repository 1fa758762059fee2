import Broker
import CNats
import Foundation
import LineProtocol

/// The JetStream link of a host's shared rooms (chatbroker(8),
/// "FEDERATION"): one stream, `CHAT`, with a subject per room and node
/// (`chat.room.<room>.<node>`) and per pair of nodes and node for direct
/// messages (`chat.dm.<first>.<second>.<node>`). A publisher thread
/// publishes the outbox in order, each line with a `Nats-Msg-Id` no other
/// node can predict (``DeduplicationKey``) so that a line sent again after
/// a lost acknowledgement is stored once; three reader threads
/// (NatsLink+Reading) read the rooms and this host's direct messages, each
/// through a pull consumer of its own, from the sequence the journal says
/// comes next for it. libnats reconnects by itself; the threads retry
/// until it does.
public final class NatsLink: FederationLink, @unchecked Sendable {
  public struct Configuration: Sendable {
    public var servers: [String]
    public var node: String
    public var user: String?
    public var password: String?
    public var token: String?
    public var credentialsFile: String?
    /// Replicas of the stream when this host creates it.
    public var replicas = 3
    public var stream = "CHAT"

    public init(servers: [String], node: String) {
      self.servers = servers
      self.node = node
    }
  }

  /// Lines a reader read, the last sequence it read (a message ignored
  /// included), and the epoch they were read in.
  public typealias Deliver = @Sendable ([StreamLine], StreamReader, UInt64, Int) -> Void
  public typealias Report = @Sendable (String, [String: String]) -> Void
  /// The highest id this node has in the stream (nil: none).
  public typealias OwnLastID = @Sendable (MessageID?) -> Void
  /// Why the stream refuses this node's lines; nil once one is stored.
  public typealias Refused = @Sendable (String?) -> Void
  /// When the stream was created, at each (re)connection.
  public typealias Created = @Sendable (Timestamp) -> Void
  /// Another host's members of a shared room, as it announced them.
  public typealias Presence = @Sendable (RoomName, String, [String]) -> Void
  /// The stream acknowledged a line as a duplicate of the message at a
  /// sequence of the stream created at a time: it holds a message with
  /// that line's `Nats-Msg-Id`, which may not be the line.
  public typealias Duplicate = @Sendable (OutboxLine, UInt64, Timestamp) -> Void

  let configuration: Configuration
  let deliver: Deliver
  let report: Report
  let ownLastID: OwnLastID
  let refused: Refused
  let created: Created
  let presence: Presence
  let duplicate: Duplicate
  let condition = NSCondition()
  /// This host's members of each shared room, as last announced
  /// (NatsLink+Presence; guarded by `announcedLock`).
  var announced: [RoomName: [String]] = [:]
  let announcedLock = NSLock()
  /// Guarded by `condition`.
  var pending: [OutboxLine] = []
  var nextSequences: StreamSequences
  var epoch = 0
  var restartRequested: Set<StreamReader> = []
  /// The readers caught up with the stream (guarded by `condition`): the
  /// link is caught up when all are.
  var caughtUp: Set<StreamReader> = []
  /// Why publishing is refused, as last told (guarded by `condition`).
  var refusal: String?
  /// `Nats-Msg-Id`s the stream acknowledged and the publisher has not yet
  /// taken, each with the sequence of the message it is a duplicate of,
  /// or nil when stored as new (guarded by `condition`).
  var acknowledgedIDs: [String: UInt64?] = [:]
  /// When the stream was created, as a reader last found it, or the
  /// publisher before any did (guarded by `condition`): part of every
  /// line's `Nats-Msg-Id`, and nothing is published before it is known.
  var streamCreated: Timestamp?
  /// The first asynchronous publish the stream refused in this round.
  var asyncFailure: (status: natsStatus, code: jsErrCode, subject: String?)?
  /// The rooms' reader found this node's last id in the stream (its thread).
  var checkedOwnIDs = false
  /// Held while a reader looks at the stream and reports its creation
  /// time, so that the engine hears the times in the order they were seen.
  let streamLook = NSLock()
  var stopped = false
  var connection: OpaquePointer?
  var jetStream: OpaquePointer?

  public init(
    _ configuration: Configuration, after sequences: StreamSequences,
    deliver: @escaping Deliver,
    report: @escaping Report, ownLastID: @escaping OwnLastID, refused: @escaping Refused,
    created: @escaping Created, presence: @escaping Presence, duplicate: @escaping Duplicate
  ) {
    self.created = created
    self.presence = presence
    self.duplicate = duplicate
    self.configuration = configuration
    var next = sequences
    for reader in StreamReader.allCases { next[reader] += 1 }
    self.nextSequences = next
    self.deliver = deliver
    self.report = report
    self.ownLastID = ownLastID
    self.refused = refused
  }

  /// Initialises libnats (and OpenSSL's random source under it) on the
  /// calling thread: done once before the link's own threads start, so
  /// that a broker stopped while its link is still starting does not run
  /// that initialisation against OpenSSL's clean-up at exit (ThreadSanitizer
  /// saw a SEGV in RAND_bytes under natsOptions_Create).
  public static func initializeLibrary() {
    _ = nats_Open(-1)
  }

  /// Connects (in the background: an unreachable cluster is retried) and
  /// starts the threads. Throws only for a configuration libnats refuses.
  public func start() throws(NatsError) {
    var options: OpaquePointer?
    try check(natsOptions_Create(&options), "natsOptions_Create")
    defer { natsOptions_Destroy(options) }
    try setServersAndCredentials(options)
    // The operator's list is the truth: a host cut off from its servers
    // must not wander to others it heard of.
    natsOptions_SetIgnoreDiscoveredServers(options, true)
    natsOptions_SetMaxReconnect(options, -1)
    natsOptions_SetReconnectWait(options, 250)
    natsOptions_SetTimeout(options, 2000)
    natsOptions_SetName(options, "chatbroker \(configuration.node)")
    // Replies (JetStream's answers, and the messages a consumer delivers)
    // come to inboxes only this node may subscribe to (chatbroker(8),
    // "FEDERATION"): under `_INBOX.>`, any host could read them.
    try check(
      natsOptions_SetCustomInboxPrefix(options, Self.inboxPrefix(configuration.node)),
      "the inbox prefix")
    let context = Unmanaged.passUnretained(self).toOpaque()
    // With a callback, a server that cannot be reached or refuses the
    // credentials does not hold up the start: the threads run, and the
    // reader says why it cannot connect.
    natsOptions_SetRetryOnFailedConnect(
      options, true,
      { _, closure in
        guard let closure else { return }
        Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue().report("connected", [:])
      }, context)
    natsOptions_SetDisconnectedCB(
      options,
      { _, closure in
        guard let closure else { return }
        Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue().report("disconnected", [:])
      }, context)
    natsOptions_SetReconnectedCB(
      options,
      { _, closure in
        guard let closure else { return }
        Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue().report("connected", [:])
      }, context)
    // Asynchronous errors, a permissions violation above all: the server
    // says which subject it refused.
    natsOptions_SetErrorHandler(
      options,
      { connection, _, status, closure in
        guard let closure else { return }
        var text: UnsafePointer<CChar>?
        _ = natsConnection_GetLastError(connection, &text)
        let reason = text.map { String(cString: $0) } ?? String(cString: natsStatus_GetText(status))
        let link = Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue()
        link.report("refused by the NATS server", ["reason": reason])
        // This node's lines cannot leave until the permissions change;
        // nor can anything be read or acknowledged while this node may not
        // subscribe to its own inboxes (credentials of another node).
        if reason.contains("Permissions Violation for Publish to \"chat.")
          || reason.contains("Permissions Violation for Subscription to \"_INBOX")
        {
          link.setRefusal(reason)
        }
      }, context)
    var connection: OpaquePointer?
    let status = natsConnection_Connect(&connection, options)
    guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED else {
      throw NatsError(status, "cannot connect to \(configuration.servers.joined(separator: ","))")
    }
    report(status == NATS_OK ? "connected" : "connecting", [:])
    var jsOptions = jsOptions()
    jsOptions_Init(&jsOptions)
    jsOptions.Wait = 2000
    // Acknowledgements of pipelined publishes (NatsLink+Publishing).
    jsOptions.PublishAsync.MaxPending = Int64(Self.window)
    jsOptions.PublishAsync.AckHandler = { _, message, ack, error, closure in
      defer { natsMsg_Destroy(message) }
      guard let closure, let message else { return }
      let link = Unmanaged<NatsLink>.fromOpaque(closure).takeUnretainedValue()
      guard let ack else {
        if let error {
          let subject = natsMsg_GetSubject(message).map { String(cString: $0) }
          link.failed(error.pointee.Err, code: error.pointee.ErrCode, subject: subject)
        }
        return
      }
      var id: UnsafePointer<CChar>?
      guard natsMsgHeader_Get(message, "Nats-Msg-Id", &id) == NATS_OK, let id else { return }
      link.acknowledged(
        String(cString: id), duplicateOf: ack.pointee.Duplicate ? ack.pointee.Sequence : nil)
    }
    jsOptions.PublishAsync.AckHandlerClosure = context
    var jetStream: OpaquePointer?
    try check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "JetStream")
    self.connection = connection
    self.jetStream = jetStream
    Thread.detachNewThread { [self] in publishLoop() }
    for reader in StreamReader.allCases {
      Thread.detachNewThread { [self] in readLoop(reader) }
    }
    subscribePresence()
    Thread.detachNewThread { [self] in presenceLoop() }
  }

  /// The operator's servers and credentials, on new connection options.
  func setServersAndCredentials(_ options: OpaquePointer?) throws(NatsError) {
    try withCStrings(configuration.servers) { servers throws(NatsError) in
      try check(
        natsOptions_SetServers(options, servers, Int32(configuration.servers.count)),
        "the NATS server URLs")
    }
    if let user = configuration.user {
      try check(
        natsOptions_SetUserInfo(options, user, configuration.password ?? ""), "--nats-user")
    }
    if let token = configuration.token {
      try check(natsOptions_SetToken(options, token), "--nats-token")
    }
    if let file = configuration.credentialsFile {
      try check(natsOptions_SetUserCredentialsFromFiles(options, file, nil), "--nats-creds")
    }
  }

  public func publish(_ lines: [OutboxLine]) {
    let lines = Self.keyed(lines)
    condition.lock()
    pending.append(contentsOf: lines)
    condition.signal()
    condition.unlock()
  }

  public func republish(_ lines: [OutboxLine]) {
    condition.lock()
    var byID: [MessageID: OutboxLine] = [:]
    for line in pending + Self.keyed(lines) { byID[line.id] = byID[line.id] ?? line }
    pending = byID.values.sorted { $0.id < $1.id }
    condition.signal()
    condition.unlock()
  }

  public func restart(after sequences: StreamSequences, epoch: Int) {
    condition.lock()
    for reader in StreamReader.allCases { nextSequences[reader] = sequences[reader] + 1 }
    self.epoch = epoch
    restartRequested = Set(StreamReader.allCases)
    condition.unlock()
  }

  /// The prefix of this node's inboxes: `_INBOX_<node>`.
  public static func inboxPrefix(_ node: String) -> String { "_INBOX_\(node)" }

  // MARK: - Publishing

  /// Tells the server once per change whether the stream refuses this
  /// node's lines.
  func setRefusal(_ reason: String?) {
    condition.lock()
    let changed = refusal != reason
    refusal = reason
    condition.unlock()
    if changed { refused(reason) }
  }

  /// Why no stream answered a publish to `subject`: the stream is missing
  /// or does not cover it (nil: it does, and the failure is passing).
  func streamRefusal(for subject: String) -> String? {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let status = js_GetStreamInfo(&info, jetStream, configuration.stream, nil, &errorCode)
    guard status == NATS_OK, let info else {
      return status == NATS_NOT_FOUND || errorCode == jsErrCode(10059)
        ? "the stream \(configuration.stream) does not exist" : nil
    }
    defer { jsStreamInfo_Destroy(info) }
    let config = info.pointee.Config.pointee
    let subjects = (0..<Int(config.SubjectsLen)).compactMap { index in
      config.Subjects[index].map { String(cString: $0) }
    }
    guard !subjects.contains(where: { Self.subject(subject, matches: $0) }) else { return nil }
    return "the stream \(configuration.stream) does not store \(subject) "
      + "(its subjects: \(subjects.joined(separator: " ")))"
  }

  /// NATS subject matching: `*` is one token, `>` the rest.
  static func subject(_ subject: String, matches pattern: String) -> Bool {
    let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
    let wanted = pattern.split(separator: ".", omittingEmptySubsequences: false)
    for (index, token) in wanted.enumerated() {
      if token == ">" { return tokens.count > index }
      guard index < tokens.count, token == "*" || token == tokens[index] else { return false }
    }
    return tokens.count == wanted.count
  }

}

/// A libnats call failed.
public struct NatsError: Error, CustomStringConvertible {
  public var description: String

  init(_ status: natsStatus, _ what: String, code: jsErrCode = jsErrCode(0)) {
    let text = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status)"
    description =
      "\(what): \(text)" + (code.rawValue != 0 ? " (JetStream error \(code.rawValue))" : "")
  }
}

func check(_ status: natsStatus, _ what: String) throws(NatsError) {
  guard status == NATS_OK else { throw NatsError(status, what) }
}

/// Calls `body` with the strings as a C array of C strings.
func withCStrings<R, E: Error>(
  _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) throws(E) -> R
) throws(E) -> R {
  let copies = strings.map { strdup($0) }
  defer { for copy in copies { free(copy) } }
  var pointers = copies.map { UnsafePointer<CChar>($0) }
  return try pointers.withUnsafeMutableBufferPointer { buffer throws(E) in
    try body(buffer.baseAddress!)
  }
}

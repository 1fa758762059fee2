import Broker
import CNats
import Foundation
import LineProtocol

/// The JetStream link of a host's shared rooms (chatbroker(8),
/// "FEDERATION"): one stream, `CHAT`, with a subject per room and node
/// (`chat.room.<room>.<node>`) and per node for direct messages
/// (`chat.dm.<to-node>.<node>`). A publisher thread publishes the outbox in
/// order, each line with `Nats-Msg-Id` `<node>:<id>` so that a line sent
/// again after a lost acknowledgement is stored once; a reader thread reads
/// the whole stream through a pull consumer named after the node, from
/// the sequence the journal says comes next. libnats reconnects by itself;
/// both threads retry until it does.
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

  public typealias Deliver = @Sendable ([StreamLine], Int) -> Void
  public typealias Report = @Sendable (String, [String: String]) -> Void
  /// The highest id this node has in the stream (nil: none).
  public typealias OwnLastID = @Sendable (MessageID?) -> Void
  /// Why the stream refuses this node's lines; nil once one is stored.
  public typealias Refused = @Sendable (String?) -> Void
  /// When the stream was created, at each (re)connection.
  public typealias Created = @Sendable (Timestamp) -> Void

  let configuration: Configuration
  let deliver: Deliver
  let report: Report
  let ownLastID: OwnLastID
  let refused: Refused
  let created: Created
  let condition = NSCondition()
  /// Guarded by `condition`.
  var pending: [OutboxLine] = []
  var nextSequence: UInt64
  var epoch = 0
  var restartRequested = false
  /// Why publishing is refused, as last told (guarded by `condition`).
  var refusal: String?
  /// `Nats-Msg-Id`s the stream acknowledged and the publisher has not yet
  /// taken (guarded by `condition`).
  var acknowledgedIDs: Set<String> = []
  /// The first asynchronous publish the stream refused in this round.
  var asyncFailure: (status: natsStatus, code: jsErrCode, subject: String?)?
  /// The reader found this node's last id in the stream (reader thread).
  var checkedOwnIDs = false
  /// The stream's creation time as last reported (reader thread).
  var streamCreated: Timestamp?
  var stopped = false
  var connection: OpaquePointer?
  var jetStream: OpaquePointer?

  public init(
    _ configuration: Configuration, from sequence: UInt64, deliver: @escaping Deliver,
    report: @escaping Report, ownLastID: @escaping OwnLastID, refused: @escaping Refused,
    created: @escaping Created
  ) {
    self.created = created
    self.configuration = configuration
    self.nextSequence = sequence
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
        // This node's lines cannot leave until the permissions change.
        if reason.contains("Permissions Violation for Publish to \"chat.") {
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
      guard ack != nil else {
        if let error {
          let subject = natsMsg_GetSubject(message).map { String(cString: $0) }
          link.failed(error.pointee.Err, code: error.pointee.ErrCode, subject: subject)
        }
        return
      }
      var id: UnsafePointer<CChar>?
      guard natsMsgHeader_Get(message, "Nats-Msg-Id", &id) == NATS_OK, let id else { return }
      link.acknowledged(String(cString: id))
    }
    jsOptions.PublishAsync.AckHandlerClosure = context
    var jetStream: OpaquePointer?
    try check(natsConnection_JetStream(&jetStream, connection, &jsOptions), "JetStream")
    self.connection = connection
    self.jetStream = jetStream
    Thread.detachNewThread { [self] in publishLoop() }
    Thread.detachNewThread { [self] in readLoop() }
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
    condition.lock()
    pending.append(contentsOf: lines)
    condition.signal()
    condition.unlock()
  }

  public func restart(from sequence: UInt64, epoch: Int) {
    condition.lock()
    nextSequence = sequence
    self.epoch = epoch
    restartRequested = true
    condition.unlock()
  }

  // MARK: - Publishing

  /// `chat.room.<room>.<node>` for a room, `chat.dm.<to-node>.<node>` for
  /// a direct message: the publishing node is always the last token.
  static func subject(for target: Target, node: String) -> String? {
    switch target {
    case .room(let room):
      // Room names may hold dots, which separate subject tokens; `~` never
      // appears in one.
      let token = room.description.dropFirst().replacingOccurrences(of: ".", with: "~")
      return "chat.room.\(token).\(node)"
    case .user(let name):
      guard let at = name.lastIndex(of: "@") else { return nil }
      return "chat.dm.\(name[name.index(after: at)...]).\(node)"
    }
  }

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

  // MARK: - Reading

  /// The highest outbox id of this node in the stream: the last message of
  /// each of its subjects (`chat.*.*.<node>`), since a node publishes its
  /// ids in order. Nil (reported) when the stream could not tell.
  private func findOwnLastID() -> MessageID?? {
    var options = jsOptions()
    jsOptions_Init(&options)
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let filter = "chat.*.*.\(configuration.node)"
    let status = filter.withCString { filter in
      options.Stream.Info.SubjectsFilter = filter
      return js_GetStreamInfo(&info, jetStream, configuration.stream, &options, &errorCode)
    }
    guard status == NATS_OK, let info else {
      report(
        "cannot read this node's last id from the stream",
        ["reason": NatsError(status, "js_GetStreamInfo", code: errorCode).description])
      return nil
    }
    defer { jsStreamInfo_Destroy(info) }
    var subjects: [String] = []
    if let list = info.pointee.State.Subjects {
      for index in 0..<Int(list.pointee.Count) {
        if let subject = list.pointee.List[index].Subject {
          subjects.append(String(cString: subject))
        }
      }
    }
    var highest: MessageID?
    for subject in subjects {
      var message: OpaquePointer?
      let status = js_GetLastMsg(
        &message, jetStream, configuration.stream, subject, nil, &errorCode)
      if status == NATS_NOT_FOUND { continue }
      guard status == NATS_OK, let message else {
        report(
          "cannot read this node's last id from the stream",
          ["reason": NatsError(status, "js_GetLastMsg \(subject)", code: errorCode).description])
        return nil
      }
      defer { natsMsg_Destroy(message) }
      if let line = Self.line(message, sequence: 0) {
        highest = max(highest ?? line.position.origin, line.position.origin)
      }
    }
    report("found this node's last id in the stream", ["last_id": highest?.description ?? "none"])
    return .some(highest)
  }

  private func readLoop() {
    while !isStopped {
      guard let createdAt = ensureStream() else {
        reportConnectionFailure()
        nats_Sleep(500)
        continue
      }
      // Before reading: a stream created anew starts its sequences
      // again, and the engine sends the reader back to its start.
      streamCreated = createdAt
      created(createdAt)
      if !checkedOwnIDs, let found = findOwnLastID() {
        checkedOwnIDs = true
        ownLastID(found)
      }
      condition.lock()
      let start = nextSequence
      let epoch = self.epoch
      restartRequested = false
      condition.unlock()
      guard let subscription = subscribe(from: start) else {
        nats_Sleep(500)
        continue
      }
      readBatches(subscription, epoch: epoch)
      natsSubscription_Destroy(subscription)
      nats_Sleep(100)
    }
  }

  private var isStopped: Bool {
    condition.lock()
    defer { condition.unlock() }
    return stopped
  }

  /// When the stream was created; it exists, or this host created it.
  private func ensureStream() -> Timestamp? {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    var status = js_GetStreamInfo(&info, jetStream, configuration.stream, nil, &errorCode)
    if status == NATS_OK, let info {
      defer { jsStreamInfo_Destroy(info) }
      return Self.created(info)
    }
    guard status == NATS_NOT_FOUND || errorCode == jsErrCode(10059) else { return nil }
    var config = jsStreamConfig()
    jsStreamConfig_Init(&config)
    config.Storage = js_FileStorage
    config.Replicas = Int64(configuration.replicas)
    config.Duplicates = 120 * 1_000_000_000
    status = configuration.stream.withCString { name in
      config.Name = name
      return withCStrings(["chat.>"]) { subjects in
        config.Subjects = subjects
        config.SubjectsLen = 1
        return js_AddStream(&info, jetStream, &config, nil, &errorCode)
      }
    }
    if status == NATS_OK, let info {
      defer { jsStreamInfo_Destroy(info) }
      report("created the stream", ["stream": configuration.stream])
      return Self.created(info)
    }
    report(
      "cannot create the stream",
      ["reason": NatsError(status, "js_AddStream", code: errorCode).description])
    return nil
  }

  static func created(_ info: UnsafeMutablePointer<jsStreamInfo>) -> Timestamp {
    Timestamp(milliseconds: info.pointee.Created / 1_000_000)
  }

  /// While not connected: why, from one plain attempt with the same
  /// servers and credentials (the retrying connection keeps only "no
  /// server available"; a refused password reads `Authorization
  /// Violation`), logged once per reason.
  private func reportConnectionFailure() {
    guard natsConnection_Status(connection) != NATS_CONN_STATUS_CONNECTED else { return }
    var options: OpaquePointer?
    guard natsOptions_Create(&options) == NATS_OK else { return }
    defer { natsOptions_Destroy(options) }
    guard (try? setServersAndCredentials(options)) != nil else { return }
    natsOptions_SetTimeout(options, 2000)
    var probe: OpaquePointer?
    let status = natsConnection_Connect(&probe, options)
    defer { natsConnection_Destroy(probe) }
    guard status != NATS_OK else { return }
    let text = nats_GetLastError(nil)
    let reason = text.map { String(cString: $0) } ?? NatsError(status, "connect").description
    report("cannot connect", ["reason": reason])
  }

  /// The stream is still the one reported: nil when it cannot be told.
  private func sameStream() -> Bool? {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let status = js_GetStreamInfo(&info, jetStream, configuration.stream, nil, &errorCode)
    guard status == NATS_OK, let info else {
      return status == NATS_NOT_FOUND || errorCode == jsErrCode(10059) ? false : nil
    }
    defer { jsStreamInfo_Destroy(info) }
    return Self.created(info) == streamCreated
  }

  /// The node's pull consumer, made afresh to start at `start`: the journal,
  /// not the consumer, knows what this host has applied.
  private func subscribe(from start: UInt64) -> OpaquePointer? {
    var errorCode = jsErrCode(0)
    _ = js_DeleteConsumer(jetStream, configuration.stream, configuration.node, nil, &errorCode)
    var options = jsSubOptions()
    jsSubOptions_Init(&options)
    options.Config.AckPolicy = js_AckAll
    options.Config.DeliverPolicy = start <= 1 ? js_DeliverAll : js_DeliverByStartSequence
    options.Config.OptStartSeq = start <= 1 ? 0 : start
    var subscription: OpaquePointer?
    let status = configuration.stream.withCString { stream in
      options.Stream = stream
      return js_PullSubscribe(
        &subscription, jetStream, "chat.>", configuration.node, nil, &options, &errorCode)
    }
    guard status == NATS_OK else {
      report(
        "cannot read the stream",
        ["reason": NatsError(status, "js_PullSubscribe", code: errorCode).description])
      return nil
    }
    report("reading", ["from_seq": "\(start)"])
    return subscription
  }

  private func readBatches(_ subscription: OpaquePointer, epoch: Int) {
    var caughtUp = false
    var failures = 0
    var idle = 0
    while true {
      condition.lock()
      let stop = stopped || restartRequested
      condition.unlock()
      if stop { return }
      var list = natsMsgList()
      var errorCode = jsErrCode(0)
      let status = natsSubscription_Fetch(&list, subscription, 256, 1000, &errorCode)
      if status == NATS_TIMEOUT {
        // A first look that failed (permissions, a leader election) is
        // tried again while idle: until it works, shared SAY is refused.
        if !checkedOwnIDs, let found = findOwnLastID() {
          checkedOwnIDs = true
          ownLastID(found)
        }
        if !caughtUp {
          caughtUp = true
          report("caught up", [:])
        }
        // A consumer of a deleted stream waits for nothing: while idle,
        // every few seconds, check the stream is the one read.
        idle += 1
        if idle % 5 == 0, sameStream() == false {
          report("lost the stream", ["stream": configuration.stream])
          return
        }
        continue
      }
      guard status == NATS_OK else {
        failures += 1
        if failures == 1 {
          report(
            "cannot read the stream",
            ["reason": NatsError(status, "fetch", code: errorCode).description])
        }
        if failures >= 5 { return }
        nats_Sleep(250)
        continue
      }
      failures = 0
      idle = 0
      var lines: [StreamLine] = []
      var last: UInt64 = 0
      var pendingAfter: UInt64 = 0
      for index in 0..<Int(list.Count) {
        guard let message = list.Msgs[index] else { continue }
        var metadata: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&metadata, message) == NATS_OK, let metadata else { continue }
        let sequence = metadata.pointee.Sequence.Stream
        let stored = Timestamp(milliseconds: metadata.pointee.Timestamp / 1_000_000)
        pendingAfter = metadata.pointee.NumPending
        jsMsgMetaData_Destroy(metadata)
        last = sequence
        if var line = Self.line(message, sequence: sequence) {
          line.stored = stored
          lines.append(line)
        }
      }
      if list.Count > 0, let message = list.Msgs[Int(list.Count) - 1] {
        _ = natsMsg_Ack(message, nil)
      }
      natsMsgList_Destroy(&list)
      condition.lock()
      let current = self.epoch == epoch && !restartRequested
      if current && last > 0 { nextSequence = last + 1 }
      condition.unlock()
      if current && last > 0 { deliver(lines, epoch) }
      if pendingAfter == 0 && !caughtUp {
        caughtUp = true
        report("caught up", ["seq": "\(last)"])
      } else if pendingAfter > 0 {
        caughtUp = false
      }
    }
  }

  /// A message of the stream as a line, or nil when it is not one: its
  /// payload must be an outbox record of the very node whose subject it
  /// was published under, which NATS permissions make the only node able
  /// to publish there.
  static func line(_ message: OpaquePointer, sequence: UInt64) -> StreamLine? {
    guard let subjectPointer = natsMsg_GetSubject(message) else { return nil }
    let subject = String(cString: subjectPointer)
    guard let node = subject.split(separator: ".").last.map(String.init) else { return nil }
    let length = Int(natsMsg_GetDataLength(message))
    guard length > 0, let data = natsMsg_GetData(message) else { return nil }
    var bytes = [UInt8](
      UnsafeRawBufferPointer(start: data, count: length))
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    let record = try? bytes.withUnsafeBufferPointer { buffer in
      try JournalRecord(jsonLine: buffer)
    }
    guard case .outbox(let line) = record, line.node == node,
      subject == Self.subject(for: line.target, node: node)
    else { return nil }
    return StreamLine(
      position: StreamPosition(sequence: sequence, node: node, origin: line.id),
      target: line.target, user: line.author, time: line.time, text: line.text,
      series: line.series)
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

import Broker
import CNats
import Foundation
import LineProtocol

/// Reading the stream (chatbroker(8), "FEDERATION"): one thread per
/// reader, each through a pull consumer of its own filtered on the one
/// subject the NATS permissions let this node ask for
/// (``FederationSubjects/consumer(_:node:)``), so that a direct message is
/// read by the two hosts it is between and no other. Each reader resumes
/// from the sequence the journal says comes next for it.
extension NatsLink {
  /// The highest outbox id of this node in the stream: the last message of
  /// each of its subjects, since a node publishes its ids in order, each
  /// read with a direct get whose request subject names the subject, the
  /// only get the permissions let a node make of its own subjects. Nil
  /// (reported) when the stream could not tell.
  private func findOwnLastID() -> MessageID?? {
    var subjects: [String] = []
    for filter in FederationSubjects.ownSubjects(node: configuration.node) {
      guard let found = streamSubjects(filter) else { return nil }
      subjects += found
    }
    var highest: MessageID?
    for subject in Set(subjects).sorted() {
      var reply: OpaquePointer?
      let status = natsConnection_Request(
        &reply, connection, "$JS.API.DIRECT.GET.\(configuration.stream).\(subject)", nil, 0, 2000)
      guard status == NATS_OK, let reply else {
        let reason =
          status == NATS_NO_RESPONDERS
          ? "the stream \(configuration.stream) does not allow direct get (allow_direct)"
          : NatsError(status, "direct get \(subject)").description
        report("cannot read this node's last id from the stream", ["reason": reason])
        return nil
      }
      defer { natsMsg_Destroy(reply) }
      var stored: UnsafePointer<CChar>?
      // A subject with no message left answers with a status, no subject.
      guard natsMsgHeader_Get(reply, "Nats-Subject", &stored) == NATS_OK, let stored,
        let data = natsMsg_GetData(reply)
      else { continue }
      let payload = UnsafeRawBufferPointer(start: data, count: Int(natsMsg_GetDataLength(reply)))
      if let line = FederationSubjects.line(
        subject: String(cString: stored), payload: payload, sequence: 0)
      {
        highest = max(highest ?? line.position.origin, line.position.origin)
      }
    }
    report("found this node's last id in the stream", ["last_id": highest?.description ?? "none"])
    return .some(highest)
  }

  /// The stream's subjects matching `filter` (STREAM.INFO); nil, reported,
  /// when it could not tell.
  private func streamSubjects(_ filter: String) -> [String]? {
    var options = jsOptions()
    jsOptions_Init(&options)
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
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
    return subjects
  }

  func readLoop(_ reader: StreamReader) {
    var failures = 0
    while !isStopped {
      // Before reading: a stream created anew starts its sequences
      // again, and the engine sends the readers back to its start. The
      // engine hears this before any line this reader reads of it.
      streamLook.lock()
      let createdAt = ensureStream()
      if let createdAt {
        created(createdAt)
        condition.lock()
        streamCreated = createdAt
        condition.unlock()
      }
      streamLook.unlock()
      guard let createdAt else {
        if reader == .rooms { reportConnectionFailure() }
        nats_Sleep(500)
        continue
      }
      if reader == .rooms, !checkedOwnIDs, let found = findOwnLastID() {
        checkedOwnIDs = true
        ownLastID(found)
      }
      condition.lock()
      let start = nextSequences[reader]
      let epoch = self.epoch
      restartRequested.remove(reader)
      condition.unlock()
      guard let subscription = subscribe(reader, from: start) else {
        // Say, a stream that does not store direct messages: tried again,
        // less often each time, up to every five seconds.
        failures += 1
        nats_Sleep(Int64(min(500 << min(failures, 4), 5000)))
        continue
      }
      failures = 0
      readBatches(subscription, reader: reader, epoch: epoch, created: createdAt)
      natsSubscription_Destroy(subscription.handle)
      nats_Sleep(100)
    }
  }

  private var isStopped: Bool {
    condition.lock()
    defer { condition.unlock() }
    return stopped
  }

  /// When the stream was created; it exists, or this host created it
  /// (allowing direct get, which ``findOwnLastID()`` needs).
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
    config.AllowDirect = true
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

  /// The stream is still the one created at `created`: nil when it cannot
  /// be told.
  private func sameStream(_ created: Timestamp) -> Bool? {
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let status = js_GetStreamInfo(&info, jetStream, configuration.stream, nil, &errorCode)
    guard status == NATS_OK, let info else {
      return status == NATS_NOT_FOUND || errorCode == jsErrCode(10059) ? false : nil
    }
    defer { jsStreamInfo_Destroy(info) }
    return Self.created(info) == created
  }

  /// The reader's pull consumer, made afresh to start at `start`: the
  /// journal, not the consumer, knows what this host has applied. It is
  /// created through the API subject that names its filter
  /// (`$JS.API.CONSUMER.CREATE.<stream>.<consumer>.<filter>`), the one a
  /// node's permissions allow, and then bound to.
  private func subscribe(_ reader: StreamReader, from start: UInt64) -> Subscription? {
    let (name, filter) = FederationSubjects.consumer(reader, node: configuration.node)
    var errorCode = jsErrCode(0)
    _ = js_DeleteConsumer(jetStream, configuration.stream, name, nil, &errorCode)
    let policy =
      start <= 1
      ? #""deliver_policy":"all""#
      : #""deliver_policy":"by_start_sequence","opt_start_seq":\#(start)"#
    let request = """
      {"stream_name":"\(configuration.stream)","config":{"name":"\(name)","durable_name":"\(name)",\
      "filter_subject":"\(filter)","ack_policy":"all",\(policy)}}
      """
    var reply: OpaquePointer?
    let subject = "$JS.API.CONSUMER.CREATE.\(configuration.stream).\(name).\(filter)"
    var status = natsConnection_RequestString(&reply, connection, subject, request, 5000)
    var answer = ""
    if status == NATS_OK, let reply, let data = natsMsg_GetData(reply) {
      answer = String(
        decoding: UnsafeRawBufferPointer(start: data, count: Int(natsMsg_GetDataLength(reply))),
        as: UTF8.self)
    }
    natsMsg_Destroy(reply)
    guard status == NATS_OK, !answer.contains(#""error""#) else {
      report(
        "cannot read the stream",
        [
          "reader": reader.name,
          "reason": status == NATS_OK ? answer : NatsError(status, "create \(name)").description,
        ])
      return nil
    }
    var options = jsSubOptions()
    jsSubOptions_Init(&options)
    var subscription: OpaquePointer?
    status = configuration.stream.withCString { stream in
      name.withCString { consumer in
        options.Stream = stream
        options.Consumer = consumer
        return js_PullSubscribe(
          &subscription, jetStream, filter, name, nil, &options, &errorCode)
      }
    }
    guard status == NATS_OK, let subscription else {
      report(
        "cannot read the stream",
        [
          "reader": reader.name,
          "reason": NatsError(status, "js_PullSubscribe", code: errorCode).description,
        ])
      return nil
    }
    report("reading", ["reader": reader.name, "from_seq": "\(start)"])
    return Subscription(
      handle: subscription, consumer: name, delivered: Self.deliveredCount(answer) ?? 0)
  }

  /// A reader's pull subscription, and how many deliveries its consumer
  /// had made when it was bound (none, for the consumer made afresh).
  struct Subscription {
    var handle: OpaquePointer
    var consumer: String
    var delivered: UInt64
  }

  /// `delivered.consumer_seq` of a CONSUMER.CREATE answer.
  static func deliveredCount(_ answer: String) -> UInt64? {
    guard
      let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any],
      let delivered = object["delivered"] as? [String: Any],
      let count = delivered["consumer_seq"] as? NSNumber
    else { return nil }
    return count.uint64Value
  }

  /// How many deliveries the consumer has made, as its leader says; nil
  /// when it cannot tell.
  private func consumerDelivered(_ consumer: String) -> UInt64? {
    var info: UnsafeMutablePointer<jsConsumerInfo>?
    var errorCode = jsErrCode(0)
    guard
      js_GetConsumerInfo(&info, jetStream, configuration.stream, consumer, nil, &errorCode)
        == NATS_OK, let info
    else { return nil }
    defer { jsConsumerInfo_Destroy(info) }
    return info.pointee.Delivered.Consumer
  }

  /// `reader` caught up (or not): the link says it is caught up once every
  /// reader is.
  private func noteCaughtUp(_ reader: StreamReader, _ isCaughtUp: Bool, seq: UInt64?) {
    condition.lock()
    let before = caughtUp.count == StreamReader.allCases.count
    if isCaughtUp { caughtUp.insert(reader) } else { caughtUp.remove(reader) }
    let now = caughtUp.count == StreamReader.allCases.count
    condition.unlock()
    if now && !before { report("caught up", seq.map { ["seq": "\($0)"] } ?? [:]) }
  }

  /// Reads batches until the reader must start again. Only an unbroken
  /// run of the consumer's deliveries is applied: each message names its
  /// delivery (the consumer sequence), and one missing means a delivery
  /// was lost on the way (a server frozen or cut off while it routed it),
  /// which the acknowledgement of any later message would acknowledge for
  /// good, since one acknowledges all before it. The reader then starts
  /// again after the last sequence it applied, and reads the lost line.
  private func readBatches(
    _ subscription: Subscription, reader: StreamReader, epoch: Int, created: Timestamp
  ) {
    var delivered = subscription.delivered
    var caughtUp = false
    noteCaughtUp(reader, false, seq: nil)
    var failures = 0
    var idle = 0
    while true {
      condition.lock()
      let stop = stopped || restartRequested.contains(reader)
      condition.unlock()
      if stop { return }
      var list = natsMsgList()
      var errorCode = jsErrCode(0)
      let status = natsSubscription_Fetch(&list, subscription.handle, 256, 1000, &errorCode)
      if status == NATS_TIMEOUT {
        // A first look that failed (permissions, a leader election) is
        // tried again while idle: until it works, shared SAY is refused.
        if reader == .rooms, !checkedOwnIDs, let found = findOwnLastID() {
          checkedOwnIDs = true
          ownLastID(found)
        }
        if !caughtUp {
          caughtUp = true
          noteCaughtUp(reader, true, seq: nil)
        }
        // A consumer of a deleted stream waits for nothing: while idle,
        // every few seconds, check the stream is the one read.
        idle += 1
        if idle % 5 == 0, sameStream(created) == false {
          report("lost the stream", ["stream": configuration.stream])
          return
        }
        // The last deliveries lost on the way leave no later one to
        // show the gap: the consumer says it made more than came.
        if idle % 5 == 0, let made = consumerDelivered(subscription.consumer), made > delivered {
          report(
            "lost deliveries of the stream",
            ["reader": reader.name, "delivered": "\(made)", "received": "\(delivered)"])
          return
        }
        continue
      }
      guard status == NATS_OK else {
        failures += 1
        if failures == 1 {
          report(
            "cannot read the stream",
            [
              "reader": reader.name,
              "reason": NatsError(status, "fetch", code: errorCode).description,
            ])
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
      var acknowledge: OpaquePointer?
      var broken: (expected: UInt64, got: UInt64)?
      for index in 0..<Int(list.Count) {
        guard let message = list.Msgs[index] else { continue }
        var metadata: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&metadata, message) == NATS_OK, let metadata else { continue }
        let delivery = metadata.pointee.Sequence.Consumer
        let sequence = metadata.pointee.Sequence.Stream
        let stored = Timestamp(milliseconds: metadata.pointee.Timestamp / 1_000_000)
        pendingAfter = metadata.pointee.NumPending
        jsMsgMetaData_Destroy(metadata)
        guard delivery == delivered + 1 else {
          broken = (delivered + 1, delivery)
          break
        }
        delivered = delivery
        last = sequence
        acknowledge = message
        if var line = Self.line(message, sequence: sequence) {
          line.stored = stored
          line.position.reader = reader
          lines.append(line)
        }
      }
      if let acknowledge { _ = natsMsg_Ack(acknowledge, nil) }
      natsMsgList_Destroy(&list)
      condition.lock()
      let current = self.epoch == epoch && !restartRequested.contains(reader)
      if current && last > 0 { nextSequences[reader] = last + 1 }
      condition.unlock()
      if current && last > 0 { deliver(lines, reader, last, epoch) }
      if let broken {
        report(
          "lost a delivery of the stream",
          [
            "reader": reader.name, "expected_delivery": "\(broken.expected)",
            "delivery": "\(broken.got)",
          ])
        return
      }
      if pendingAfter == 0 && !caughtUp {
        caughtUp = true
        noteCaughtUp(reader, true, seq: last)
      } else if pendingAfter > 0 && caughtUp {
        caughtUp = false
        noteCaughtUp(reader, false, seq: nil)
      }
    }
  }

  /// A message of the stream as a line, or nil when it is not one
  /// (``FederationSubjects/line(subject:payload:sequence:)``).
  static func line(_ message: OpaquePointer, sequence: UInt64) -> StreamLine? {
    guard let subject = natsMsg_GetSubject(message), let data = natsMsg_GetData(message) else {
      return nil
    }
    let payload = UnsafeRawBufferPointer(start: data, count: Int(natsMsg_GetDataLength(message)))
    return FederationSubjects.line(
      subject: String(cString: subject), payload: payload, sequence: sequence)
  }
}

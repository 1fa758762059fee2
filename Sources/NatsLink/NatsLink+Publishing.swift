import Broker
import CNats
import Foundation
import LineProtocol

/// Publishing the outbox (chatbroker(8), "FEDERATION"): pipelined, up to
/// ``NatsLink/window`` lines in flight, each with the `Nats-Msg-Id` its
/// de-duplication key gives it in the stream as the readers last found it
/// (``DeduplicationKey/messageID(node:id:streamCreated:)``). A round
/// publishes the oldest lines asynchronously and waits for their
/// acknowledgements; the lines acknowledged from the first on leave the
/// queue, and the rest are sent again in the next round, the stream
/// storing a line sent again within its window once. A line acknowledged
/// as a duplicate is told to the server, which checks through this node's
/// readers that the message the stream kept is that line
/// (Server+Federation).
extension NatsLink {
  /// Lines in flight at most.
  static let window = 256

  /// From libnats' thread: the stream acknowledged the message with `id`,
  /// as a duplicate of the message at sequence `duplicateOf` or stored.
  func acknowledged(_ id: String, duplicateOf: UInt64?) {
    condition.lock()
    acknowledgedIDs[id] = duplicateOf
    condition.unlock()
  }

  /// `lines`, each with a de-duplication key: one from a journal written
  /// before 1.5 gets one now, kept while it waits here.
  static func keyed(_ lines: [OutboxLine]) -> [OutboxLine] {
    lines.map { line in
      var keyed = line
      if keyed.dedupKey == nil { keyed.dedupKey = .random() }
      return keyed
    }
  }

  /// From libnats' thread: the stream refused a line.
  func failed(_ status: natsStatus, code: jsErrCode, subject: String?) {
    condition.lock()
    if asyncFailure == nil { asyncFailure = (status, code, subject) }
    condition.unlock()
  }

  func publishLoop() {
    var failing = false
    while true {
      condition.lock()
      while pending.isEmpty && !stopped { condition.wait() }
      guard !stopped else {
        condition.unlock()
        return
      }
      condition.unlock()
      guard let created = streamCreatedForPublishing() else {
        nats_Sleep(250)
        continue
      }
      condition.lock()
      let round = Array(pending.prefix(Self.window))
      asyncFailure = nil
      condition.unlock()
      let ids = round.map { messageID($0, streamCreated: created) }
      let (sent, failure) = publish(round, ids: ids)
      // The lines stored, in order from the first: a line stored after
      // one that was not stays queued, and its second copy is a duplicate.
      condition.lock()
      var stored = 0
      var duplicates: [(line: OutboxLine, sequence: UInt64)] = []
      for (line, id) in zip(round, ids).prefix(sent) {
        guard let acknowledgement = acknowledgedIDs.removeValue(forKey: id) else { break }
        if let sequence = acknowledgement { duplicates.append((line, sequence)) }
        stored += 1
      }
      // By id, not by place: lines published again may have been put
      // before them meanwhile (``republish(_:)``).
      let storedIDs = Set(round.prefix(stored).map(\.id))
      if pending.prefix(stored).map(\.id) == round.prefix(stored).map(\.id) {
        pending.removeFirst(stored)
      } else {
        pending.removeAll { storedIDs.contains($0.id) }
      }
      condition.unlock()
      for (line, sequence) in duplicates { duplicate(line, sequence, created) }
      if stored == round.count {
        setRefusal(nil)
        if failing {
          failing = false
          report("publishing", [:])
        }
        continue
      }
      if stored > 0 { setRefusal(nil) }
      if !failing {
        failing = true
        report(
          "waiting to publish",
          ["reason": failure ?? "the stream did not acknowledge every line in time"])
      }
      nats_Sleep(250)
    }
  }

  /// When the stream lines go to was created: as a reader last found it,
  /// or, before any did, as the stream says. Nil when it cannot tell; a
  /// stream that does not exist is a refusal the engine is told of.
  private func streamCreatedForPublishing() -> Timestamp? {
    condition.lock()
    let known = streamCreated
    condition.unlock()
    if let known { return known }
    var info: UnsafeMutablePointer<jsStreamInfo>?
    var errorCode = jsErrCode(0)
    let status = js_GetStreamInfo(&info, jetStream, configuration.stream, nil, &errorCode)
    guard status == NATS_OK, let info else {
      if status == NATS_NOT_FOUND || errorCode == jsErrCode(10059) {
        setRefusal("the stream \(configuration.stream) does not exist")
      }
      return nil
    }
    defer { jsStreamInfo_Destroy(info) }
    let created = Self.created(info)
    condition.lock()
    if streamCreated == nil { streamCreated = created }
    condition.unlock()
    return created
  }

  /// The line's `Nats-Msg-Id` in the stream created at `streamCreated`.
  func messageID(_ line: OutboxLine, streamCreated: Timestamp) -> String {
    // Every line here has its key (``keyed(_:)``); were one without, a
    // fresh key would still be one no other node can predict.
    let key = line.dedupKey ?? .random()
    return key.messageID(node: configuration.node, id: line.id, streamCreated: streamCreated)
  }

  /// Publishes `lines` asynchronously, each with its `Nats-Msg-Id` of
  /// `ids`, and waits (bounded) until all are acknowledged; how many were
  /// handed to libnats, and why not all.
  private func publish(_ lines: [OutboxLine], ids: [String]) -> (sent: Int, failure: String?) {
    var sent = 0
    var failure: String?
    for (line, id) in zip(lines, ids) {
      guard let subject = FederationSubjects.subject(for: line.target, node: configuration.node)
      else {
        // Never written by the engine: a line with no subject would block
        // every line after it. It counts as stored.
        acknowledged(id, duplicateOf: nil)
        sent += 1
        continue
      }
      let payload = JournalRecord.outbox(line.asPublished).jsonLine
      var message: OpaquePointer?
      let status = payload.withUnsafeBytes { bytes in
        natsMsg_Create(&message, subject, nil, bytes.baseAddress, Int32(bytes.count))
      }
      guard status == NATS_OK else {
        failure = NatsError(status, "natsMsg_Create").description
        break
      }
      natsMsgHeader_Set(message, "Nats-Msg-Id", id)
      var options = jsPubOptions()
      jsPubOptions_Init(&options)
      options.MaxWait = 2000
      let published = js_PublishMsgAsync(jetStream, &message, &options)
      if message != nil { natsMsg_Destroy(message) }
      guard published == NATS_OK else {
        failure = noteFailure(published, subject: subject)
        break
      }
      sent += 1
    }
    var options = jsPubOptions()
    jsPubOptions_Init(&options)
    options.MaxWait = 5000
    let status = js_PublishAsyncComplete(jetStream, &options)
    condition.lock()
    let refused = asyncFailure
    condition.unlock()
    let subject = lines.first.flatMap {
      FederationSubjects.subject(for: $0.target, node: configuration.node)
    }
    if let refused, failure == nil {
      failure = noteFailure(refused.status, code: refused.code, subject: refused.subject ?? subject)
    } else if status != NATS_OK, failure == nil {
      failure = noteFailure(status, subject: subject)
    }
    return (sent, failure)
  }

  /// Why a publish failed; a stream that is missing or does not cover
  /// `subject` is a refusal the engine is told of.
  private func noteFailure(
    _ status: natsStatus, code: jsErrCode = jsErrCode(0), subject: String?
  ) -> String {
    if status == NATS_NO_RESPONDERS, let subject, let reason = streamRefusal(for: subject) {
      setRefusal(reason)
    }
    return NatsError(status, "publish", code: code).description
  }
}

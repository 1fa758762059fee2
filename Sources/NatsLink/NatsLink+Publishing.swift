import Broker
import CNats
import Foundation
import LineProtocol

/// Publishing the outbox (chatbroker(8), "FEDERATION"): pipelined, up to
/// ``NatsLink/window`` lines in flight, each with `Nats-Msg-Id`
/// `<node>:<id>`. A round publishes the oldest lines asynchronously and
/// waits for their acknowledgements; the lines acknowledged from the
/// first on leave the queue, and the rest are sent again in the next
/// round, the stream storing a line sent again within its window once.
extension NatsLink {
  /// Lines in flight at most.
  static let window = 256

  /// From libnats' thread: the stream stored the line with `id`.
  func acknowledged(_ id: String) {
    condition.lock()
    acknowledgedIDs.insert(id)
    condition.unlock()
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
      let round = Array(pending.prefix(Self.window))
      asyncFailure = nil
      condition.unlock()
      let (sent, failure) = publish(round)
      // The lines stored, in order from the first: a line stored after
      // one that was not stays queued, and its second copy is a duplicate.
      condition.lock()
      var stored = 0
      for line in round.prefix(sent) {
        guard acknowledgedIDs.remove(messageID(line)) != nil else { break }
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

  func messageID(_ line: OutboxLine) -> String { "\(configuration.node):\(line.id)" }

  /// Publishes `lines` asynchronously and waits (bounded) until all are
  /// acknowledged; how many were handed to libnats, and why not all.
  private func publish(_ lines: [OutboxLine]) -> (sent: Int, failure: String?) {
    var sent = 0
    var failure: String?
    for line in lines {
      guard let subject = FederationSubjects.subject(for: line.target, node: configuration.node)
      else {
        // Never written by the engine: a line with no subject would block
        // every line after it. It counts as stored.
        acknowledged(messageID(line))
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
      natsMsgHeader_Set(message, "Nats-Msg-Id", messageID(line))
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

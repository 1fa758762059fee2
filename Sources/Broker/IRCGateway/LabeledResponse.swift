import IRCProtocol
import LineProtocol

/// The answer to one command a client labeled (IRCv3 labeled-response,
/// chatbroker(7), "IRC"): every line the command's replies and requests
/// produce is gathered here, in order, until the last of its requests has
/// had its final reply; then the whole answer leaves at once, as `ACK`
/// when it is empty, as the one line with the `label` tag, or as a
/// `labeled-response` batch. It has to wait: whether a batch is needed is
/// known only once the count of lines is.
///
/// Shared by the reply contexts of the command's requests (each of a
/// JOIN's, each target's of a PRIVMSG), so a reply encoded late, after a
/// sync, still counts for its command.
final class LabeledResponse {
  /// The `label` tag, escaped as a tag value.
  let labelTag: String
  /// The batch's reference, decided when the command came.
  let batch: String
  let serverName: String
  /// Requests whose final reply has not been encoded yet.
  private var pendingRequests: Int
  private var lines: [UInt8] = []
  private var finished = false

  init(label: String, batch: String, serverName: String, requests: Int) {
    labelTag = IRCSession.tagText([IRCTag("label", label)])
    self.batch = batch
    self.serverName = serverName
    pendingRequests = requests
  }

  /// Lines of the answer that need nothing from the engine.
  func gather(_ bytes: [UInt8]) {
    lines += bytes
  }

  /// Lines encoded for one of the command's requests, `final` when they end
  /// it: the whole answer once the last request has ended, else nothing
  /// yet. Lines after the answer left (QUIT's ERROR) go out as they are.
  func add(_ bytes: [UInt8], final: Bool) -> [UInt8] {
    guard !finished else { return bytes }
    lines += bytes
    if final { pendingRequests -= 1 }
    return pendingRequests > 0 ? [] : finish()
  }

  /// The answer as it leaves.
  func finish() -> [UInt8] {
    finished = true
    let split = Self.split(lines)
    lines = []
    switch split.count {
    case 0:
      return Array("@\(labelTag) :\(serverName) ACK\r\n".utf8)
    case 1:
      return Self.tagged(split[0], with: labelTag) + [13, 10]
    default:
      var bytes = Array(
        "@\(labelTag) :\(serverName) BATCH +\(batch) labeled-response\r\n".utf8)
      for line in split {
        // A nested batch (a CHATHISTORY's) starts inside this one; its
        // own lines and its end keep theirs.
        if Self.hasBatchTag(line) || Self.endsBatch(line) {
          bytes += line
        } else {
          bytes += Self.tagged(line, with: "batch=\(batch)")
        }
        bytes += [13, 10]
      }
      return bytes + Array(":\(serverName) BATCH -\(batch)\r\n".utf8)
    }
  }

  /// The lines of `bytes`, without their CR LF.
  static func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    bytes.split(separator: 10).map { $0.last == 13 ? $0.dropLast() : $0 }.filter { !$0.isEmpty }
  }

  /// `line` with `tag` first among its tags.
  static func tagged(_ line: ArraySlice<UInt8>, with tag: String) -> [UInt8] {
    if line.first == UInt8(ascii: "@") {
      return Array("@\(tag);".utf8) + line.dropFirst()
    }
    return Array("@\(tag) ".utf8) + line
  }

  /// Whether the line's tags hold a `batch` tag.
  static func hasBatchTag(_ line: ArraySlice<UInt8>) -> Bool {
    guard line.first == UInt8(ascii: "@") else { return false }
    let tags = line.prefix { $0 != UInt8(ascii: " ") }
    return String(decoding: tags.dropFirst(), as: UTF8.self).split(separator: ";").contains {
      $0.hasPrefix("batch=")
    }
  }

  /// Whether the line is a `BATCH -ref`.
  static func endsBatch(_ line: ArraySlice<UInt8>) -> Bool {
    let words = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 3)
    let command = words.firstIndex { !$0.hasPrefix("@") && !$0.hasPrefix(":") }
    guard let command, command + 1 < words.count else { return false }
    return words[command] == "BATCH" && words[command + 1].hasPrefix("-")
  }
}

extension IRCSession {
  /// The longest `label` value answered; a longer label is ignored.
  static let maximumLabelBytes = 64

  /// `steps` of a command the client labeled, as steps whose answer is one
  /// ``LabeledResponse``: their replies gathered into it, each request given
  /// a reply context that counts for it. The answer leaves with the
  /// command's last final reply, or at once when it made no request.
  func labeled(_ steps: [[Action]], label: String) -> [[Action]] {
    var requests = 0
    for step in steps {
      for case .request(_, _) in step { requests += 1 }
    }
    let response = LabeledResponse(
      label: label, batch: "l\(nextBatch)", serverName: serverName, requests: requests)
    nextBatch += 1
    var last: IRCReplyContext?
    var labeled: [[Action]] = steps.map { step in
      step.compactMap { action in
        switch action {
        case .reply(let bytes, _):
          if let last { last.labelTrailing += bytes } else { response.gather(bytes) }
          return nil
        case .request(let request, let context):
          let context = context as? IRCReplyContext ?? IRCReplyContext(.other)
          context.label = response
          last = context
          return .request(request, answering: context)
        default: return action
        }
      }
    }
    if requests == 0 {
      if labeled.isEmpty { labeled = [[]] }
      labeled[0].insert(.reply(response.finish()), at: 0)
    }
    return labeled
  }

  /// The label of a message from a client that negotiated labeled-response
  /// and batch, when it has a usable one.
  func label(of message: IRCMessage) -> String? {
    guard registered, capabilities.contains(.labeledResponse), capabilities.contains(.batch),
      let label = message.tags.first(where: { $0.key == "label" })?.value, !label.isEmpty,
      label.utf8.count <= Self.maximumLabelBytes
    else { return nil }
    return label
  }

  /// What an event encoded for `context` becomes when its command was
  /// labeled: gathered, and the whole answer once its last request ends.
  /// A final reply (`OK`, `ERR`) ends its request, unless its
  /// CHATHISTORY pages or LIST pages go on.
  func labeledBytes(_ bytes: [UInt8], of event: BrokerEvent, for context: ReplyContext?)
    -> [UInt8]
  {
    guard let context = context as? IRCReplyContext, let response = context.label else {
      return bytes
    }
    switch event {
    case .ok, .accepted, .error:
      guard context.batchEnd == nil, !context.morePages else {
        return response.add(bytes, final: false)
      }
      return labelFinished(bytes, of: context, response)
    default: return response.add(bytes, final: false)
    }
  }

  /// The last lines of a labeled request, and the gateway's replies that
  /// followed it in its command.
  func labelFinished(_ bytes: [UInt8], of context: IRCReplyContext, _ response: LabeledResponse)
    -> [UInt8]
  {
    let trailing = context.labelTrailing
    context.labelTrailing = []
    return response.add(bytes + trailing, final: true)
  }
}

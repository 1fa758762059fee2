import IRCProtocol
import LineProtocol

/// IRCv3 draft/multiline (chatbroker(7), "IRC"): a message of several
/// lines, a block, is one `draft/multiline` batch both ways. A client with
/// the capability sends one as a batch of PRIVMSG lines and gets one so;
/// any other client gets each line as a PRIVMSG of its own. No line feed
/// ever reaches an IRC line.
extension IRCSession {
  /// draft/multiline's `max-bytes`: the combined text, each line feed that
  /// joins two lines counted as one byte, as the specification counts it
  /// (and the line protocol's request line bounds a block).
  static let maximumMultilineBytes = 4096
  static let multilineType = "draft/multiline"
  static let concatTag = "draft/multiline-concat"

  // MARK: - From the client

  /// What a line that is part of a multiline batch (`BATCH`, or a line
  /// with a `batch` tag) asks; nil for any other line, or when the client
  /// did not negotiate draft/multiline (then `BATCH` is unknown as before).
  /// A batch's lines are kept until its end, which sends the message.
  func multilineLine(_ message: IRCMessage) -> [Action]? {
    guard registered, capabilities.contains(.multiline) else { return nil }
    if message.command == "BATCH" { return batchCommand(message) }
    guard let reference = message.tags.first(where: { $0.key == "batch" })?.value else {
      return nil
    }
    return batchedLine(message, reference: reference)
  }

  /// `FAIL BATCH <code> [<parameters>] :<text>` (IRCv3 multiline, "Errors").
  func multilineFailure(_ parameters: [String]) -> Action {
    reply(source: serverName, "FAIL", ["BATCH"] + parameters)
  }

  /// `BATCH +<reference> draft/multiline <target>` opens a batch,
  /// `BATCH -<reference>` ends it and sends its message. Batches do not
  /// nest: a second opened while one is open drops both.
  func batchCommand(_ message: IRCMessage) -> [Action] {
    let parameters = message.parameters
    guard let first = parameters.first, first.utf8.count > 1,
      first.hasPrefix("+") || first.hasPrefix("-")
    else {
      return [multilineFailure(["MULTILINE_INVALID", "BATCH needs +<reference> or -<reference>"])]
    }
    let reference = String(first.dropFirst())
    guard first.hasPrefix("+") else {
      guard let batch = multiline, batch.reference == reference else {
        return [multilineFailure(["MULTILINE_INVALID", "No batch \(reference) is open"])]
      }
      multiline = nil
      return batch.refused ? [] : sendBatch(batch)
    }
    let target = parameters.count > 2 ? parameters[2] : ""
    var opened = IRCMultilineBatch(
      reference: reference, target: target, tags: Self.clientTags(message.tags),
      label: label(of: message))
    var failure: [String]?
    if let open = multiline {
      failure = [
        "MULTILINE_INVALID",
        "Batch \(open.reference) is still open and batches do not nest: both were dropped",
      ]
    } else if parameters.count < 3 || parameters[1] != Self.multilineType || target.isEmpty {
      failure = [
        "MULTILINE_INVALID", "Only BATCH +<reference> \(Self.multilineType) <target> is accepted",
      ]
    }
    // A refused batch is kept, empty, so that its lines are dropped quietly.
    opened.refused = failure != nil
    multiline = opened
    return failure.map { [multilineFailure($0)] } ?? []
  }

  /// A line with a `batch` tag: a PRIVMSG of the open batch, to its target.
  /// Anything else refuses the batch, once; what is left of it is dropped.
  func batchedLine(_ message: IRCMessage, reference: String) -> [Action] {
    guard var batch = multiline, batch.reference == reference else {
      return [
        multilineFailure(
          ["MULTILINE_INVALID", "No batch \(reference) is open; the line was dropped"])
      ]
    }
    if batch.refused { return [] }
    // Not kept twice while it grows.
    multiline = nil
    func refuse(_ parameters: [String]) -> [Action] {
      multiline = IRCMultilineBatch(
        reference: batch.reference, target: batch.target, tags: ClientTags(), label: nil)
      multiline?.refused = true
      return [multilineFailure(parameters)]
    }
    guard message.command == "PRIVMSG" else {
      return refuse(["MULTILINE_INVALID", "A multiline batch holds PRIVMSG lines only"])
    }
    guard message.parameters.count >= 2 else {
      return refuse(["MULTILINE_INVALID", "A line of the batch has no text"])
    }
    let target = message.parameters[0]
    guard IRCText.sameName(target, batch.target) else {
      return refuse(["MULTILINE_INVALID_TARGET", batch.target, target, "Invalid multiline target"])
    }
    let concatenated = message.tags.contains { $0.key == Self.concatTag }
    let line = Self.plainText(message.parameters[1])
    if concatenated && line.isEmpty {
      return refuse(["MULTILINE_INVALID", "A \(Self.concatTag) line may not be blank"])
    }
    if let failure = batch.add(line, concatenated: concatenated) { return refuse(failure) }
    multiline = batch
    return []
  }

  /// The end of a batch: its text as one message, a block when it has
  /// several lines, labeled when its opener was.
  func sendBatch(_ batch: IRCMultilineBatch) -> [Action] {
    var steps: [[Action]]
    if batch.text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }) {
      steps = [[multilineFailure(["MULTILINE_INVALID", "The batch holds no text"])]]
    } else if MessageBlock.isBlock(batch.text) {
      steps = [block(to: batch.target, text: batch.text, tags: batch.tags)]
    } else {
      steps = [privmsg("PRIVMSG", to: batch.target, text: batch.text, tags: batch.tags)]
    }
    if let label = batch.label { steps = labeled(steps, label: label) }
    guard !steps.isEmpty else { return [] }
    pendingSteps += steps.dropFirst().map(Step.actions)
    return steps[0]
  }

  /// A block to `target`: a SAY whose text holds line feeds (chatbroker(7),
  /// BLOCK), with the opener's client tags. A `+draft/reply` among them
  /// is passed on as a tag: the broker keeps replies of one line only.
  func block(to target: String, text: String, tags: ClientTags) -> [Action] {
    if IRCText.sameName(target, Self.serviceNick) {
      return [serviceNotice("commands are one line each; the batch was not read")]
    }
    let (found, refusal) = brokerTarget(target)
    guard let brokerTarget = found else { return refusal }
    let said = IRCReplyContext(.say(command: "PRIVMSG", target: target, text: text, tags: tags))
    let message = Request.say(brokerTarget, text: text)
    directory.spoke(user)
    var actions: [Action] = [
      .request(tags.isEmpty ? message : .tagged(message, tags), answering: said)
    ]
    if case .user(let name) = brokerTarget, let awayText = reader.awayText(of: name) {
      actions.append(numeric(.away, [name, awayText]))
    }
    return actions
  }

  // MARK: - To the client

  /// A block from `source` to `target`: for a client with draft/multiline
  /// (and batch), a `draft/multiline` batch whose opener carries the
  /// message's `tags` (msgid, time, client tags; inside `outerBatch`, a
  /// CHATHISTORY's, as a nested batch), one PRIVMSG per line, a blank line
  /// as an empty one, a line too long for 512 bytes continued with
  /// `draft/multiline-concat`. Any other client gets each line that is
  /// not blank as PRIVMSG lines of their own, the first with every tag,
  /// the others without the msgid, which names the whole message.
  func blockLines(
    source: String, to target: String, text: String, id: MessageID,
    tags: (bytes: [UInt8], msgidAt: Int), outerBatch: String?, command: String
  ) -> [UInt8] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard capabilities.receivesMultiline else {
      var later = Array(tags.bytes[..<tags.msgidAt])
      if !later.isEmpty { later.append(UInt8(ascii: " ")) }
      var bytes: [UInt8] = []
      for line in lines where !line.allSatisfy({ $0 == " " || $0 == "\t" }) {
        bytes += IRCMessage.textLines(
          tags: bytes.isEmpty ? tags.bytes : later, laterTags: later, source: source,
          command: command, target: target, text: String(line))
      }
      return bytes
    }
    // Unique among this client's open batches: a message id is
    // alphanumeric, and the CHATHISTORY and label batches start h and l.
    let reference = "m\(id)"
    let outer = outerBatch.map { Array("@batch=\($0) ".utf8) } ?? []
    var bytes = tags.bytes
    bytes += Array(":\(source) BATCH +\(reference) \(Self.multilineType) \(target)\r\n".utf8)
    let first = Array("@batch=\(reference) ".utf8)
    let continued = Array("@batch=\(reference);\(Self.concatTag) ".utf8)
    for line in lines {
      bytes += IRCMessage.textLines(
        tags: first, laterTags: continued, source: source, command: command, target: target,
        text: String(line))
    }
    return bytes + outer + Array(":\(serverName) BATCH -\(reference)\r\n".utf8)
  }
}

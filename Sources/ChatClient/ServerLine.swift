import LineProtocol

/// One line from the broker as chatsh reads it: the ``BrokerEvent`` that
/// ``LineCodec/decode(_:)`` makes of it, or the line itself when the codec
/// does not read it (a newer broker's). A thin view, not a second parser:
/// it exists only because a client must still count a final reply it
/// cannot read, such as an `ERR` with a code added after this client was
/// built, or its requests would be paired with the wrong replies (every
/// request gets exactly one final reply, `OK` or `ERR`: chatbroker(7),
/// "Transport and framing").
public enum ServerLine: Equatable, Sendable {
  case event(BrokerEvent)
  /// A line ``LineCodec`` does not read: kept, not fatal.
  case unreadable(String)

  public init(parsing line: String) {
    self = LineCodec.decode(line).map(ServerLine.event) ?? .unreadable(line)
  }

  /// Whether the line is a request's final reply, `OK` or `ERR`, read or not.
  public var isFinalReply: Bool {
    switch self {
    case .event(.ok), .event(.accepted), .event(.error): true
    case .event: false
    case .unreadable(let line): line.hasPrefix("OK ") || line.hasPrefix("ERR ")
    }
  }

  /// The code and text of an `ERR` line; for one the codec does not read,
  /// its third word and what follows ` :` (chatbroker(7), "Lines from the
  /// broker": `ERR VERB CODE :text`).
  public var refusal: (code: String, text: String)? {
    switch self {
    case .event(.error(_, let code, let text)): return (code.rawValue, text)
    case .unreadable(let line) where line.hasPrefix("ERR "):
      let separator = line.range(of: " :")
      let words = line[..<(separator?.lowerBound ?? line.endIndex)].split(separator: " ")
      let text = separator.map { String(line[$0.upperBound...]) } ?? ""
      return (words.count > 2 ? String(words[2]) : "", text)
    default: return nil
    }
  }

  /// The fixed words after `OK VERB` of a final reply that went well
  /// (`OK SAY <id> <time>` gives the id and the time).
  public var okFields: [String]? {
    switch self {
    case .event(.ok(_, let fields)): fields
    case .event(.accepted(_, let id, let time)): [id.description, time.description]
    default: nil
    }
  }

  /// The id and time of the message a final reply says was taken: `OK SAY
  /// <id> <time>` and the like, and `OK BLOCK <id> <time>` (since 1.6,
  /// chatbroker(7), `BLOCK`), which the codec leaves as words.
  public var acceptedMessage: (id: MessageID, time: Timestamp)? {
    switch self {
    case .event(.accepted(_, let id, let time)): return (id, time)
    case .event(.ok(.block, let fields)) where fields.count == 2:
      guard let id = MessageID(fields[0]), let time = Timestamp(rfc3339: fields[1]) else {
        return nil
      }
      return (id, time)
    default: return nil
    }
  }

  /// A delivered message (`MSG`).
  public var message: ChatMessage? {
    guard
      case .event(
        .message(
          let target, let id, let time, let user, let text, let action, let series, let replyTo,
          _, _)) = self
    else { return nil }
    return ChatMessage(
      target: target, id: id, time: time, user: user, text: text, isAction: action,
      series: series, replyTo: replyTo)
  }

  /// A line of a `HISTORY` reply (`HIST`).
  public var historyMessage: ChatMessage? {
    guard
      case .event(
        .history(
          let target, let id, let time, let user, let text, let action, let series, let replyTo,
          let edited, let reactions)) = self
    else { return nil }
    var message = ChatMessage(
      target: target, id: id, time: time, user: user, text: text, isAction: action,
      series: series, replyTo: replyTo)
    message.isEdited = edited
    message.reactions = reactions
    return message
  }

  /// A pending message or series (`SCHED`).
  public var scheduledMessage: ScheduledMessage? {
    guard
      case .event(.scheduled(let id, let target, let due, let created, let rule, let text)) = self
    else { return nil }
    return ScheduledMessage(
      id: id.description, target: target.description, due: due, created: created, text: text,
      rule: rule)
  }

  public static func == (lhs: ServerLine, rhs: ServerLine) -> Bool {
    switch (lhs, rhs) {
    case (.event(let left), .event(let right)): left == right
    case (.unreadable(let left), .unreadable(let right)): left == right
    default: false
    }
  }
}

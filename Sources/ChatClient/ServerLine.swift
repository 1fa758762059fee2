import LineProtocol

/// A delivered message, as `MSG` and `HIST` lines carry it.
public struct ChatMessage: Equatable, Sendable {
  public var target: String
  public var id: String
  /// The time exactly as the broker wrote it (RFC 3339, UTC).
  public var timeText: String
  public var time: Timestamp
  public var user: String
  public var text: String

  public init(
    target: String, id: String, timeText: String, time: Timestamp, user: String, text: String
  ) {
    self.target = target
    self.id = id
    self.timeText = timeText
    self.time = time
    self.user = user
    self.text = text
  }
}

/// A pending scheduled message, as a `SCHED` line carries it.
public struct ScheduledMessage: Equatable, Sendable {
  public var id: String
  public var target: String
  public var dueText: String
  public var due: Timestamp
  public var createdText: String
  public var created: Timestamp
  public var text: String
  /// A series' rule (`weekdays@09:00/Europe/Berlin`), nil for a single message.
  public var rule: String? = nil
}

/// One line from the broker (chatbroker(7), "Lines from the broker"), split into its words.
public enum ServerLine: Equatable, Sendable {
  case hello(version: String, user: String, text: String)
  case ok(verb: String, words: [String])
  case err(verb: String, code: String, text: String)
  case msg(ChatMessage)
  case hist(ChatMessage)
  case sched(ScheduledMessage)
  case join(room: String, user: String)
  case part(room: String, user: String)
  case room(name: String, members: Int)
  case member(room: String, user: String)
  /// Since 1.2: a line of a `CONVERSATIONS` reply.
  case conversation(ConversationSummary)
  /// Since 1.2: another session of mine moved my read marker.
  case markRead(target: String, id: String)
  case info(String)
  case bye(String)
  /// A line this client does not understand (a newer broker): kept, not fatal.
  case unknown(String)

  public init(parsing line: String) {
    // Fixed words first, free text last after the first " :".
    let words: [Substring]
    let text: String?
    if let range = line.range(of: " :") {
      words = line[..<range.lowerBound].split(separator: " ")
      text = String(line[range.upperBound...])
    } else {
      words = line.split(separator: " ")
      text = nil
    }
    let unknown = ServerLine.unknown(line)
    guard let keyword = words.first else {
      self = unknown
      return
    }
    let rest = words.dropFirst().map(String.init)
    switch (keyword, rest.count, text) {
    case ("HELLO", 2, let text?):
      self = .hello(version: rest[0], user: rest[1], text: text)
    case ("OK", 1..., nil):
      self = .ok(verb: rest[0], words: Array(rest.dropFirst()))
    case ("ERR", 2, let text?):
      self = .err(verb: rest[0], code: rest[1], text: text)
    case ("MSG", 4, let text?), ("HIST", 4, let text?):
      guard let time = parseTimestamp(rest[2]) else {
        self = unknown
        return
      }
      let message = ChatMessage(
        target: rest[0], id: rest[1], timeText: rest[2], time: time, user: rest[3], text: text)
      self = keyword == "MSG" ? .msg(message) : .hist(message)
    case ("SCHED", 4...5, let text?):
      guard let due = parseTimestamp(rest[2]), let created = parseTimestamp(rest[3]) else {
        self = unknown
        return
      }
      self = .sched(
        ScheduledMessage(
          id: rest[0], target: rest[1], dueText: rest[2], due: due, createdText: rest[3],
          created: created, text: text, rule: rest.count == 5 ? rest[4] : nil))
    case ("JOIN", 2, nil):
      self = .join(room: rest[0], user: rest[1])
    case ("PART", 2, nil):
      self = .part(room: rest[0], user: rest[1])
    case ("ROOM", 2...3, nil):
      self = .room(name: rest[0], members: Int(rest[1]) ?? 0)
    case ("MEMBER", 2, nil):
      self = .member(room: rest[0], user: rest[1])
    case ("CONV", 6, nil):
      guard let summary = BrokerLine.conversation(words: rest) else {
        self = unknown
        return
      }
      self = .conversation(summary)
    case ("MARKREAD", 2, nil):
      guard let marker = BrokerLine.markRead(words: rest) else {
        self = unknown
        return
      }
      self = .markRead(target: marker.target.description, id: marker.id.description)
    case ("INFO", 0, let text?):
      self = .info(text)
    case ("BYE", 0, let text):
      self = .bye(text ?? "")
    default:
      self = unknown
    }
  }
}

/// Parses the broker's `YYYY-MM-DDTHH:MM:SS[.fff]Z` (``Timestamp/init(utc:)``);
/// `nil` for anything else.
public func parseTimestamp(_ text: String) -> Timestamp? {
  Timestamp(utc: text)
}

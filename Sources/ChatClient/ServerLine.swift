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

  /// Whether this is the final line of a reply (`OK` or `ERR`).
  public var isFinal: Bool {
    switch self {
    case .ok, .err: true
    default: false
    }
  }

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

/// Parses the broker's `YYYY-MM-DDTHH:MM:SS[.fff]Z`; `nil` for anything else.
public func parseTimestamp(_ text: String) -> Timestamp? {
  let bytes = Array(text.utf8)
  guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
  func number(_ range: Range<Int>) -> Int64? {
    var value: Int64 = 0
    for index in range {
      let byte = bytes[index]
      guard byte >= 48 && byte <= 57 else { return nil }
      value = value * 10 + Int64(byte - 48)
    }
    return value
  }
  guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
    bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
    bytes[16] == UInt8(ascii: ":"),
    let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
    let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
  else { return nil }
  var milliseconds: Int64 = 0
  if bytes.count > 20 {
    guard bytes[19] == UInt8(ascii: "."), let fraction = number(20..<bytes.count - 1) else {
      return nil
    }
    let digits = bytes.count - 21
    milliseconds = fraction
    for _ in digits..<max(digits, 3) { milliseconds *= 10 }
    for _ in 3..<max(digits, 3) { milliseconds /= 10 }
  }
  let days = daysFromCivil(year: year, month: month, day: day)
  return Timestamp(
    milliseconds: ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milliseconds)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant).
func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
  let y = month <= 2 ? year - 1 : year
  let era = (y >= 0 ? y : y - 399) / 400
  let yearOfEra = y - era * 400
  let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
  let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

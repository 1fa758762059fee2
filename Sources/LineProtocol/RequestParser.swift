/// Turns one framed line into a ``Request`` or the exact error of PROTOCOL.md
/// section 7. Syntax only: it knows no users, rooms or clock.
public enum RequestParser {
  public static func parse(_ line: String) -> Result<Request, RequestError> {
    var words = WordScanner(line)
    guard let verbWord = words.next() else {
      return .failure(RequestError(verb: "-", code: .syntax, text: "empty request"))
    }
    guard let verb = Verb(caseInsensitive: verbWord) else {
      return .failure(
        RequestError(
          verb: "-", code: .unknown,
          text: "unknown command \(quoted(verbWord)); type HELP for the list of commands"))
    }
    do {
      return .success(try parse(verb, &words))
    } catch {
      return .failure(error)
    }
  }

  private static func parse(_ verb: Verb, _ words: inout WordScanner) throws(RequestError)
    -> Request
  {
    switch verb {
    case .join:
      let room = try roomName(verb, words.required(verb))
      try words.end(verb)
      return .join(room)
    case .part:
      let room = try roomName(verb, words.required(verb))
      try words.end(verb)
      return .part(room)
    case .say:
      let target = try target(verb, words.required(verb))
      return .say(target, text: try text(verb, words.text(verb)))
    case .sayAt:
      let target = try target(verb, words.required(verb))
      let when = try words.required(verb)
      return .sayAt(target, when: String(when), text: try text(verb, words.text(verb)))
    case .history:
      return try history(&words)
    case .scheduled:
      let word = words.next()
      try words.end(verb)
      guard let word else { return .scheduled(nil) }
      return .scheduled(try target(verb, word))
    case .cancel:
      let id = try messageID(verb, words.required(verb))
      try words.end(verb)
      return .cancel(id)
    case .rooms:
      try words.end(verb)
      return .rooms
    case .who:
      let room = try roomName(verb, words.required(verb))
      try words.end(verb)
      return .who(room)
    case .ping:
      let token = words.next()
      try words.end(verb)
      if let token, containsControlCharacter(token) {
        throw RequestError(
          verb: verb.rawValue, code: .badChar, text: "the token contains a control character")
      }
      return .ping(token: token.map(String.init))
    case .help:
      try words.end(verb)
      return .help
    case .quit:
      try words.end(verb)
      return .quit
    }
  }

  /// `HISTORY <target> [<n>] [BEFORE <id> | AFTER <id>]`
  private static func history(_ words: inout WordScanner) throws(RequestError) -> Request {
    let verb = Verb.history
    let target = try target(verb, words.required(verb))
    var count = 50
    var anchor: HistoryAnchor?
    var word = words.next()
    if let digits = word, let first = digits.utf8.first, isDigit(first) {
      guard let parsed = positiveNumber(digits) else {
        throw syntaxError(verb, "<n> must be a whole number from 1")
      }
      count = parsed
      word = words.next()
    }
    if let keyword = word {
      let upper = keyword.uppercased()
      guard upper == "BEFORE" || upper == "AFTER" else { throw syntaxError(verb) }
      let id = try messageID(verb, words.required(verb))
      anchor = upper == "BEFORE" ? .before(id) : .after(id)
    }
    try words.end(verb)
    return .history(target, count: count, anchor: anchor)
  }

  // MARK: - Words

  static func syntaxError(_ verb: Verb, _ detail: String? = nil) -> RequestError {
    let usage = "usage: \(verb.syntax)"
    return RequestError(
      verb: verb.rawValue, code: .syntax, text: detail.map { "\($0); \(usage)" } ?? usage)
  }

  private static func roomName(_ verb: Verb, _ word: Substring) throws(RequestError) -> RoomName {
    guard let room = RoomName(word) else {
      throw RequestError(
        verb: verb.rawValue, code: .badName,
        text: "\(quoted(word)) is not a room name: use # then 1 to 32 of a-z 0-9 . _ -")
    }
    return room
  }

  private static func target(_ verb: Verb, _ word: Substring) throws(RequestError) -> Target {
    guard let target = Target(word) else {
      throw RequestError(
        verb: verb.rawValue, code: .badName,
        text: "\(quoted(word)) is not a target: use #room (1 to 32 of a-z 0-9 . _ -) or @user")
    }
    return target
  }

  private static func messageID(_ verb: Verb, _ word: Substring) throws(RequestError)
    -> MessageID
  {
    guard let id = MessageID(word) else {
      throw RequestError(
        verb: verb.rawValue, code: .badName,
        text: "\(quoted(word)) is not a message id: ids are 1 to 32 letters and digits")
    }
    return id
  }

  /// The free text: one leading `:` removed, never empty, no control
  /// characters (nobody may send escape sequences to others' terminals).
  private static func text(_ verb: Verb, _ raw: Substring) throws(RequestError) -> String {
    var text = raw
    if text.utf8.first == UInt8(ascii: ":") { text = text.dropFirst() }
    if text.utf8.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
      throw RequestError(verb: verb.rawValue, code: .empty, text: "the text is empty")
    }
    if containsControlCharacter(text) {
      throw RequestError(
        verb: verb.rawValue, code: .badChar,
        text: "the text contains a control character; only printable text and TAB are allowed")
    }
    return String(text)
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  /// A decimal number from 1 up, saturating at `Int.max` (the broker clamps).
  private static func positiveNumber(_ word: Substring) -> Int? {
    var value = 0
    for byte in word.utf8 {
      guard isDigit(byte) else { return nil }
      let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflowB) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      value = overflowA || overflowB ? Int.max : sum
    }
    return value > 0 ? value : nil
  }
}

/// U+0000-U+001F except TAB, U+007F and U+0080-U+009F: the characters that
/// could steer a terminal. In UTF-8 the C1 range is `C2 80` to `C2 9F`.
public func containsControlCharacter<S: StringProtocol>(_ text: S) -> Bool {
  var afterC2 = false
  for byte in text.utf8 {
    if byte < 0x20 && byte != 0x09 { return true }
    if byte == 0x7F { return true }
    if afterC2 && byte >= 0x80 && byte <= 0x9F { return true }
    afterC2 = byte == 0xC2
  }
  return false
}

/// Echoes a word of the client's back inside an error text, but only when it
/// is short and harmless; otherwise it is described, not repeated.
func quoted<S: StringProtocol>(_ word: S) -> String {
  if word.utf8.count <= 40 && !containsControlCharacter(word) {
    return "\"\(word)\""
  }
  return "that word"
}

/// Splits a request line into words separated by one or more spaces, and
/// hands out the free text at the end.
struct WordScanner {
  private let line: Substring
  private var position: Substring.Index

  init(_ line: String) {
    self.line = line[...]
    position = self.line.startIndex
  }

  private var atSpace: Bool {
    position != line.endIndex && line.utf8[position] == UInt8(ascii: " ")
  }

  mutating func next() -> Substring? {
    while atSpace { position = line.utf8.index(after: position) }
    guard position != line.endIndex else { return nil }
    let start = position
    while position != line.endIndex && line.utf8[position] != UInt8(ascii: " ") {
      position = line.utf8.index(after: position)
    }
    return line[start..<position]
  }

  mutating func required(_ verb: Verb) throws(RequestError) -> Substring {
    guard let word = next() else { throw RequestParser.syntaxError(verb) }
    return word
  }

  /// After the last fixed word: fails when more words follow.
  mutating func end(_ verb: Verb) throws(RequestError) {
    if next() != nil { throw RequestParser.syntaxError(verb, "too many words") }
  }

  /// The rest of the line after exactly one space.
  mutating func text(_ verb: Verb) throws(RequestError) -> Substring {
    guard atSpace else { throw RequestParser.syntaxError(verb, "the text is missing") }
    return line[line.utf8.index(after: position)...]
  }
}

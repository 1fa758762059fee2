/// Turns one framed line into a ``Request`` or the exact error of
/// chatbroker(7). Syntax only: it knows no users, rooms or clock. An id that
/// no broker can have issued is the one exception it answers itself, with
/// `NOSUCHMSG`, so the error can name the id as it was sent.
public enum RequestParser {
  public static func parse(_ line: String) -> Result<Request, RequestError> {
    // Scan the bytes in place; `line` itself stays for copying the text out.
    var bytes = line
    return bytes.withUTF8 { bytes in
      do throws(RequestError) {
        return .success(try parse(WordScanner(line, bytes)))
      } catch {
        return .failure(error)
      }
    }
  }

  private static func parse(_ scanner: WordScanner) throws(RequestError) -> Request {
    var words = scanner
    guard let verbWord = words.next() else {
      throw RequestError(verb: "-", code: .syntax, text: "empty request")
    }
    guard let verb = Verb(caseInsensitiveUTF8: verbWord) else {
      throw RequestError(
        verb: "-", code: .unknown,
        text: "unknown command \(quoted(verbWord)); type HELP for the list of commands")
    }
    return try parse(verb, &words)
  }

  private static func parse(_ verb: Verb, _ words: inout WordScanner) throws(RequestError)
    -> Request
  {
    try checkCounts(verb.spec, words)
    switch verb {
    case .join:
      let room = try roomName(verb, words.required(verb))
      guard let word = words.next() else { return .join(room) }
      try words.end(verb)
      // `key=<key>` (since 1.5): the key of a room with one.
      if word.count > 4, word.slice(0, 3).equals(caseInsensitive: "KEY"),
        word[3] == UInt8(ascii: "=")
      {
        let key = string(word.slice(4, word.count))
        guard
          case .success = ModeChange.checked(ModeChange(adding: true, letter: .key, argument: key))
        else {
          throw RequestError(
            verb: verb.rawValue, code: .syntax,
            text:
              "\(quoted(word)) is not key=<key>: a key has 1 to \(ModeChange.maximumKeyBytes) bytes and no commas, colons or control characters"
          )
        }
        return .joinKeyed(room, key: key)
      }
      return .joinPrivate(room, try restriction(verb, word))
    case .mode:
      let room = try roomName(verb, words.required(verb))
      guard let changes = words.next() else { return .mode(room) }
      var arguments: [String] = []
      while let argument = words.next() { arguments.append(string(argument)) }
      switch ModeChange.parse(string(changes), arguments: arguments, strict: true) {
      case .success(nil): return .bans(room)
      case .success(let parsed?): return .setMode(room, parsed)
      case .failure(let problem):
        throw RequestError(
          verb: verb.rawValue, code: problem == .tooMany ? .limit : .syntax, text: problem.text)
      }
    case .kick:
      let room = try roomName(verb, words.required(verb))
      let user = try words.required(verb)
      guard UserName.isValid(utf8: user) else {
        throw RequestError(
          verb: verb.rawValue, code: .badName, text: "\(quoted(user)) is not a login name")
      }
      guard words.hasText else { return .kick(room, user: string(user), reason: nil) }
      return .kick(room, user: string(user), reason: try text(verb, words))
    case .invite:
      let room = try roomName(verb, words.required(verb))
      let user = try words.required(verb)
      try words.end(verb)
      guard UserName.isValid(utf8: user) else {
        throw RequestError(
          verb: verb.rawValue, code: .badName, text: "\(quoted(user)) is not a login name")
      }
      return .invite(room, user: string(user))
    case .access:
      let room = try roomName(verb, words.required(verb))
      guard let word = words.next() else { return .access(room) }
      try words.end(verb)
      if word.equals(caseInsensitive: "PUBLIC") { return .setAccess(room, nil) }
      return .setAccess(room, try restriction(verb, word))
    case .part:
      let room = try roomName(verb, words.required(verb))
      guard words.hasText else { return .part(room) }
      return .part(room, reason: try text(verb, words))
    case .say:
      let target = try target(verb, words.required(verb))
      return .say(target, text: try text(verb, words))
    case .block:
      // The text as written, checked as every text is, then read.
      let target = try target(verb, words.required(verb))
      let text = MessageBlock.unescaped(try text(verb, words))
      if let problem = MessageBlock.problem(text, verb: verb.rawValue) { throw problem }
      return .block(target, text: text)
    case .notice:
      let target = try target(verb, words.required(verb))
      return .notice(target, text: try text(verb, words))
    case .action:
      let target = try target(verb, words.required(verb))
      return .action(target, text: try text(verb, words))
    case .reply, .amend:
      // `<target> <id> <text>`: a message of the conversation, and text.
      let target = try target(verb, words.required(verb))
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let text = try text(verb, words)
      guard id != .none else {
        throw RequestError(
          verb: verb.rawValue, code: .noSuchMessage,
          text: "no message \(string(word)) in the history of \(target)")
      }
      return verb == .reply ? .reply(target, to: id, text: text) : .amend(target, id, text: text)
    case .react, .unreact:
      // `<target> <id> <reaction>`: a message of the conversation, and one word.
      let target = try target(verb, words.required(verb))
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let reaction = try name(
        verb, try words.required(verb),
        Reaction.word(utf8:),
        "a reaction: an emoji or a word of 1 to \(Reaction.maximumBytes) bytes, without "
          + "spaces, commas or =, not starting with :")
      try words.end(verb)
      guard id != .none else {
        throw RequestError(
          verb: verb.rawValue, code: .noSuchMessage,
          text: "no message \(string(word)) in the history of \(target)")
      }
      return .react(target, id, reaction: reaction, removed: verb == .unreact)
    case .redact:
      let target = try target(verb, words.required(verb))
      let id = try lastMessageID(verb, &words) { "no message \($0) in the history of \(target)" }
      return .redact(target, id)
    case .sayAt:
      let target = try target(verb, words.required(verb))
      let when = try words.required(verb)
      return .sayAt(target, when: string(when), text: try text(verb, words))
    case .sayEvery:
      let target = try target(verb, words.required(verb))
      let rule = try ruleWords(verb, &words)
      return .sayEvery(target, rule: rule, text: try text(verb, words))
    case .reschedule:
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let when = try ruleWords(verb, &words)
      try words.end(verb)
      try known(id, verb, word)
      return .reschedule(id, when: when)
    case .edit:
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let text = try text(verb, words)
      try known(id, verb, word)
      return .edit(id, text: text)
    case .skip:
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let occurrence = try words.required(verb)
      try words.end(verb)
      try known(id, verb, word)
      return .skip(id, occurrence: string(occurrence))
    case .replace:
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      let occurrence = try words.required(verb)
      let when = try words.required(verb)
      let text = try text(verb, words)
      try known(id, verb, word)
      return .replace(id, occurrence: string(occurrence), when: string(when), text: text)
    case .history:
      return try history(&words)
    case .thread:
      let target = try target(verb, words.required(verb))
      let word = try words.required(verb)
      let id = try messageID(verb, word)
      var count = Request.defaultThreadReplies
      if let digits = words.next() {
        guard isDigit(digits[0]), let parsed = positiveNumber(digits) else {
          throw syntaxError(verb, "<n> must be a whole number from 1")
        }
        count = parsed
      }
      try words.end(verb)
      guard id != .none else {
        throw RequestError(
          verb: verb.rawValue, code: .noSuchMessage,
          text: "no message \(string(word)) in the history of \(target)")
      }
      return .thread(target, id, count: count)
    case .search:
      return try search(&words)
    case .conversations:
      try words.end(verb)
      return .conversations
    case .markRead:
      let target = try target(verb, words.required(verb))
      // Since 1.6, without an id: where the marker stands; with a time as
      // HISTORY shows it instead of an id: the newest message delivered
      // by then (chatbroker(7), MARKREAD).
      guard let word = words.next() else { return .readMarker(target) }
      if let time = Timestamp(rfc3339UTF8: word) {
        try words.end(verb)
        return .markReadAt(target, time)
      }
      try words.end(verb)
      let id = try messageID(verb, word)
      guard id != .none else {
        throw RequestError(
          verb: verb.rawValue, code: .noSuchMessage,
          text: "no message \(string(word)) in the history of \(target)")
      }
      return .markRead(target, id)
    case .scheduled:
      let word = words.next()
      if let word, let keyword = words.next() {
        // SCHEDULED <id> NEXT <n> (chatbroker(7), SCHEDULED).
        guard keyword.equals(caseInsensitive: "NEXT"), let number = words.next(),
          let count = positiveNumber(number)
        else { throw syntaxError(verb) }
        try words.end(verb)
        let id = try messageID(verb, word)
        guard count <= Request.maximumUpcoming else {
          throw RequestError(
            verb: verb.rawValue, code: .limit,
            text: "NEXT takes at most \(Request.maximumUpcoming) occurrences")
        }
        guard id != .none else {
          throw RequestError(
            verb: verb.rawValue, code: .noSuchMessage,
            text: "you have no pending message or series \(string(word))")
        }
        return .upcoming(id, count: count)
      }
      try words.end(verb)
      guard let word else { return .scheduled(nil) }
      return .scheduled(try target(verb, word))
    case .cancel:
      return .cancel(try lastMessageID(verb, &words) { "you have no pending message \($0)" })
    case .rooms:
      guard let keyword = words.next() else { return .rooms(after: nil) }
      guard keyword.equals(caseInsensitive: "AFTER") else { throw syntaxError(verb) }
      let room = try roomName(verb, words.required(verb))
      try words.end(verb)
      return .rooms(after: room)
    case .who:
      let room = try roomName(verb, words.required(verb))
      try words.end(verb)
      return .who(room)
    case .away:
      guard words.hasText else { return .away(nil) }
      if try words.text(verb).elementsEqual(":".utf8) { return .away(nil) }
      return .away(try text(verb, words))
    case .topic:
      let room = try roomName(verb, words.required(verb))
      guard words.hasText else { return .topic(room) }
      // `TOPIC <room> :` clears the topic, as in IRC (chatbroker(7), TOPIC).
      if try words.text(verb).elementsEqual(":".utf8) { return .setTopic(room, text: "") }
      return .setTopic(room, text: try text(verb, words))
    case .ping:
      let token = words.next()
      try words.end(verb)
      guard let token else { return .ping(token: nil) }
      if containsControlCharacter(utf8: token) {
        throw RequestError(
          verb: verb.rawValue, code: .badChar, text: "the token contains a control character")
      }
      // Echoed as a fixed word of OK PING, a token with a TAB would split
      // in two for awk, and one starting with ":" would read as free text
      // (chatbroker(7), "Lines the broker sends").
      if token.contains(UInt8(ascii: "\t")) {
        throw RequestError(
          verb: verb.rawValue, code: .badChar, text: "the token contains a TAB")
      }
      if token.first == UInt8(ascii: ":") {
        throw RequestError(
          verb: verb.rawValue, code: .syntax,
          text: "a PING token cannot start with \":\"; send PING or PING <token>")
      }
      return .ping(token: string(token))
    case .web:
      guard let word = words.next() else { return .web(revoke: false) }
      guard word.equals(caseInsensitive: "REVOKE") else { throw syntaxError(verb) }
      try words.end(verb)
      return .web(revoke: true)
    case .help:
      try words.end(verb)
      return .help
    case .quit:
      guard words.hasText else { return .quit() }
      return .quit(reason: try text(verb, words))
    }
  }

  /// Checks the words against the verb's row of ``VerbTable`` before any
  /// is read: too few, too many, or no text where the verb takes one.
  private static func checkCounts(_ spec: VerbSpec, _ words: WordScanner) throws(RequestError) {
    var probe = words
    var count = 0
    while count < spec.words.upperBound, probe.next() != nil { count += 1 }
    if count < spec.words.lowerBound { throw syntaxError(spec.verb) }
    if spec.takesText {
      if spec.textIsOptional && !probe.hasText { return }
      _ = try probe.text(spec.verb)
    } else {
      try probe.end(spec.verb)
    }
  }

  /// `HISTORY <target> [<n>] [BEFORE <id> | AFTER <id>]`
  private static func history(_ words: inout WordScanner) throws(RequestError) -> Request {
    let verb = Verb.history
    let target = try target(verb, words.required(verb))
    var count = 50
    var anchor: HistoryAnchor?
    var word = words.next()
    if let digits = word, isDigit(digits[0]) {
      guard let parsed = positiveNumber(digits) else {
        throw syntaxError(verb, "<n> must be a whole number from 1")
      }
      count = parsed
      word = words.next()
    }
    if let keyword = word {
      let before = keyword.equals(caseInsensitive: "BEFORE")
      guard before || keyword.equals(caseInsensitive: "AFTER") else { throw syntaxError(verb) }
      let id = try lastMessageID(verb, &words) { "no message \($0) in the history of \(target)" }
      anchor = before ? .before(id) : .after(id)
    }
    try words.end(verb)
    return .history(target, count: count, anchor: anchor)
  }

  /// `SEARCH <target>|* [<n>] [BEFORE <id>] <words>`: a number, or
  /// `BEFORE` and an id, is read as such only when words follow it; words
  /// that start with a colon are all words (chatbroker(7), `SEARCH`).
  private static func search(_ words: inout WordScanner) throws(RequestError) -> Request {
    let verb = Verb.search
    let first = try words.required(verb)
    let target = first.elementsEqual("*".utf8) ? nil : try target(verb, first)
    var count = Request.defaultSearchResults
    var before: MessageID?
    var probe = words
    if let digits = probe.next(), isDigit(digits[0]), probe.hasText {
      guard let parsed = positiveNumber(digits) else {
        throw syntaxError(verb, "<n> must be a whole number from 1")
      }
      count = parsed
      words = probe
    }
    probe = words
    if let keyword = probe.next(), keyword.equals(caseInsensitive: "BEFORE"),
      let word = probe.next(), probe.hasText
    {
      let id = try messageID(verb, word)
      guard id != .none else {
        throw RequestError(
          verb: verb.rawValue, code: .noSuchMessage,
          text: "no message \(string(word)) among those you can search")
      }
      before = id
      words = probe
    }
    return .search(target, count: count, before: before, words: try text(verb, words))
  }

  // MARK: - Words

  static func syntaxError(_ verb: Verb, _ detail: String? = nil) -> RequestError {
    let usage = "usage: \(verb.syntax)"
    return RequestError(
      verb: verb.rawValue, code: .syntax, text: detail.map { "\($0); \(usage)" } ?? usage)
  }

  private static func roomName(_ verb: Verb, _ word: UnsafeBufferPointer<UInt8>)
    throws(RequestError) -> RoomName
  {
    try name(verb, word, RoomName.init(utf8:), "a room name: use # then 1 to 32 of a-z 0-9 . _ -")
  }

  private static func restriction(_ verb: Verb, _ word: UnsafeBufferPointer<UInt8>)
    throws(RequestError) -> RoomRestriction
  {
    try name(
      verb, word, RoomRestriction.init(utf8:),
      verb == .access
        ? "public, invite or group=<group>" : "invite or group=<group> (a Unix group's name)")
  }

  private static func target(_ verb: Verb, _ word: UnsafeBufferPointer<UInt8>)
    throws(RequestError) -> Target
  {
    try name(
      verb, word, Target.init(utf8:),
      "a target: use #room (1 to 32 of a-z 0-9 . _ -) or @user")
  }

  private static func messageID(_ verb: Verb, _ word: UnsafeBufferPointer<UInt8>)
    throws(RequestError) -> MessageID
  {
    try name(verb, word, MessageID.init(utf8:), "a message id: ids are 1 to 32 letters and digits")
  }

  /// `word` read by `parse`, or `ERR <VERB> BADNAME` saying what it is not.
  private static func name<Name>(
    _ verb: Verb, _ word: UnsafeBufferPointer<UInt8>,
    _ parse: (UnsafeBufferPointer<UInt8>) -> Name?, _ expected: String
  ) throws(RequestError) -> Name {
    guard let name = parse(word) else {
      throw RequestError(
        verb: verb.rawValue, code: .badName, text: "\(quoted(word)) is not \(expected)")
    }
    return name
  }

  /// The request's last word, a message id. One the broker cannot have
  /// written (``MessageID/none``) names no message (chatbroker(7), "Names
  /// and values"): answered `NOSUCHMSG` with `missing`'s text for the word
  /// as sent, once the rest of the request is known to be well formed.
  private static func lastMessageID(
    _ verb: Verb, _ words: inout WordScanner, missing: (String) -> String
  ) throws(RequestError) -> MessageID {
    let word = try words.required(verb)
    let id = try messageID(verb, word)
    try words.end(verb)
    guard id != .none else {
      throw RequestError(verb: verb.rawValue, code: .noSuchMessage, text: missing(string(word)))
    }
    return id
  }

  /// A `<rule>` (or `<when>`): one word, or a systemd calendar expression
  /// of up to four (`Mon..Fri *-*-* 09:00 Europe/Berlin`), which ends at the
  /// first word that cannot be part of one (chatbroker(7), "Series").
  private static func ruleWords(_ verb: Verb, _ words: inout WordScanner) throws(RequestError)
    -> String
  {
    var rule = string(try words.required(verb))
    guard Recurrence.startsCalendarExpression(rule) else { return rule }
    for _ in 0..<3 {
      var probe = words
      guard let next = probe.next(), Recurrence.continuesCalendarExpression(string(next)) else {
        break
      }
      rule += " " + string(next)
      words = probe
    }
    return rule
  }

  /// `NOSUCHMSG` naming `word` as sent when `id` is one the broker cannot
  /// have written (chatbroker(7), "Names and values"), as `CANCEL` answers.
  private static func known(_ id: MessageID, _ verb: Verb, _ word: UnsafeBufferPointer<UInt8>)
    throws(RequestError)
  {
    guard id == .none else { return }
    throw RequestError(
      verb: verb.rawValue, code: .noSuchMessage,
      text: "you have no pending message or series \(string(word))")
  }

  /// The free text: one leading `:` removed, never empty, no control
  /// characters (nobody may send escape sequences to others' terminals).
  private static func text(_ verb: Verb, _ words: WordScanner) throws(RequestError) -> String {
    var text = try words.text(verb)
    if text.first == UInt8(ascii: ":") { text = text.slice(1, text.count) }
    if let problem = MessageText.problem(text, verb: verb.rawValue) { throw problem }
    return words.string(text)
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  /// A decimal number from 1 up, saturating at `Int.max` (the broker clamps).
  private static func positiveNumber(_ word: UnsafeBufferPointer<UInt8>) -> Int? {
    var value = 0
    for byte in word {
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
  withUTF8Bytes(text, containsControlCharacter(utf8:))
}

/// The same check on UTF-8 bytes, eight at a time while they hold no byte
/// below 20, no 7F and no C2. In valid UTF-8, `C2` is always a lead byte,
/// and a byte 80-9F right after it is a C1 control; C2 only begins
/// U+0080-U+00BF, so it is rare enough to be checked byte by byte.
public func containsControlCharacter(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
  guard let base = bytes.baseAddress else { return false }
  var index = 0
  var afterC2 = false
  while index < bytes.count {
    if !afterC2, index + 8 <= bytes.count,
      !mayHoldControl(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
    {
      index += 8
      continue
    }
    let end = min(index + 8, bytes.count)
    while index < end {
      let byte = base[index]
      index += 1
      if byte < 0x20 && byte != 0x09 { return true }
      if byte == 0x7F { return true }
      if afterC2 && byte >= 0x80 && byte <= 0x9F { return true }
      afterC2 = byte == 0xC2
    }
  }
  return false
}

/// Whether any of the eight bytes of `word` is below 20, 7F or C2.
@inline(__always)
private func mayHoldControl(_ word: UInt64) -> Bool {
  ByteWord.hasByte(below: 0x20, in: word) | ByteWord.has(0x7F, in: word)
    | ByteWord.has(0xC2, in: word) != 0
}

/// Echoes a word of the client's back inside an error text, but only when it
/// is short and harmless; otherwise it is described, not repeated.
func quoted<S: StringProtocol>(_ word: S) -> String {
  if word.utf8.count <= 40 && !containsControlCharacter(word) {
    return "\"\(word)\""
  }
  return "that word"
}

func quoted(_ word: UnsafeBufferPointer<UInt8>) -> String {
  quoted(string(word))
}

/// Splits a request line into words separated by one or more spaces, and
/// hands out the free text at the end. Works on the bytes of `line`, which
/// must stay alive and unchanged while the scanner is used.
struct WordScanner {
  private let line: String
  private let bytes: UnsafeBufferPointer<UInt8>
  private var position = 0

  init(_ line: String, _ bytes: UnsafeBufferPointer<UInt8>) {
    self.line = line
    self.bytes = bytes
  }

  private var atSpace: Bool {
    position < bytes.count && bytes[position] == UInt8(ascii: " ")
  }

  /// The next word, never empty.
  mutating func next() -> UnsafeBufferPointer<UInt8>? {
    while atSpace { position += 1 }
    guard position < bytes.count else { return nil }
    let start = position
    while position < bytes.count && bytes[position] != UInt8(ascii: " ") { position += 1 }
    return bytes.slice(start, position)
  }

  mutating func required(_ verb: Verb) throws(RequestError) -> UnsafeBufferPointer<UInt8> {
    guard let word = next() else { throw RequestParser.syntaxError(verb) }
    return word
  }

  /// After the last fixed word: fails when more words follow.
  mutating func end(_ verb: Verb) throws(RequestError) {
    if next() != nil { throw RequestParser.syntaxError(verb, "too many words") }
  }

  /// Whether anything but spaces is left.
  var hasText: Bool {
    var probe = self
    return probe.next() != nil
  }

  /// The rest of the line after exactly one space.
  func text(_ verb: Verb) throws(RequestError) -> UnsafeBufferPointer<UInt8> {
    guard atSpace else { throw RequestParser.syntaxError(verb, "the text is missing") }
    return bytes.slice(position + 1, bytes.count)
  }

  /// A piece of the line, cut at ASCII bytes, as a `String`. Copied out of
  /// `line` rather than decoded from bytes: the framer has already
  /// validated the UTF-8, and validating texts again would double its cost.
  func string(_ piece: UnsafeBufferPointer<UInt8>) -> String {
    let start = bytes.baseAddress.map { piece.baseAddress! - $0 } ?? 0
    let utf8 = line.utf8
    let from = utf8.index(utf8.startIndex, offsetBy: start)
    let to = utf8.index(from, offsetBy: piece.count)
    return String(utf8[from..<to]) ?? LineProtocol.string(piece)
  }
}

/// Checks one line from the broker to an IRC client against the form of an
/// IRC message (chatbroker(7), "IRC"; modern IRC and IRCv3 message-tags):
/// `[@tags ][:source ]<command>[ <params>][ :<trailing>]` then CR LF, no
/// NUL, CR or LF inside, no other control character but IRC formatting in
/// a PRIVMSG or NOTICE text, at most 512 bytes after the tags (CR LF
/// included) and at most 8191 bytes of tags. Written apart from the
/// broker's own IRC codec, so that the fuzzer checks it against IRC rather
/// than against itself.
public enum IRCShape {
  /// The most bytes of a line without its tags, CR LF included.
  public static let maximumBytes = 512
  /// The most bytes of the tags, `@` and the space after them included.
  public static let maximumTagBytes = 8191

  /// One line, read loosely: enough to name it in a finding and to find
  /// who it claims to come from.
  public struct Parsed: Equatable, Sendable {
    public var tags: [UInt8]
    public var source: String?
    public var command: String
    public var parameters: [String]
    /// The nick of a `nick!user@host` source; nil for the server's lines.
    public var sourceNick: String? {
      guard let source, let bang = source.firstIndex(of: "!") else { return nil }
      return String(source[..<bang])
    }
  }

  /// Splits a line (without CR LF) into its parts; nil without a command.
  public static func parse(_ body: some Collection<UInt8>) -> Parsed? {
    var rest = Array(body)[...]
    func word() -> ArraySlice<UInt8> {
      let end = rest.firstIndex(of: 0x20) ?? rest.endIndex
      defer { rest = rest[end...].drop { $0 == 0x20 } }
      return rest[..<end]
    }
    var tags: [UInt8] = []
    if rest.first == UInt8(ascii: "@") { tags = Array(word()) }
    var source: String?
    if rest.first == UInt8(ascii: ":") {
      source = String(decoding: word().dropFirst(), as: UTF8.self)
    }
    let command = word()
    guard !command.isEmpty else { return nil }
    var parameters: [String] = []
    while !rest.isEmpty {
      if rest.first == UInt8(ascii: ":") {
        parameters.append(String(decoding: rest.dropFirst(), as: UTF8.self))
        break
      }
      parameters.append(String(decoding: word(), as: UTF8.self))
    }
    return Parsed(
      tags: tags, source: source, command: String(decoding: command, as: UTF8.self),
      parameters: parameters)
  }

  /// Why `line` (as received, without its LF) is not a well-formed IRC
  /// line, or nil when it is. The reason names no variable part, so that
  /// one bug is one finding.
  public static func problem(_ line: [UInt8]) -> String? {
    guard line.last == 0x0D else { return "a line that does not end in CR LF" }
    let body = line.dropLast()
    if body.contains(0) { return "a NUL inside a line" }
    if body.contains(0x0D) { return "a bare CR inside a line" }
    guard String(validating: body, as: UTF8.self) != nil else { return "not valid UTF-8" }
    var start = body.startIndex
    if body.first == UInt8(ascii: "@") {
      let space = body.firstIndex(of: 0x20) ?? body.endIndex
      if space - body.startIndex + 1 > maximumTagBytes {
        return "tags over \(maximumTagBytes) bytes"
      }
      if body[..<space].contains(where: isControl) { return "a control character in the tags" }
      start = space == body.endIndex ? space : space + 1
    }
    let message = body[start...]
    if message.count + 2 > maximumBytes {
      return "a line over \(maximumBytes) bytes without its tags"
    }
    guard let parsed = parse(message), parsed.tags.isEmpty else { return "no command" }
    if message.first == 0x20 { return "a space at the start of the line" }
    if let source = parsed.source, source.isEmpty || message.starts(with: [0x3A, 0x20]) {
      return "an empty source"
    }
    let command = Array(parsed.command.utf8)
    let isNumeric = command.count == 3 && command.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    let isWord = command.allSatisfy { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }
    guard isNumeric || isWord else { return "a command that is neither a word nor a numeric" }
    // Control characters: IRC formatting and CTCP's \x01 may only be in a
    // message's text, the last parameter of PRIVMSG and NOTICE.
    let textAllowed = parsed.command == "PRIVMSG" || parsed.command == "NOTICE"
    let trailing = trailingStart(message)
    for index in message.indices where isControl(message[index]) {
      let inText = textAllowed && trailing.map { index >= $0 } == true
      if !(inText && formatting.contains(message[index])) {
        return "a control character in a parameter"
      }
    }
    if let expected = parameterCounts[parsed.command], parsed.parameters.count != expected {
      return "\(parsed.command) with \(parsed.parameters.count) parameters, not \(expected)"
    }
    return nil
  }

  /// IRC's formatting characters and CTCP's delimiter, and TAB, which a
  /// chatbroker text may hold (chatbroker(7), "Lines from the broker").
  static let formatting: Set<UInt8> = [
    0x01, 0x02, 0x03, 0x04, 0x09, 0x0F, 0x11, 0x16, 0x1D, 0x1E, 0x1F,
  ]

  /// The replies of the gateway whose parameters are fixed: a client reads
  /// the channel or nick they name by position, so a name holding a space
  /// (split into two) must not shift the text.
  static let parameterCounts: [String: Int] = [
    "PONG": 2, "401": 3, "403": 3, "404": 3, "315": 3, "318": 3, "331": 3, "366": 3, "421": 3,
    "433": 3, "461": 3, "482": 3, "473": 3, "341": 3,
  ]

  static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

  /// Where the text after ` :` begins, if the line has one.
  private static func trailingStart(_ message: ArraySlice<UInt8>) -> Int? {
    var index = message.startIndex
    // Skip the source and command: a ` :` inside them is no trailing.
    if message.first == UInt8(ascii: ":") {
      index = message[index...].firstIndex(of: 0x20) ?? message.endIndex
    }
    while index < message.endIndex - 1 {
      if message[index] == 0x20 && message[index + 1] == UInt8(ascii: ":") { return index + 2 }
      index += 1
    }
    return nil
  }

  // MARK: - Identity

  /// The token a fuzzing client puts in what it sends, naming the user
  /// that sends it: `fz<user>t<serial>c<check>q`, letters and digits only,
  /// so that it can be part of a text and of a room name. The check digits
  /// keep a mutated token from naming another user.
  public static func token(user: Int, serial: Int) -> String {
    "fz\(user)t\(serial)c\(check(user, serial))q"
  }

  static func check(_ user: Int, _ serial: Int) -> Int {
    (serial &* 7919 &+ user &* 104_729 &+ 17) % 997
  }

  /// The users the valid tokens in `text` name.
  public static func tokenUsers(in text: some Collection<UInt8>) -> [Int] {
    let bytes = Array(text)
    var users: [Int] = []
    var index = 0
    func number() -> Int? {
      var value = 0
      var digits = 0
      while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 9 {
        value = value * 10 + Int(bytes[index] - 0x30)
        index += 1
        digits += 1
      }
      return digits > 0 ? value : nil
    }
    func expect(_ letter: Character) -> Bool {
      guard index < bytes.count, bytes[index] == letter.asciiValue! else { return false }
      index += 1
      return true
    }
    while index + 1 < bytes.count {
      guard bytes[index] == UInt8(ascii: "f"), bytes[index + 1] == UInt8(ascii: "z") else {
        index += 1
        continue
      }
      index += 2
      guard let user = number(), expect("t"), let serial = number(), expect("c"),
        let check = number(), expect("q"), check == Self.check(user, serial)
      else { continue }
      users.append(user)
    }
    return users
  }

  /// Whether a line from the broker claims, by its source, to be from
  /// another user than the one its tokens name: a PRIVMSG or NOTICE from
  /// `nick!user@host` whose text holds the token `fz<i>...` that `users[i]`
  /// sent.
  /// Returns the claimed and the real user.
  public static func forgery(_ parsed: Parsed, users: [String]) -> (claimed: String, real: String)?
  {
    // Only a text is someone's words: a room's name (a JOIN, a PART, a
    // PRIVMSG's target) may hold any client's token, and anyone may join it.
    guard ["PRIVMSG", "NOTICE"].contains(parsed.command.uppercased()),
      let nick = parsed.sourceNick, !nick.contains("|"), let text = parsed.parameters.last,
      parsed.parameters.count >= 2
    else { return nil }
    for user in tokenUsers(in: text.utf8) where user < users.count && users[user] != nick {
      return (nick, users[user])
    }
    return nil
  }
}

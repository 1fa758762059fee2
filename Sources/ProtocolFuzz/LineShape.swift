import LineProtocol

/// Checks one line from the broker against chatbroker(7), "Lines from the
/// broker": a capital keyword, fixed words without control characters, and
/// free text only after ` :`, itself free of control characters but TAB.
public enum LineShape {
  /// Why `line` (without its LF) is not well formed, or `nil` when it is.
  public static func problem(_ line: [UInt8]) -> String? {
    guard String(validating: line, as: UTF8.self) != nil else { return "not valid UTF-8" }
    // Found by bytes, as chatbroker(7) defines words: a space or colon
    // followed by a combining mark is still a space or a colon.
    let colon = line.indices.dropLast().first {
      line[$0] == UInt8(ascii: " ") && line[$0 + 1] == UInt8(ascii: ":")
    }
    let fixed = colon.map { line[..<$0] } ?? line[...]
    let free = colon.map { String(decoding: line[($0 + 2)...], as: UTF8.self) }
    if hasControl(String(decoding: fixed, as: UTF8.self), allowTab: false) {
      return "a control character in the fixed words"
    }
    if let free, hasControl(free, allowTab: true) { return "a control character in the text" }
    let words = ProtocolModel.words(fixed, keepingEmpty: true)
    if words.contains("") { return "an empty word (two spaces, or a space at an end)" }
    return shapeProblem(words, free)
  }

  private static func shapeProblem(_ words: [String], _ text: String?) -> String? {
    let keyword = words[0]
    func fields(_ count: Int, text wanted: Bool) -> String? {
      if words.count != count {
        return "\(keyword) with \(words.count - 1) words, not \(count - 1)"
      }
      if wanted && text == nil { return "\(keyword) without its ` :text`" }
      if !wanted && text != nil { return "\(keyword) with a ` :text` it should not have" }
      return nil
    }
    switch keyword {
    case "HELLO":
      return fields(3, text: true) ?? check(words[2], isUser)
    case "OK":
      return okProblem(words, text)
    case "ERR":
      if let problem = fields(3, text: true) { return problem }
      if words[1] != "-" && !ProtocolModel.verbs.contains(words[1]) {
        return "ERR names no verb: \(words[1])"
      }
      return ProtocolModel.errorCodes.contains(words[2]) ? nil : "unknown error code \(words[2])"
    case "MSG", "HIST":
      // Since 1.4 after the user: ACTION, then SERIES <id>, since 1.6
      // REPLY <id> and on HIST EDITED; or for a message taken back
      // REDACTED with an empty text (chatbroker(7), ACTION, REDACT, MSG).
      var flags = words.dropFirst(5)
      if keyword == "HIST" && flags == ["REDACTED"] && text == "" { flags = [] }
      if flags.first == "ACTION" { flags.removeFirst() }
      if flags.first == "SERIES", flags.count >= 2 {
        if let problem = check(flags[flags.startIndex + 1], isID) { return problem }
        flags.removeFirst(2)
      }
      // Since 1.6: REPLY <id> (chatbroker(7), REPLY), then on HIST
      // EDITED (AMEND).
      if flags.first == "REPLY", flags.count >= 2 {
        if let problem = check(flags[flags.startIndex + 1], isID) { return problem }
        flags.removeFirst(2)
      }
      if keyword == "HIST" && flags.first == "EDITED" { flags.removeFirst() }
      // Since 1.6, on HIST: REACTIONS <reaction>=<user>+<user>,… (REACT).
      if keyword == "HIST" && flags.first == "REACTIONS", flags.count >= 2 {
        let word = flags[flags.startIndex + 1]
        if let problem = check(word, { ReactionTally.parse($0) != nil }) { return problem }
        flags.removeFirst(2)
      }
      // Since 1.6, last: BLOCK, a text of several lines written with \n
      // (chatbroker(7), BLOCK).
      if flags == ["BLOCK"] {
        guard MessageBlock.isBlock(MessageBlock.unescaped(text ?? "")) else {
          return "\(keyword) BLOCK with a text of one line"
        }
        flags = []
      }
      guard flags.isEmpty else { return "\(keyword) with unknown words after the user" }
      return fields(max(words.count, 5), text: true) ?? check(words[1], isTarget)
        ?? check(words[2], isID) ?? check(words[3], isTime) ?? check(words[4], isUser)
    case "TOPIC":
      return fields(4, text: true) ?? check(words[1], isRoom) ?? check(words[2], isUser)
        ?? check(words[3], isTime)
    case "REDACT":
      return fields(4, text: false) ?? check(words[1], isTarget) ?? check(words[2], isID)
        ?? check(words[3], isUser)
    // AMEND <target> <id> <user> :<text> (chatbroker(7), AMEND, since 1.6).
    case "AMEND":
      return fields(4, text: true) ?? check(words[1], isTarget) ?? check(words[2], isID)
        ?? check(words[3], isUser)
    // REACT|UNREACT <target> <id> <user> <reaction> (chatbroker(7), since 1.6).
    case "REACT", "UNREACT":
      return fields(5, text: false) ?? check(words[1], isTarget) ?? check(words[2], isID)
        ?? check(words[3], isUser) ?? check(words[4], Reaction.isValid)
    case "JOIN", "PART":
      return fields(3, text: false) ?? check(words[1], isRoom) ?? check(words[2], isUser)
    case "MEMBER":
      // The member's away text since 1.4 (chatbroker(7), WHO).
      return fields(3, text: text != nil) ?? check(words[1], isRoom) ?? check(words[2], isUser)
    case "AWAY":
      return fields(2, text: true) ?? check(words[1], isUser)
    // Since 1.5 (chatbroker(7), MODE and KICK).
    case "MODE":
      guard text == nil, words.count >= 4, words.count <= 10 else { return "MODE malformed" }
      return check(words[1], isRoom) ?? check(words[2], isUser) ?? check(words[3], isModeChanges)
    case "BAN":
      return fields(5, text: false) ?? check(words[1], isRoom) ?? check(words[3], isUser)
        ?? check(words[4], isTime)
    case "KICK":
      return fields(4, text: text != nil) ?? check(words[1], isRoom) ?? check(words[2], isUser)
        ?? check(words[3], isUser)
    // Since 1.6: INVITE <room> <user> <by>, to the invited user.
    case "INVITE":
      return fields(4, text: false) ?? check(words[1], isRoom) ?? check(words[2], isUser)
        ?? check(words[3], isUser)
    case "SCHED":
      // A series' line has its rule as a sixth word (chatbroker(7), SCHEDULED).
      return (words.count == 6 ? fields(6, text: true) : fields(5, text: true))
        ?? check(words[1], isID) ?? check(words[2], isTarget)
        ?? check(words[3], isTime) ?? check(words[4], isTime)
    case "ROOM":
      // `SHARED` since 1.3, the topic as free text and `PRIVATE` since 1.4.
      if words.count == 4 && words[3] != "SHARED" && words[3] != "PRIVATE" {
        return "ROOM with a fourth word"
      }
      if words.count < 3 || words.count > 4 { return "ROOM with \(words.count - 1) words" }
      return check(words[1], isRoom) ?? check(words[2], isCount)
    case "CONV":
      let none = { (word: String) in word == "-" }
      return fields(7, text: false) ?? check(words[1], isTarget)
        ?? check(words[2], { isID($0) || none($0) }) ?? check(words[3], { isTime($0) || none($0) })
        ?? check(words[4], { isID($0) || none($0) }) ?? check(words[5], isCount)
        ?? check(words[6], isCount)
    case "MARKREAD":
      // `*`: no marker, in the answer to `MARKREAD <target>` (since 1.6).
      return fields(3, text: false) ?? check(words[1], isTarget)
        ?? check(words[2], { isID($0) || $0 == "*" })
    case "INFO", "BYE":
      return fields(1, text: true)
    default:
      return "unknown keyword \(keyword.prefix(20))"
    }
  }

  /// `OK <VERB> ...` with the words chatbroker(7) shows for each verb.
  private static func okProblem(_ words: [String], _ text: String?) -> String? {
    guard words.count >= 2 else { return "OK without a verb" }
    let verb = words[1]
    let rest = Array(words.dropFirst(2))
    func shape(_ checks: [(String) -> Bool]) -> String? {
      if text != nil { return "OK \(verb) with a ` :text`" }
      if rest.count != checks.count { return "OK \(verb) with \(rest.count) words after the verb" }
      for (word, isValid) in zip(rest, checks) where !isValid(word) {
        return "OK \(verb): bad field \(word.prefix(40))"
      }
      return nil
    }
    switch verb {
    case "JOIN": return shape([isRoom, isCount])
    case "PART": return shape([isRoom])
    case "SAY", "BLOCK", "SAYAT", "ACTION", "NOTICE", "REPLY", "SKIP", "REPLACE", "RESCHEDULE",
      "EDIT":
      return shape([isID, isTime])
    // OK SAYEVERY <id> <due> <rule> (chatbroker(7), SAYEVERY).
    case "SAYEVERY": return shape([isID, isTime, { !$0.isEmpty }])
    case "REDACT", "AMEND": return shape([isTarget, isID])
    case "REACT", "UNREACT": return shape([isTarget, isID, Reaction.isValid])
    case "TOPIC": return shape([isRoom])
    case "INVITE": return shape([isRoom, isUser])
    case "KICK": return shape([isRoom, isUser])
    case "MODE":
      // OK MODE <room> [<modes or changes> [<arguments>]] (chatbroker(7), MODE).
      guard text == nil, let room = rest.first, isRoom(room), rest.count <= 8,
        rest.count == 1 || isModeChanges(rest[1])
      else { return "OK MODE malformed: \(rest.joined(separator: " ").prefix(60))" }
      return nil
    case "ACCESS": return shape([isRoom, isAccess])
    case "AWAY": return rest.isEmpty || rest == ["BACK"] ? nil : "OK AWAY with \(rest)"
    case "HISTORY": return shape([isTarget, isCount])
    case "THREAD":
      // OK THREAD <target> <id> <count> [MORE] (chatbroker(7), THREAD).
      let more = rest.count == 4 && rest[3] == "MORE"
      guard text == nil, rest.count == 3 || more, isTarget(rest[0]), isID(rest[1]), isCount(rest[2])
      else { return "OK THREAD malformed: \(rest.joined(separator: " ").prefix(60))" }
      return nil
    case "SEARCH":
      // OK SEARCH <target>|* <count> [MORE <id>] (chatbroker(7), SEARCH).
      let more = rest.count == 4 && rest[2] == "MORE" && isID(rest[3])
      let anywhere = rest.first == "*"
      guard text == nil, rest.count == 2 || more, anywhere || isTarget(rest[0]), isCount(rest[1])
      else { return "OK SEARCH malformed: \(rest.joined(separator: " ").prefix(60))" }
      return nil
    case "SCHEDULED": return shape([isCount])
    case "ROOMS":
      // OK ROOMS <count> [MORE] (chatbroker(7), ROOMS): a page of 1000.
      if rest.count == 2 && rest[1] == "MORE" {
        return text == nil && isCount(rest[0]) ? nil : "OK ROOMS malformed"
      }
      return shape([isCount])
    case "CANCEL": return shape([isID])
    case "WHO": return shape([isRoom, isCount])
    case "CONVERSATIONS": return shape([isCount])
    case "MARKREAD": return shape([isTarget, { isID($0) || $0 == "*" }])
    case "HELP", "QUIT": return shape([])
    case "WEB":
      // OK WEB <token> <expires> <link>, or OK WEB REVOKED <n> (chatbroker(7), WEB).
      if rest.first == "REVOKED" { return shape([{ $0 == "REVOKED" }, isCount]) }
      return shape([
        { $0.utf8.count == 64 && $0.allSatisfy(\.isHexDigit) }, isTime,
        { $0.hasPrefix("http://localhost:") && $0.contains("/#k=") },
      ])
    case "PING":
      // The token is one word of the client's, echoed: it must not make the
      // line look as if it had a free text.
      if text != nil { return "OK PING whose token reads as a ` :text`" }
      return rest.count <= 1 ? nil : "OK PING with \(rest.count) words"
    default: return "OK names no verb: \(verb.prefix(20))"
    }
  }

  private static func check(_ word: String, _ isValid: (String) -> Bool) -> String? {
    isValid(word) ? nil : "bad field \(word.prefix(40))"
  }

  static func hasControl<S: StringProtocol>(_ text: S, allowTab: Bool) -> Bool {
    text.unicodeScalars.contains { scalar in
      let value = scalar.value
      if value == 0x09 { return !allowTab }
      return value < 0x20 || value == 0x7F || (value >= 0x80 && value <= 0x9F)
    }
  }

  static func isRoom(_ word: String) -> Bool {
    let bytes = Array(word.utf8)
    guard bytes.count >= 2, bytes.count <= 33, bytes[0] == UInt8(ascii: "#") else { return false }
    return bytes.dropFirst().allSatisfy { byte in
      (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
  }

  /// A room's access as `ACCESS` answers it: `public`, `invite` or
  /// `group=<group>` with a group named as a login name is
  /// (chatbroker(7), "Private rooms").
  static func isAccess(_ word: String) -> Bool {
    word == "public" || word == "invite"
      || (word.hasPrefix("group=") && isUser(String(word.dropFirst(6))))
  }

  /// `+` then mode letters and signs, as MODE writes them (chatbroker(7),
  /// "Moderation"): `+knt`, `+o-v`.
  static func isModeChanges(_ word: String) -> Bool {
    (word.hasPrefix("+") || word.hasPrefix("-"))
      && word.allSatisfy { "+-ovbklntmsi".contains($0) }
  }

  static func isUser(_ word: String) -> Bool {
    !word.isEmpty && word.utf8.count <= 256 && !word.hasPrefix("#") && !word.hasPrefix("@")
      && !word.hasPrefix(":")
  }

  static func isTarget(_ word: String) -> Bool {
    isRoom(word) || (word.hasPrefix("@") && isUser(String(word.dropFirst())))
  }

  static func isID(_ word: String) -> Bool {
    (1...32).contains(word.utf8.count)
      && word.utf8.allSatisfy {
        ($0 >= 0x30 && $0 <= 0x39) || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A)
      }
  }

  static func isCount(_ word: String) -> Bool {
    !word.isEmpty && word.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
      && (word == "0" || !word.hasPrefix("0"))
  }

  /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, with months, days, hours, minutes and
  /// seconds in their ranges.
  static func isTime(_ word: String) -> Bool {
    let bytes = Array(word.utf8)
    let pattern = Array("dddd-dd-ddTdd:dd:dd.dddZ".utf8)
    guard bytes.count == pattern.count else { return false }
    for (byte, shape) in zip(bytes, pattern) {
      if shape == UInt8(ascii: "d") {
        guard byte >= 0x30 && byte <= 0x39 else { return false }
      } else if byte != shape {
        return false
      }
    }
    func number(_ from: Int, _ count: Int) -> Int {
      bytes[from..<from + count].reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
    return (1...12).contains(number(5, 2)) && (1...31).contains(number(8, 2))
      && number(11, 2) < 24 && number(14, 2) < 60 && number(17, 2) < 60
  }
}

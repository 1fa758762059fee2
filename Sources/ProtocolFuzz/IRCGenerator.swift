/// Makes IRC lines for the fuzzer's IRC clients (chatbroker(7), "IRC"):
/// the registration, then every command the gateway knows with valid and
/// edge-case parameters, lines naming hundreds of targets, message tags
/// (oversized too), bare CRs and control characters inside parameters,
/// invalid UTF-8, over-long lines, huge numbers, mutations of all of these,
/// and floods of what costs the broker most.
///
/// Every text, and some room names, carry the token of the user that
/// sends it (``IRCShape/token(user:serial:)``), so that the checker can
/// tell when a line shows one user's words under another's name.
public struct IRCGenerator {
  public var random: SplitMix64
  /// The Unix users tokens name, by number; `users[speaker]` is who sends.
  public let users: [String]
  /// The user the next lines are for.
  public var speaker = 0
  private var serial = 0
  /// Message ids from `msgid` tags, for CHATHISTORY and MARKREAD.
  private var knownIDs: [String] = []
  private var lines = RequestGenerator(random: SplitMix64(seed: 0), users: [])

  public static let capabilities = [
    "server-time", "message-tags", "echo-message", "batch", "draft/chathistory",
    "draft/read-marker", "away-notify", "labeled-response", "multi-prefix", "userhost-in-names",
    "draft/multiline",
  ]

  public init(random: SplitMix64, users: [String]) {
    self.random = random
    self.users = users
    lines = RequestGenerator(random: self.random.split(), users: users)
  }

  /// The capabilities one client asks for: mostly all, sometimes none or
  /// some.
  public mutating func capabilitySet() -> [String] {
    switch Int.random(in: 0..<10, using: &random) {
    case 0: return []
    case 1, 2: return Self.capabilities.filter { _ in random.chance(50) }
    default: return Self.capabilities
    }
  }

  /// Registration as a client does it: `CAP LS 302`, `CAP REQ` of the
  /// capabilities, `NICK`, `USER`, `CAP END` (no CAP at all for none).
  public static func registration(nick: String, capabilities: [String]) -> [[UInt8]] {
    var lines: [String] = []
    if !capabilities.isEmpty {
      lines += ["CAP LS 302", "CAP REQ :" + capabilities.joined(separator: " ")]
    }
    lines += ["NICK \(nick)", "USER \(nick) 0 * :chatfuzz"]
    if !capabilities.isEmpty { lines.append("CAP END") }
    return lines.map { Array($0.utf8) }
  }

  /// Learns message ids from a line's `msgid` tag.
  public mutating func learn(_ received: [UInt8]) {
    guard received.first == UInt8(ascii: "@"),
      let range = received.firstRange(of: Array("msgid=".utf8))
    else { return }
    let value = received[range.upperBound...].prefix { $0 != 0x3B && $0 != 0x20 }
    guard !value.isEmpty, value.count <= 32 else { return }
    if knownIDs.count >= 128 { knownIDs.remove(at: Int.random(in: 0..<128, using: &random)) }
    knownIDs.append(String(decoding: value, as: UTF8.self))
  }

  // MARK: - Lines

  /// One line, without its CR LF.
  public mutating func next() -> [UInt8] {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<50: return Array(command().utf8)
    case 50..<72: return mutate(Array(command().utf8))
    case 72..<76: return Array(labeled(multiTarget()).utf8)
    case 76..<80: return Array(labeled(command()).utf8)
    case 80..<86: return tagged()
    case 86..<92: return injected()
    case 92..<96: return overLong()
    case 96..<98: return Array(multilineLine().utf8)
    default: return lines.noise()
    }
  }

  /// A line of at most `maximumBytes`, for a client that trickles.
  public mutating func shortLine(maximumBytes: Int = 256) -> [UInt8] {
    for _ in 0..<16 {
      let drawn = next()
      if drawn.count <= maximumBytes { return drawn }
    }
    return Array("PING :short".utf8)
  }

  /// A batch of the lines that make the broker work hardest per byte.
  public mutating func flood() -> [[UInt8]] {
    let count = Int.random(in: 20...600, using: &random)
    switch Int.random(in: 0..<8, using: &random) {
    case 0:
      return (0..<count / 4 + 1).map { _ in Array(targets("JOIN", many: 900).utf8) }
    case 1:
      let limit = random.pick(["1000", "99999999999999999999", "*"])
      return Array(
        repeating: Array("CHATHISTORY LATEST #hot * \(limit)".utf8), count: count)
    case 2:
      return Array(
        repeating: Array(
          "CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2100-01-01T00:00:00.000Z 1000"
            .utf8), count: count)
    case 3:
      return Array(
        repeating: Array(random.pick(["LIST", "NAMES #hot", "WHO #hot"]).utf8), count: count)
    case 4:
      return (0..<count).map { index in Array("PRIVMSG #hot :flood \(index) \(token())".utf8) }
    case 5:
      return (0..<count / 4 + 1).map { _ in Array(targets("PRIVMSG", many: 300).utf8) }
    case 6:
      return multilineBatch(lineCount: count).map { Array($0.utf8) }
    default:
      return (0..<count).map { _ in next() }
    }
  }

  // MARK: - Multiline batches

  /// One line of a draft/multiline batch (chatbroker(7), "IRC"), drawn
  /// alone so that batches open, close and interleave with other lines
  /// at random: an opener, a line of one of two references, a
  /// continuation, a NOTICE inside, an end.
  mutating func multilineLine() -> String {
    let reference = random.pick(["m1", "m2"])
    let target = random.chance(80) ? "#hot" : target()
    switch Int.random(in: 0..<6, using: &random) {
    case 0: return "BATCH +\(reference) draft/multiline \(target)"
    case 1: return "BATCH -\(reference)"
    case 2: return "@batch=\(reference);draft/multiline-concat PRIVMSG \(target) :\(text())"
    case 3: return "@batch=\(reference) NOTICE \(target) :\(text())"
    default:
      return "@batch=\(reference) PRIVMSG \(target) :\(random.chance(10) ? "" : text())"
    }
  }

  /// A whole batch, `lineCount` lines long or so: valid, past the line
  /// or byte bound, unterminated, or interleaved with another.
  mutating func multilineBatch(lineCount: Int) -> [String] {
    let reference = "f\(token())"
    let lines = min(lineCount, 150)
    var batch = ["BATCH +\(reference) draft/multiline #hot"]
    let long = random.chance(30)
    for index in 0..<lines {
      let concat = index > 0 && random.chance(20) ? ";draft/multiline-concat" : ""
      let text = long ? String(repeating: "x", count: 400) : random.chance(10) ? "" : text()
      batch.append(
        "@batch=\(reference)\(concat) PRIVMSG #hot :\(text.isEmpty && !concat.isEmpty ? "y" : text)"
      )
      if random.chance(2) { batch.append("BATCH +\(reference)x draft/multiline #hot") }
    }
    switch Int.random(in: 0..<4, using: &random) {
    case 0: break
    case 1: batch.insert(contentsOf: ["PING :mid", "PRIVMSG #hot :between"], at: batch.count / 2)
    default: batch.append("BATCH -\(reference)")
    }
    return batch
  }

  // MARK: - Commands

  /// A token of the speaker's, new each time.
  public mutating func token() -> String {
    serial += 1
    return IRCShape.token(user: speaker, serial: serial)
  }

  /// `line` with a `label` tag (labeled-response), unless it has tags.
  mutating func labeled(_ line: String) -> String {
    line.hasPrefix("@") ? line : "@label=\(token()) " + line
  }

  /// One of the gateway's commands with parameters drawn from valid
  /// values and their edges.
  mutating func command() -> String {
    let name = random.pick([
      "JOIN", "JOIN", "PART", "NAMES", "WHO", "WHOIS", "LIST", "TOPIC", "MODE", "PRIVMSG",
      "PRIVMSG", "PRIVMSG", "NOTICE", "SAYAT", "MARKREAD", "CHATHISTORY", "CHATHISTORY",
      "USERHOST", "ISON", "AWAY", "LUSERS", "MOTD", "PING", "PONG", "QUIT", "NICK", "USER", "CAP",
      "SERVICE", "PASS", "KICK", "VERSION", "TAGMSG", "WHOWAS", "TIME", "INFO", "ADMIN",
      "INVITE", "OPER", "KILL", "STATS", "LINKS", "HELP",
    ])
    let shown = random.chance(10) ? name.lowercased() : name
    switch name {
    case "NAMES": return "\(shown) \(room())"
    case "JOIN":
      // A key asks for a private room (chatbroker(7), "Moderation").
      if random.chance(10) { return "\(shown) \(room()) \(lines.modeArgument())" }
      return random.chance(75)
        ? "\(shown) \(room())" : "\(shown) \(room()) \(lines.access())"
    case "PART":
      return random.chance(70) ? "\(shown) \(room())" : "\(shown) \(room()) :\(text())"
    case "WHO":
      let nickOrMask = random.chance(70) ? nick() : random.pick(["*", "a*", "?ob", nick() + "*"])
      let mask = random.chance(70) ? room() : nickOrMask
      // WHOX: fields in any order, a token or none, unknown letters too.
      guard random.chance(30) else { return "\(shown) \(mask)" }
      let count = Int.random(in: 0...16, using: &random)
      let fields = String("tcuihsnfdlaorxz%".shuffled(using: &random).prefix(count))
      return "\(shown) \(mask) %\(fields)" + random.pick(["", ",123", ",7", ",1234", ",x", ","])
    case "WHOIS": return random.chance(80) ? "\(shown) \(nick())" : "\(shown) host \(nick())"
    case "LIST":
      // ELIST terms: masks, ! masks, member counts, and kinds not offered.
      guard random.chance(40) else { return shown }
      let terms = (0..<Int.random(in: 1...3, using: &random)).map { _ in
        random.pick([room(), "*a*", "!#h*", ">0", "<2", ">x", "C>5", "T<1", "!", "<", ""])
      }
      return "\(shown) \(terms.joined(separator: ","))"
    case "LUSERS", "MOTD", "VERSION", "TIME", "INFO", "ADMIN", "LINKS": return shown
    case "TAGMSG":
      // A reaction (+draft/react or +draft/unreact with +draft/reply,
      // kept since 1.6) on an id seen or not, or a signal that is kept
      // nowhere.
      guard random.chance(60) else { return "@+typing=active \(shown) \(target())" }
      let tag = random.chance(70) ? "+draft/react" : "+draft/unreact"
      let on = random.pick(knownIDs + ["1", "zz"])
      return "@\(tag)=\(lines.reaction());+draft/reply=\(on) \(shown) \(target())"
    case "WHOWAS", "KILL": return random.chance(80) ? "\(shown) \(nick())" : shown
    case "INVITE": return "\(shown) \(nick()) \(room())"
    case "OPER": return "\(shown) \(nick()) \(token())"
    case "STATS": return "\(shown) \(random.pick(["u", "", "l"]))"
    case "TOPIC": return random.chance(50) ? "\(shown) \(room())" : "\(shown) \(room()) :\(text())"
    case "MODE":
      // Operators and modes (chatbroker(7), "Moderation").
      if random.chance(40) {
        var line = "\(shown) \(room()) \(lines.modeChanges())"
        for _ in 0..<Int.random(in: 0...3, using: &random) { line += " \(lines.modeArgument())" }
        return random.chance(20) ? line + " :\(lines.modeArgument())" : line
      }
      return random.pick([
        "\(shown) \(room())", "\(shown) \(room()) +b", "\(shown) \(room()) +o \(nick())",
        "\(shown) \(nick())", "\(shown) \(nick()) +i", "\(shown) \(room()) +i",
        "\(shown) \(room()) -i", "\(shown) \(room()) +k :", "\(shown) \(room()) +l :-1",
      ])
    case "KICK":
      // One nick or several, a reason or none.
      let nicks = random.chance(30) ? "\(nick()),\(nick())" : nick()
      return random.chance(50)
        ? "\(shown) \(room()) \(nicks)" : "\(shown) \(room()) \(nicks) :\(text())"
    case "PRIVMSG", "NOTICE":
      // A reply (+draft/reply, kept since 1.6) to an id seen or not.
      guard random.chance(20) else { return "\(shown) \(target()) :\(text())" }
      let answered = random.pick(knownIDs + ["1", "zz", "-1", ""])
      return "@+draft/reply=\(answered) \(shown) \(target()) :\(text())"
    case "SAYAT": return "\(shown) \(target()) \(lines.when()) :\(text())"
    case "MARKREAD":
      return random.chance(40) ? "\(shown) \(target())" : "\(shown) \(target()) \(reference())"
    case "CHATHISTORY": return "\(shown) \(chathistory())"
    case "USERHOST", "ISON": return "\(shown) \(nick()) \(nick())"
    case "AWAY": return random.chance(50) ? shown : "\(shown) :\(text())"
    case "PING", "PONG": return "\(shown) \(random.pick([":x", "x", ":a b c", "", ":" + token()]))"
    case "QUIT": return random.chance(50) ? shown : "\(shown) :bye \(token())"
    case "NICK": return "\(shown) \(nick())"
    case "USER": return "\(shown) \(nick()) 0 * :\(text())"
    case "CAP":
      return random.pick([
        "CAP LS 302", "CAP LIST", "CAP END", "CAP REQ :" + random.pick(Self.capabilities),
        "CAP REQ :-batch", "CAP REQ :nosuchcap", "CAP NOSUCH", "CAP",
      ])
    case "SERVICE": return "PRIVMSG sched|bot :\(service())"
    case "HELP":
      let command = random.pick(["HELP", "HELPOP", "help"])
      return random.chance(30)
        ? command : "\(command) \(random.pick(["PRIVMSG", "who", "NOSUCH", ":", nick()]))"
    default: return "\(shown) \(room()) \(nick())"
    }
  }

  mutating func service() -> String {
    switch Int.random(in: 0..<5, using: &random) {
    case 0:
      return random.chance(50)
        ? "at \(lines.when()) \(target()) \(text())"
        : "every \(RuleGenerator.rule(using: &random, oneWord: true)) \(target()) \(text())"
    case 1: return random.chance(50) ? "list" : "next \(random.pick(knownIDs + ["1"])) 100"
    case 2: return "cancel \(random.pick(knownIDs.isEmpty ? ["1", "zz", "-1"] : knownIDs))"
    case 3: return "help"
    default: return random.pick(["at", "at +1s", "cancel", "", "\u{1}ACTION hi\u{1}"])
    }
  }

  mutating func chathistory() -> String {
    let limit = random.pick([
      "1", "50", "1000", "1001", "0", "-1", "99999999999999999999", "9223372036854775808", "x",
    ])
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return "LATEST \(target()) * \(limit)"
    case 1: return "LATEST \(target()) \(reference()) \(limit)"
    case 2: return "BEFORE \(target()) \(reference()) \(limit)"
    case 3: return "AFTER \(target()) \(reference()) \(limit)"
    case 4: return "AROUND \(target()) \(reference()) \(limit)"
    case 5: return "BETWEEN \(target()) \(reference()) \(reference()) \(limit)"
    default:
      return random.pick([
        "TARGETS \(reference()) \(reference()) \(limit)", "TARGETS", "NOSUCH #a * 1", "LATEST",
      ])
    }
  }

  mutating func reference() -> String {
    if !knownIDs.isEmpty && random.chance(40) { return "msgid=" + random.pick(knownIDs) }
    return random.pick([
      "*", "timestamp=2026-12-01T06:00:00.000Z", "timestamp=0000-01-01T00:00:00.000Z",
      "timestamp=9999-12-31T23:59:59.999Z", "timestamp=2026-13-01T00:00:00.000Z", "timestamp=",
      "msgid=", "msgid=zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "msgid=1", "x=y", "timestamp=@-1",
    ])
  }

  mutating func room() -> String {
    switch Int.random(in: 0..<10, using: &random) {
    case 0..<4: return random.pick(["#a", "#b", "#hot", "#ops", "#Hot"])
    case 4..<6: return "#" + token()
    case 6: return random.pick(["#", "##", "#é", "#a\u{7}", "#a:b", "a", "#a\u{0}", "0", "*"])
    case 7: return "#" + String(repeating: "r", count: Int.random(in: 1...40, using: &random))
    default: return "#r\(Int.random(in: 0..<300, using: &random))"
    }
  }

  mutating func nick() -> String {
    switch Int.random(in: 0..<8, using: &random) {
    case 0..<3: return random.pick(users)
    case 3: return "sched|bot"
    case 4: return String(repeating: "n", count: Int.random(in: 30...300, using: &random))
    case 5: return random.pick(["*", "-", "a@b", "a!b", "\u{1}", "nosuchuser", "uid4294967294"])
    default: return random.pick(["root", "nobody", "alice"])
    }
  }

  mutating func target() -> String {
    random.chance(65) ? room() : nick()
  }

  mutating func text() -> String {
    let mark = token()
    switch Int.random(in: 0..<16, using: &random) {
    case 0: return ""
    case 1: return " "
    case 2: return "\u{1}ACTION waves \(mark)\u{1}"
    case 3: return "\u{2}bold\u{2} \u{3}4,12colour\u{3} \u{1D}it\u{F} \(mark)"
    case 4: return "bell\u{7} \(mark)"
    case 5: return "esc \u{1B}[2J \(mark)"
    case 6: return "c1 \u{85}\u{9B}31m \(mark)"
    case 7:
      return String(repeating: "long ", count: Int.random(in: 100...900, using: &random)) + mark
    case 8: return "émoji 🎉 e\u{301} \u{202E}txet \(mark)"
    case 9: return ":leading colon \(mark)"
    case 10: return "tab\there \(mark)"
    default: return "hello \(mark)"
    }
  }

  // MARK: - Lines of many targets, tags, injections

  /// `JOIN #a,#b,...`, `PART a,b`, `PRIVMSG #a,#b,bob :x` with up to
  /// `many` targets.
  mutating func targets(_ command: String, many: Int = 300) -> String {
    let count = Int.random(in: 2...many, using: &random)
    let names = (0..<count).map { index -> String in
      switch command {
      case "PRIVMSG", "NOTICE": return index % 7 == 6 ? nick() : "#t\(index % 97)"
      default: return random.chance(95) ? "#t\(index)" : room()
      }
    }
    let list = names.joined(separator: ",")
    switch command {
    case "PRIVMSG", "NOTICE": return "\(command) \(list) :\(text())"
    default: return "\(command) \(list)"
    }
  }

  mutating func multiTarget() -> String {
    targets(random.pick(["JOIN", "PART", "PRIVMSG", "NOTICE", "JOIN"]))
  }

  /// A line with message tags: client tags, a claimed time, and tags over
  /// the 4096 bytes a client may send.
  mutating func tagged() -> [UInt8] {
    let tags: String
    switch Int.random(in: 0..<5, using: &random) {
    case 0: tags = "@+draft/react=\(random.pick(["x", "👍", "a\\sb", "\\", ";"]))"
    case 1: tags = "@time=2000-01-01T00:00:00.000Z;msgid=forged"
    case 2:
      tags = "@+x=" + String(repeating: "t", count: Int.random(in: 4000...4700, using: &random))
    case 3: tags = "@" + (0..<200).map { "+k\($0)=v" }.joined(separator: ";")
    default:
      tags = "@+typing=active;+draft/reply=\(random.pick(knownIDs.isEmpty ? ["1"] : knownIDs))"
    }
    return Array("\(tags) \(command())".utf8)
  }

  /// Bytes a parameter must not carry back: a bare CR and a forged line
  /// after it, other control characters, in what the gateway echoes (PONG,
  /// and the nick, command, channel or mask of 433, 421, 403 and 315).
  mutating func injected() -> [UInt8] {
    let other = random.pick(users.count > 1 ? users.filter { $0 != users[speaker] } : ["nobody"])
    let forged = "\r:\(other)!\(other)@h PRIVMSG #hot :forged \(token())"
    let control = random.pick(["\r", "\u{0}", "\u{7}", "\u{1B}[2J", "\u{1}", "\u{7F}", "\u{1F}"])
    let bad = random.chance(50) ? forged : "x\(control)y"
    if random.chance(15) {
      // A long word where the gateway echoes one: a reply must still fit
      // in 512 bytes.
      let word = String(repeating: "w", count: Int.random(in: 500...4000, using: &random))
      return Array((random.pick(["NICK ", "WHO ", "JOIN #", "PING :", "MODE ", ""]) + word).utf8)
    }
    let line: String
    switch Int.random(in: 0..<8, using: &random) {
    case 0: line = "PING :x\(bad)"
    case 1: line = "NICK n\(bad)"
    case 2: line = "CMD\(bad)"
    case 3: line = "JOIN #a\(bad)"
    case 4: line = "WHO w\(bad)"
    case 5: line = "PRIVMSG #a,#b\(bad) :\(text())"
    default:
      line =
        "CAP REQ :"
        + (0..<Int.random(in: 20...400, using: &random)).map { _ in
          random.pick(Self.capabilities + ["nosuch\(bad)"])
        }.joined(separator: " ")
    }
    // A bare LF would end the line here: the framer's job, tested elsewhere.
    return Array(line.utf8).map { $0 == 0x0A ? 0x0B : $0 }
  }

  /// Longer than IRC's 512 bytes (which the gateway accepts up to 4608),
  /// or longer than even that.
  mutating func overLong() -> [UInt8] {
    let length = random.pick([
      513, 600, 4000, 512 + 4096, 512 + 4097, Int.random(in: 4700...40_000, using: &random),
    ])
    var bytes = Array("PRIVMSG #a :\(token()) ".utf8)
    bytes += Array(repeating: UInt8(ascii: "x"), count: max(0, length - bytes.count))
    return bytes
  }

  /// A valid line changed a little, as the line mode's mutations do.
  mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
    lines.random = random.split()
    return lines.mutate(bytes)
  }
}

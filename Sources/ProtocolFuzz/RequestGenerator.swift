import LineProtocol

/// Makes request lines for the fuzzer from a seeded generator: valid verbs
/// with random and edge-case arguments, mutations of valid lines (control
/// characters, invalid UTF-8, bytes flipped), over-long lines, and floods of
/// the requests that cost the broker most (`HISTORY`, `ROOMS`, `JOIN` of
/// many rooms).
///
/// Well-formed requests are written by ``LineCodec``'s request encoder, as
/// any client writes them; the lines that are meant to be wrong, or to mix
/// right and wrong words, letter cases and optional colons as people type
/// them (``validRequest()`` and the mutations), stay hand-made: that is
/// their point.
public struct RequestGenerator {
  public var random: SplitMix64
  /// User names for `@user` targets: real ones, and some that do not exist.
  public let users: [String]
  public let maximumLineBytes: Int
  /// Message ids the broker handed out, for `CANCEL`, `BEFORE` and `AFTER`.
  private var knownIDs: [String] = []
  private var knownDues: [String] = []
  private var floodRoom = 0

  public init(random: SplitMix64, users: [String], maximumLineBytes: Int = 4096) {
    self.random = random
    self.users = users + ["nosuchuser", "uid4294967294", "root"]
    self.maximumLineBytes = maximumLineBytes
  }

  /// Learns ids from a line of the broker's, so later requests name real
  /// messages, and the due instants of `SCHED` lines, so that `SKIP` and
  /// `REPLACE` name real occurrences.
  public mutating func learn(_ line: [UInt8]) {
    guard line.starts(with: Array("OK SAY".utf8)) || line.starts(with: Array("SCHED ".utf8))
    else { return }
    let words = line.split(separator: UInt8(ascii: " "))
    let index = line.starts(with: Array("SCHED ".utf8)) ? 1 : 2
    guard words.count > index else { return }
    if index == 1, words.count > 3 {
      if knownDues.count >= 64 { knownDues.removeFirst() }
      knownDues.append(String(decoding: words[3], as: UTF8.self))
    }
    if knownIDs.count >= 256 { knownIDs.remove(at: Int.random(in: 0..<256, using: &random)) }
    knownIDs.append(String(decoding: words[index], as: UTF8.self))
  }

  // MARK: - Lines

  /// One request line, without its LF.
  public mutating func line() -> [UInt8] {
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<55: return Array(validRequest().utf8)
    case 55..<85: return mutate(Array(validRequest().utf8))
    case 85..<90: return overLong()
    case 90..<95: return atTheLimit()
    default: return noise()
    }
  }

  /// One request line of at most `maximumBytes` (without its LF), for a
  /// client that sends a few bytes at a time: as ``line()``, drawn again
  /// when too long, a `PING` when that keeps failing.
  public mutating func shortLine(maximumBytes: Int = 256) -> [UInt8] {
    for _ in 0..<16 {
      let drawn = line()
      if drawn.count <= maximumBytes { return drawn }
    }
    return Request.ping(token: "short").lineBytes
  }

  /// A batch of the requests that make the broker work hardest per byte.
  public mutating func flood() -> [[UInt8]] {
    let count = Int.random(in: 50...2000, using: &random)
    switch Int.random(in: 0..<6, using: &random) {
    case 5:
      // Full pages of two words every flood line holds (chatbroker(7),
      // SEARCH): the most a SEARCH sends back.
      return Array(
        repeating: Request.search(nil, count: 100, before: nil, words: "flood line").lineBytes,
        count: count)
    case 0:
      let target = random.chance(70) ? "#hot" : room()
      // room() draws bad names too: those stay a wrong line.
      let line =
        Target(target).map { Request.history($0, count: 1000, anchor: nil).lineBytes }
        ?? Array("HISTORY \(target) 1000".utf8)
      return Array(repeating: line, count: count)
    case 1:
      return Array(repeating: Request.rooms(after: nil).lineBytes, count: count)
    case 2:
      return (0..<count).map { _ in
        floodRoom += 1
        return Request.join(RoomName("#flood-\(floodRoom % 50_000)")!).lineBytes
      }
    case 3:
      let hot = Target.room(RoomName("#hot")!)
      return (0..<count).map { index in Request.say(hot, text: "flood line \(index)").lineBytes }
    default:
      return (0..<count).map { _ in Array(validRequest().utf8) }
    }
  }

  /// A request built from the verbs of chatbroker(7) with arguments drawn
  /// from valid values and their edges.
  public mutating func validRequest() -> String {
    let verb = casing(
      random.pick([
        "JOIN", "PART", "SAY", "SAY", "SAYAT", "SAYAT", "HISTORY", "SCHEDULED", "CANCEL", "ROOMS",
        "WHO", "PING", "HELP", "QUIT", "CONVERSATIONS", "MARKREAD", "ACTION", "REDACT", "TOPIC",
        "AWAY", "JOIN", "INVITE", "ACCESS", "SKIP", "REPLACE", "SEARCH", "MODE", "MODE", "KICK",
        "SAYEVERY", "SAYEVERY", "RESCHEDULE", "NOTICE", "REPLY", "REPLY", "AMEND", "REACT",
        "REACT", "UNREACT", "BLOCK", "BLOCK", "THREAD",
      ]))
    switch verb.asciiUppercased {
    case "JOIN":
      // Since 1.4 a private room's access (chatbroker(7), "Private rooms").
      // Since 1.5 a room's key (chatbroker(7), "Moderation").
      if random.chance(10) { return "\(verb) \(room()) key=\(modeArgument())" }
      return random.chance(70) ? "\(verb) \(room())" : "\(verb) \(room()) \(access())"
    case "MODE":
      // MODE <room> [<changes> [<arguments>]] (chatbroker(7), MODE).
      if random.chance(25) { return "\(verb) \(room())" }
      var request = "\(verb) \(room()) \(modeChanges())"
      for _ in 0..<Int.random(in: 0...3, using: &random) { request += " \(modeArgument())" }
      return request
    case "KICK":
      let user = String(target().drop { $0 == "@" || $0 == "#" })
      return random.chance(50) ? "\(verb) \(room()) \(user)" : "\(verb) \(room()) \(user) \(text())"
    case "WHO": return "\(verb) \(room())"
    // A reason since 1.6, which IRC clients see (chatbroker(7), PART).
    case "PART": return random.chance(50) ? "\(verb) \(room())" : "\(verb) \(room()) \(text())"
    case "INVITE": return "\(verb) \(room()) \(String(target().drop { $0 == "@" || $0 == "#" }))"
    case "ACCESS": return random.chance(40) ? "\(verb) \(room())" : "\(verb) \(room()) \(access())"
    // NOTICE since 1.6 (chatbroker(7), NOTICE).
    case "SAY", "ACTION", "NOTICE": return "\(verb) \(target()) \(text())"
    case "REDACT": return "\(verb) \(target()) \(id())"
    // REPLY since 1.6: to ids seen, of this conversation or another.
    case "REPLY": return "\(verb) \(target()) \(id()) \(text())"
    // AMEND since 1.6: ids seen, mostly of others' lines, which it refuses.
    case "AMEND": return "\(verb) \(target()) \(id()) \(text())"
    // REACT, UNREACT since 1.6: ids seen, a few reactions so that they
    // meet, now and then one the grammar refuses.
    case "REACT", "UNREACT": return "\(verb) \(target()) \(id()) \(reaction())"
    // BLOCK since 1.6: texts joined by \n, up to its bound of lines and a
    // few past it, now and then with \\ and lone backslashes.
    // THREAD since 1.6: ids seen, with a count now and then.
    case "THREAD":
      return random.chance(50)
        ? "\(verb) \(target()) \(id())" : "\(verb) \(target()) \(id()) \(number())"
    case "BLOCK":
      let count =
        random.chance(10)
        ? MessageBlock.maximumLines + Int.random(in: 0...2, using: &random)
        : Int.random(in: 1...6, using: &random)
      let lines = (0..<count).map { _ in
        random.chance(15) ? random.pick(["", "  ", #"C:\ci"#, #"\"#, #"\\n"#]) : word()
      }
      return "\(verb) \(target()) :\(lines.joined(separator: #"\n"#))"
    case "AWAY": return random.chance(50) ? verb : "\(verb) \(text())"
    case "TOPIC": return random.chance(50) ? "\(verb) \(room())" : "\(verb) \(room()) \(text())"
    case "SAYAT": return "\(verb) \(target()) \(when()) \(text())"
    case "HISTORY":
      var request = "\(verb) \(target())"
      if random.chance(60) { request += " \(number())" }
      if random.chance(30) { request += " \(random.pick(["BEFORE", "AFTER", "before"])) \(id())" }
      return request
    case "SCHEDULED":
      switch Int.random(in: 0..<4, using: &random) {
      case 0: return "\(verb) \(target())"
      // SCHEDULED <id> NEXT <n>, its count also past the most it takes.
      case 1: return "\(verb) \(id()) \(random.pick(["NEXT", "next", "NEXTT"])) \(number())"
      default: return verb
      }
    case "SEARCH":
      // SEARCH <target>|* [<n>] [BEFORE <id>] <words> (chatbroker(7), SEARCH).
      var request = "\(verb) \(random.chance(50) ? "*" : target())"
      if random.chance(40) { request += " \(number())" }
      if random.chance(30) { request += " \(random.pick(["BEFORE", "before"])) \(id())" }
      return request + " " + searchWords()
    case "CANCEL": return "\(verb) \(id())"
    // Series, in every form of rule (chatbroker(7), "Series").
    case "SAYEVERY":
      return "\(verb) \(target()) \(RuleGenerator.rule(using: &random)) \(text())"
    case "RESCHEDULE":
      let when = random.chance(50) ? RuleGenerator.rule(using: &random) : when()
      return "\(verb) \(id()) \(random.chance(20) ? random.pick(["now", "skip", "resume"]) : when)"
    // One occurrence of a series (chatbroker(7), SKIP and REPLACE).
    case "SKIP": return "\(verb) \(id()) \(occurrence())"
    case "REPLACE": return "\(verb) \(id()) \(occurrence()) \(when()) \(text())"
    // By id; since 1.6 also by time, or without either to ask where the
    // marker stands (chatbroker(7), MARKREAD).
    case "MARKREAD":
      switch Int.random(in: 0..<10, using: &random) {
      case 0: return "\(verb) \(target())"
      case 1:
        let time = random.pick([
          "2000-01-01T00:00:00.000Z", "2026-12-03T21:14:06.477Z", "2100-01-01T00:00:00.000Z",
        ])
        return "\(verb) \(target()) \(time)"
      default: return "\(verb) \(target()) \(id())"
      }
    case "PING": return random.chance(50) ? verb : "\(verb) \(word())"
    // Rarely a QUIT, with or without a reason (chatbroker(7), QUIT): it
    // ends the connection; mostly one refused for its reason's control
    // character, which ends nothing.
    case "QUIT":
      if random.chance(5) { return verb }
      return random.chance(5) ? "\(verb) :bye \(word())" : "\(verb) :ring\u{7}"
    default: return verb
    }
  }

  // MARK: - Arguments

  private mutating func casing(_ verb: String) -> String {
    switch Int.random(in: 0..<10, using: &random) {
    case 0: return verb.lowercased()
    case 1: return verb.prefix(1) + verb.dropFirst().lowercased()
    default: return verb
    }
  }

  mutating func room() -> String {
    switch Int.random(in: 0..<20, using: &random) {
    case 0..<10: return random.pick(["#a", "#b", "#hot", "#ops", "#x.y_z-1"])
    case 10..<13: return "#" + String(repeating: "r", count: Int.random(in: 1...34, using: &random))
    case 13: return "#Ops"
    case 14: return random.pick(["#", "##", "#é", "#a b", "#a:b", "a", "#\u{0}", "#a\u{7F}"])
    default: return "#r\(Int.random(in: 0..<500, using: &random))"
    }
  }

  /// A MODE change word, valid or nearly: every letter, signs, unknown
  /// letters, too many.
  mutating func modeChanges() -> String {
    random.pick([
      "+o", "-o", "+v", "-v", "+b", "-b", "b", "+k", "-k", "+l", "-l", "+t", "-t", "+n", "+m",
      "+s", "+i", "-i", "+ntm", "-ntms", "+o-v", "+ov", "+kl", "+x", "+", "-", "+tnmsikl",
      "+bbbbbbb", "++--o", "o",
    ])
  }

  /// An argument of a MODE change, valid or nearly: users, masks, keys
  /// and limits, and their edges.
  mutating func modeArgument() -> String {
    switch Int.random(in: 0..<6, using: &random) {
    case 0: return String(target().drop { $0 == "@" || $0 == "#" })
    case 1: return random.pick(["*!*@*", "bob!*@*", "*", "a?c", "bob@host", "x!y", "!@", "a,b"])
    case 2:
      return random.pick(["beer", "invite", "group=ops", "k:ey", String(repeating: "k", count: 33)])
    case 3: return random.pick(["1", "0", "-1", "100000", "100001", "abc", "99999999999999999999"])
    default: return word()
    }
  }

  /// A room's access, valid or nearly: `group=` with the fuzzing
  /// users' groups and others, `invite`, `public`, and broken forms.
  mutating func access() -> String {
    random.pick([
      "invite", "INVITE", "public", "group=root", "group=cbtest", "group=nosuchgroup", "group=",
      "group", "group=a b", "group=-x", "private", "group=\(String(repeating: "g", count: 33))",
    ])
  }

  mutating func target() -> String {
    if random.chance(70) { return room() }
    switch Int.random(in: 0..<6, using: &random) {
    case 0: return "@"
    case 1: return "@" + String(repeating: "u", count: Int.random(in: 30...300, using: &random))
    case 2: return "@:x"
    default: return "@" + random.pick(users)
    }
  }

  mutating func id() -> String {
    if !knownIDs.isEmpty && random.chance(60) { return random.pick(knownIDs) }
    return random.pick([
      "1", "0", "zzzzzzzz", String(repeating: "9", count: 32), String(repeating: "z", count: 33),
      "-1", "a-b", "ÄÖ", "\u{FF21}",
    ])
  }

  /// Words for `SEARCH`: common ones, accents and case, too many, too
  /// long, none at all, and a colon that makes a number a word.
  mutating func searchWords() -> String {
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return "a b c d e f g h i"
    case 1: return String(repeating: "é", count: Int.random(in: 60...70, using: &random))
    case 2: return random.pick(["!!", "-- ..", ":"])
    case 3: return ":2 BEFORE"
    default:
      return random.pick(["flood line", "FLOOD", "Line 1", "café", "CAFE", "hi", "x"])
    }
  }

  /// Counts for `HISTORY`: small, at the limits, huge and malformed.
  mutating func number() -> String {
    random.pick([
      "0", "1", "2", "50", "999", "1000", "1001", "007", "-1", "+5", "1e3", "9223372036854775807",
      "9223372036854775808", "99999999999999999999999999999999", "18446744073709551616", "0x10",
    ])
  }

  /// An occurrence for `SKIP` and `REPLACE`: one a series showed, or a `<when>`.
  mutating func occurrence() -> String {
    !knownDues.isEmpty && random.chance(60) ? random.pick(knownDues) : when()
  }

  /// `<when>` values: good ones, and the edges where arithmetic breaks.
  mutating func when() -> String {
    if random.chance(35) {
      return random.pick(["+1s", "+10m", "+1h30m", "+1d", "+2s", "18:00", "07:30:15", "23:59"])
    }
    return random.pick([
      "0000-01-01T00:00+00:01", "0000-01-01T00:00Z", "0001-01-01T00:00:00.000Z",
      "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999-23:59", "2026-02-29T12:00Z",
      "2028-02-29T12:00Z", "2026-12-31T24:00Z", "2026-12-31T23:60Z", "2026-12-31T23:59:60Z",
      "2026-12-31T12:00:00.9999999999Z", "2026-12-31T12:00+99:99", "2026-12-31T12:00+24:00",
      "2026-12-31t12:00z", "2026-12-31T12:00", "99999-01-01T00:00Z", "-2026-01-01T00:00Z",
      "@-99999999999999", "@99999999999999999999", "@9223372036854775807",
      "@-9223372036854775808", "@0", "@", "@1798131600", "@1.5", "+99999999999d",
      "+9223372036854775807s", "+106751991167300d", "+0s", "+", "+1d1d", "+1s1h", "+1h-1m",
      "24:00", "23:60", "25:00:00", "12:00:60", "00:00", "-1", "now", "\u{FF11}8:00",
    ])
  }

  /// A reaction (chatbroker(7), REACT): mostly one of a few, so that
  /// users meet on them; sometimes the longest, or one refused.
  mutating func reaction() -> String {
    switch Int.random(in: 0..<10, using: &random) {
    case 0: return String(repeating: "x", count: Reaction.maximumBytes)
    case 1: return random.pick([":)", "a,b", "a=b", "\u{200B}", "x\u{202E}y"])
    default: return random.pick(["👍", "+1", "lol", "🎉", "👩‍👩‍👧‍👦"])
    }
  }

  mutating func text() -> String {
    switch Int.random(in: 0..<20, using: &random) {
    case 0: return ""
    case 1: return ":"
    case 2: return "::-)"
    case 3: return " \t "
    case 4: return "bell\u{7}here"
    case 5: return "esc \u{1B}[2J clear"
    case 6: return "c1 \u{85} \u{9B}31m"
    case 7: return "del\u{7F}"
    case 8: return "tab\tinside"
    case 9: return "émoji 🎉 and combining e\u{301} and rtl \u{202E}txet"
    case 10: return String(repeating: "long ", count: Int.random(in: 1...900, using: &random))
    case 11: return "nul \u{0} inside"
    case 12: return ":leading colon"
    case 13: return "cr\rinside"
    default: return "hello \(Int.random(in: 0..<1_000_000, using: &random))"
    }
  }

  mutating func word() -> String {
    random.pick([
      "x", ":x", "token\u{1}", String(repeating: "w", count: 200), "ok", "a:b", "é", "\u{9F}",
    ])
  }

  // MARK: - Mutations

  /// Changes a valid line a little: a byte flipped, inserted or dropped, a
  /// control character or an invalid UTF-8 sequence spliced in, CRs.
  mutating func mutate(_ line: [UInt8]) -> [UInt8] {
    var bytes = line
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      let position = Int.random(in: 0...bytes.count, using: &random)
      switch Int.random(in: 0..<9, using: &random) {
      case 0 where !bytes.isEmpty:
        let index = min(position, bytes.count - 1)
        bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
      case 1:
        bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
      case 2 where !bytes.isEmpty:
        bytes.remove(at: min(position, bytes.count - 1))
      case 3:
        bytes.insert(contentsOf: random.pick(invalidUTF8), at: position)
      case 4:
        bytes.insert(random.pick([0x00, 0x01, 0x07, 0x08, 0x09, 0x0D, 0x1B, 0x7F]), at: position)
      case 5:
        bytes.insert(contentsOf: [0xC2, random.pick([0x80, 0x85, 0x9B, 0x9F])], at: position)
      case 6:
        bytes.append(0x0D)
      case 7:
        bytes.insert(contentsOf: Array(repeating: UInt8(ascii: " "), count: 3), at: position)
      default:
        // A truncated multi-byte sequence at the very end.
        bytes.append(contentsOf: random.pick([[0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3]]))
      }
    }
    // An LF would split the line in two; the framer's job, tested elsewhere.
    return bytes.map { $0 == 0x0A ? 0x0B : $0 }
  }

  private let invalidUTF8: [[UInt8]] = [
    [0xFF], [0xFE], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0x80], [0xBF],
    [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3, 0x28],
  ]

  /// Longer than the limit: just over it, with and without a CR, or far over
  /// (made by hand: no encoder writes a line that is wrong on purpose).
  mutating func overLong() -> [UInt8] {
    let length = random.pick([
      maximumLineBytes + 1, maximumLineBytes + 2, maximumLineBytes * 2,
      Int.random(in: maximumLineBytes...maximumLineBytes * 25, using: &random),
    ])
    var bytes = Array("SAY #a ".utf8)
    bytes += Array(repeating: UInt8(ascii: "x"), count: max(0, length - bytes.count))
    if random.chance(30) { bytes.append(0x0D) }
    return bytes
  }

  /// Exactly at the limit (allowed), with a CR after it (also allowed).
  mutating func atTheLimit() -> [UInt8] {
    let room = Target.room(RoomName("#a")!)
    let fits = LineCodec.textCapacity(
      of: .say(room, text: ""), maximumLineBytes: maximumLineBytes)
    var bytes = Request.say(room, text: String(repeating: "y", count: fits)).lineBytes
    if random.chance(50) { bytes.append(0x0D) }
    return bytes
  }

  /// Random bytes, no LF.
  mutating func noise() -> [UInt8] {
    (0..<Int.random(in: 0...64, using: &random)).map { _ in
      let byte = UInt8.random(in: 0...255, using: &random)
      return byte == 0x0A ? 0x20 : byte
    }
  }
}

extension Request {
  /// The request's line as the fuzzer's connections send and check lines:
  /// written by ``LineCodec``, without its LF.
  var lineBytes: [UInt8] { Array(LineCodec.encode(self).dropLast()) }
}

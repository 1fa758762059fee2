/// One change of a room's modes (chatbroker(7), "Moderation", since 1.5),
/// as `MODE <room> <changes> [<arguments>]` says it on the line protocol
/// and on IRC alike, and as a `mode` record keeps it in the journal: one
/// parser for the three, so they read a change one way.
public struct ModeChange: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The modes a room has, by their IRC letters.
  public enum Letter: Character, CaseIterable, Sendable {
    /// A member is an operator (takes a login name).
    case op = "o"
    /// A member is voiced: may write in a `+m` room (takes a login name).
    case voice = "v"
    /// Users matching a mask may not join or write (takes a mask).
    case ban = "b"
    /// JOIN needs the key (takes the key to set).
    case key = "k"
    /// At most this many members (takes a number to set).
    case limit = "l"
    /// Only operators set the topic.
    case topicLock = "t"
    /// Only members write.
    case noExternal = "n"
    /// Only operators and voiced members write.
    case moderated = "m"
    /// Not listed to who is not in it.
    case secret = "s"
    /// Private to the invited (`ACCESS <room> invite`).
    case inviteOnly = "i"

    /// Whether `+` of this letter takes an argument.
    public var takesArgumentToSet: Bool {
      self == .op || self == .voice || self == .ban || self == .key || self == .limit
    }
    /// Whether `-` of this letter takes an argument (`-k` may name the key or not).
    public var takesArgumentToUnset: Bool { self == .op || self == .voice || self == .ban }
    /// The letters that are on or off, with no value.
    public static let flags: [Letter] = [.inviteOnly, .moderated, .noExternal, .secret, .topicLock]
  }

  /// What is wrong with a `MODE` change; each wire says it its own way
  /// (`ERR MODE SYNTAX` on the line protocol, 472, 461, 696 or 525 on IRC).
  public enum Problem: Error, Equatable, Sendable {
    case unknownLetter(Character)
    case missingArgument(Letter)
    case invalidArgument(Letter, String, reason: String)
    case tooMany
    /// An argument no change took (the line protocol's MODE; IRC ignores it).
    case unusedArgument(String)

    /// A sentence for people.
    public var text: String {
      switch self {
      case .unknownLetter(let letter):
        "\(ModeChange.shown(letter)) is not a mode; the modes are o v b k l t n m s i (chatbroker(7), \"Moderation\")"
      case .missingArgument(let letter):
        "+\(letter.rawValue) needs \(ModeChange.argumentName(letter))"
      case .invalidArgument(let letter, let argument, let reason):
        "\(quoted(argument)) is not \(ModeChange.argumentName(letter)) for \(letter.rawValue): \(reason)"
      case .tooMany:
        "one MODE makes at most \(ModeChange.maximumPerRequest) changes"
      case .unusedArgument(let argument):
        "no change takes \(quoted(argument)): write the changes as one word, +o-v alice bob"
      }
    }
  }

  public var adding: Bool
  public var letter: Letter
  /// The login name, mask, key or number; nil for a flag (and `-l`, `-k`).
  public var argument: String?

  public init(adding: Bool, letter: Letter, argument: String? = nil) {
    self.adding = adding
    self.letter = letter
    self.argument = argument
  }

  /// The most changes one `MODE` makes (ISUPPORT `MODES`).
  public static let maximumPerRequest = 6
  /// The longest key, in bytes (ISUPPORT `KEYLEN`).
  public static let maximumKeyBytes = 32
  /// The longest ban mask, in bytes.
  public static let maximumMaskBytes = 100
  /// The highest member limit.
  public static let maximumLimit = 100_000

  /// `+o alice`, `-l`, `+t`: how a `mode` record and a `MODE` line show it.
  public var description: String {
    (adding ? "+" : "-") + String(letter.rawValue) + (argument.map { " \($0)" } ?? "")
  }

  /// A letter as an error shows it: itself when printable ASCII, `that
  /// letter` otherwise (no control character reaches a client's screen).
  public static func shown(_ letter: Character) -> String {
    letter.isASCII && (letter.asciiValue ?? 0) > 0x20 && (letter.asciiValue ?? 0) < 0x7F
      ? String(letter) : "that letter"
  }

  static func argumentName(_ letter: Letter) -> String {
    switch letter {
    case .op, .voice: "a login name"
    case .ban: "a mask such as nick!user@host, * matching anything"
    case .key: "a key of 1 to \(maximumKeyBytes) bytes without spaces, commas or control characters"
    case .limit: "a whole number from 1 to \(maximumLimit)"
    default: "nothing"
    }
  }

  /// What `MODE <room> <changes> <arguments>` asks: the changes in order,
  /// or `nil` for the ban list (`MODE <room> b`, `+b` or `-b` with no
  /// mask). Nothing is changed when one change is wrong.
  /// `login`: how an IRC nick names a login (identity on the line protocol).
  /// `strict`: an argument no change takes is an error (the line
  /// protocol), not ignored (IRC).
  public static func parse(
    _ changes: String, arguments: [String], strict: Bool = false,
    login: (String) -> String = { $0 }
  ) -> Result<[ModeChange]?, Problem> {
    var adding = true
    var letters: [(adding: Bool, letter: Letter)] = []
    for character in changes {
      if character == "+" || character == "-" {
        adding = character == "+"
        continue
      }
      guard let letter = Letter(rawValue: character) else {
        return .failure(.unknownLetter(character))
      }
      letters.append((adding, letter))
    }
    if letters.count == 1, letters[0].letter == .ban, arguments.isEmpty {
      // The list, not a change.
      return .success(nil)
    }
    let required = letters.filter {
      $0.adding ? $0.letter.takesArgumentToSet : $0.letter.takesArgumentToUnset
    }.count
    // `-k <key>`: IRC clients name the key; it is not needed, and taken
    // only when the line has an argument to spare.
    var spare = arguments.count - required
    var parsed: [ModeChange] = []
    var arguments = arguments[...]
    for (adding, letter) in letters {
      let needs = adding ? letter.takesArgumentToSet : letter.takesArgumentToUnset
      var argument: String?
      if needs {
        guard let word = arguments.popFirst() else { return .failure(.missingArgument(letter)) }
        argument = letter == .op || letter == .voice ? login(word) : word
      } else if letter == .key, spare > 0 {
        arguments.removeFirst()
        spare -= 1
      }
      switch checked(ModeChange(adding: adding, letter: letter, argument: argument)) {
      case .success(let change): parsed.append(change)
      case .failure(let problem): return .failure(problem)
      }
    }
    guard letters.count <= maximumPerRequest else { return .failure(.tooMany) }
    if strict, let unused = arguments.first { return .failure(.unusedArgument(unused)) }
    return .success(parsed)
  }

  /// The change with its argument checked and in the form kept (a mask
  /// completed and in small letters), or what is wrong with it. A `mode`
  /// record is read through here too.
  public static func checked(_ change: ModeChange) -> Result<ModeChange, Problem> {
    var change = change
    let needs =
      change.adding ? change.letter.takesArgumentToSet : change.letter.takesArgumentToUnset
    guard let argument = change.argument else {
      return needs ? .failure(.missingArgument(change.letter)) : .success(change)
    }
    guard needs else {
      change.argument = nil
      return .success(change)
    }
    func invalid(_ reason: String) -> Result<ModeChange, Problem> {
      .failure(.invalidArgument(change.letter, argument, reason: reason))
    }
    switch change.letter {
    case .op, .voice:
      guard UserName.isValid(argument) else { return invalid("not a login name") }
    case .ban:
      guard let mask = normalizedMask(argument) else {
        return invalid(
          "a mask has no spaces or control characters and at most \(maximumMaskBytes) bytes")
      }
      change.argument = mask
    case .key:
      if argument.isEmpty || argument.utf8.count > maximumKeyBytes {
        return invalid("a key has 1 to \(maximumKeyBytes) bytes")
      }
      if argument.contains(where: { $0 == " " || $0 == "," || $0 == ":" || $0 == "\t" })
        || containsControlCharacter(argument)
      {
        return invalid("a key has no spaces, commas, colons or control characters")
      }
      if RoomRestriction(argument) != nil {
        return invalid("invite and group=<group> make a room private when joined with them")
      }
    case .limit:
      guard argument.utf8.count <= 6, argument.allSatisfy({ $0.isASCII && $0.isNumber }),
        let number = Int(argument), number >= 1, number <= maximumLimit
      else { return invalid("not a whole number from 1 to \(maximumLimit)") }
      change.argument = String(number)
    default:
      break
    }
    return .success(change)
  }

  /// `bob` is `bob!*@*`, `bob@host` is `*!bob@host`, `bob!x` is
  /// `bob!x@*`: a mask in its three parts, in small letters (login names
  /// are), or nil when it cannot be one.
  public static func normalizedMask(_ mask: String) -> String? {
    // A TAB is text's only control character (``containsControlCharacter``):
    // a mask is a word of the `OK MODE` and `BAN` lines, where none is.
    guard !mask.isEmpty, mask.utf8.count <= maximumMaskBytes, !mask.contains(" "),
      !mask.contains("\t"), !mask.contains(","), !mask.hasPrefix(":"),
      !containsControlCharacter(mask)
    else { return nil }
    var mask = mask.lowercased()
    if !mask.contains("!") && !mask.contains("@") {
      mask += "!*@*"
    } else if !mask.contains("!") {
      mask = "*!" + mask
    } else if !mask.contains("@") {
      mask += "@*"
    }
    return mask.utf8.count <= maximumMaskBytes ? mask : nil
  }

  /// Whether a mask (``normalizedMask(_:)``) matches `text` (`nick!user@host`,
  /// in small letters): `*` matches any run of characters, `?` one.
  public static func mask(_ mask: String, matches text: String) -> Bool {
    let pattern = Array(mask.utf8)
    let subject = Array(text.lowercased().utf8)
    var p = 0
    var s = 0
    var star: Int?
    var resume = 0
    while s < subject.count {
      if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == subject[s]) {
        p += 1
        s += 1
      } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
        star = p
        resume = s
        p += 1
      } else if let star {
        p = star + 1
        resume += 1
        s = resume
      } else {
        return false
      }
    }
    while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.count
  }

  /// Several changes as one `MODE` line shows them: `+o-v alice bob`.
  public static func summary(_ changes: [ModeChange]) -> [String] {
    var letters = ""
    var sign: Bool?
    var arguments: [String] = []
    for change in changes {
      if sign != change.adding {
        letters += change.adding ? "+" : "-"
        sign = change.adding
      }
      letters.append(change.letter.rawValue)
      if let argument = change.argument { arguments.append(argument) }
    }
    return [letters] + arguments
  }
}

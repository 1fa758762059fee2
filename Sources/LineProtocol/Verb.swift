/// The command table, one row per verb, in the spirit of ngircd's `parse.c`:
/// the syntax people are shown, what the verb does, and how many words it
/// takes, so that dispatch reads like the protocol document.
public enum Verb: String, CaseIterable, Sendable {
  case join = "JOIN"
  case part = "PART"
  case say = "SAY"
  case sayAt = "SAYAT"
  case sayEvery = "SAYEVERY"
  case history = "HISTORY"
  /// Since 1.2: your conversations, with what is new in each.
  case conversations = "CONVERSATIONS"
  /// Since 1.2: move your read position in a conversation.
  case markRead = "MARKREAD"
  case scheduled = "SCHEDULED"
  case cancel = "CANCEL"
  case reschedule = "RESCHEDULE"
  case edit = "EDIT"
  case rooms = "ROOMS"
  case who = "WHO"
  case ping = "PING"
  case help = "HELP"
  case quit = "QUIT"

  /// Looks a verb up in any letter case (`say`, `SAY`, `Say`).
  public init?<S: StringProtocol>(caseInsensitive word: S) {
    guard let verb = withUTF8Bytes(word, Verb.init(caseInsensitiveUTF8:)) else { return nil }
    self = verb
  }

  /// The same lookup on bytes, without allocating (it runs for every request).
  init?(caseInsensitiveUTF8 word: UnsafeBufferPointer<UInt8>) {
    func matches(_ name: StaticString) -> Bool { word.equals(caseInsensitive: name) }
    switch word.count {
    case 3 where matches("SAY"): self = .say
    case 3 where matches("WHO"): self = .who
    case 4 where matches("JOIN"): self = .join
    case 4 where matches("PART"): self = .part
    case 4 where matches("PING"): self = .ping
    case 4 where matches("HELP"): self = .help
    case 4 where matches("QUIT"): self = .quit
    case 4 where matches("EDIT"): self = .edit
    case 5 where matches("SAYAT"): self = .sayAt
    case 5 where matches("ROOMS"): self = .rooms
    case 6 where matches("CANCEL"): self = .cancel
    case 7 where matches("HISTORY"): self = .history
    case 9 where matches("SCHEDULED"): self = .scheduled
    case 8 where matches("SAYEVERY"): self = .sayEvery
    case 8 where matches("MARKREAD"): self = .markRead
    case 13 where matches("CONVERSATIONS"): self = .conversations
    case 10 where matches("RESCHEDULE"): self = .reschedule
    default: return nil
    }
  }

  /// Where the verb stands in `allCases`, and in ``VerbTable/rows``.
  var position: Int {
    switch self {
    case .join: 0
    case .part: 1
    case .say: 2
    case .sayAt: 3
    case .sayEvery: 4
    case .history: 5
    case .conversations: 6
    case .markRead: 7
    case .scheduled: 8
    case .cancel: 9
    case .reschedule: 10
    case .edit: 11
    case .rooms: 12
    case .who: 13
    case .ping: 14
    case .help: 15
    case .quit: 16
    }
  }

  /// This verb's row of ``VerbTable``.
  public var spec: VerbSpec { VerbTable.row(self) }

  /// The syntax shown by `HELP` and in `SYNTAX` errors.
  public var syntax: String { spec.syntax }

  /// One line of `HELP`: what the verb is for.
  public var summary: String { spec.summary }
}

/// One row of the command table: what the parser checks before it reads
/// the words, and what `HELP` shows.
public struct VerbSpec: Sendable {
  public let verb: Verb
  /// How many words follow the verb, free text not counted.
  public let words: ClosedRange<Int>
  /// Whether free text follows the words (after one space, `:` optional).
  public let takesText: Bool
  public let syntax: String
  public let summary: String
}

/// The command table, one row per verb, in the order `HELP` lists them.
public enum VerbTable {
  public static let rows: [VerbSpec] = [
    row(.join, 1...1, "JOIN <room>", "join a room (created if needed) and receive its messages"),
    row(.part, 1...1, "PART <room>", "leave a room"),
    row(.say, 1...1, text: true, "SAY <target> <text>", "send text to a #room or to @user"),
    row(
      .sayAt, 2...2, text: true, "SAYAT <target> <when> <text>",
      "send text later; <when> is 18:00, +10m, +1h30m, @1798131600 or 2026-12-24T18:00Z"),
    row(
      .sayEvery, 2...2, text: true, "SAYEVERY <target> <rule> <text>",
      "send text repeatedly; <rule> is daily@09:00,17:00, weekdays@09:00/Europe/Berlin, "
        + "mon,wed@18:00, monthly:31@09:00, monthly:last-fri@17:00, yearly:03-14@09:00, "
        + "every:2w:tue@09:00, every:15m or rrule:FREQ=WEEKLY;BYDAY=TU;BYHOUR=9, "
        + "optionally ,from:2026-12-07 and ,until:2027-03-01 or ,count:10"
    ),
    row(
      .history, 1...4, "HISTORY <target> [<n>] [BEFORE <id> | AFTER <id>]",
      "show delivered messages, oldest first (default 50, at most 1000)"),
    row(
      .conversations, 0...0, "CONVERSATIONS",
      "list your rooms and direct conversations: newest message, your read position, "
        + "unread and mentions"),
    row(
      .markRead, 2...2, "MARKREAD <target> <id>",
      "set your read position in a #room or @user to message <id> (it only moves forward)"),
    row(
      .scheduled, 0...3, "SCHEDULED [<target>] | SCHEDULED <id> NEXT <n>",
      "list your pending scheduled messages and series, or the next <n> due times of one"),
    row(
      .cancel, 1...1, "CANCEL <id>",
      "cancel one of your pending scheduled messages, or end a series"),
    row(
      .reschedule, 2...5, "RESCHEDULE <id> <when>|<rule>",
      "move a pending message to a new <when> (now: send it now); give a series a new <rule>, "
        + "a <when> for its next, or skip, pause or resume it"
    ),
    row(
      .edit, 1...1, text: true, "EDIT <id> <text>", "change the text of a pending message or series"
    ),
    row(
      .rooms, 0...2, "ROOMS [AFTER <room>]",
      "list rooms and how many people are in each, 1000 at a time"),
    row(.who, 1...1, "WHO <room>", "list the people in a room"),
    row(.ping, 0...1, "PING [<token>]", "check that the broker answers"),
    row(.help, 0...0, "HELP", "show this list"),
    row(.quit, 0...0, "QUIT", "close the connection"),
  ]

  /// The row of `verb`: the table lists the verbs in `allCases` order (a
  /// test checks it), so the row is found by the verb's position, without
  /// building `allCases` for every request.
  public static func row(_ verb: Verb) -> VerbSpec { rows[verb.position] }

  private static func row(
    _ verb: Verb, _ words: ClosedRange<Int>, text: Bool = false, _ syntax: String,
    _ summary: String
  ) -> VerbSpec {
    VerbSpec(verb: verb, words: words, takesText: text, syntax: syntax, summary: summary)
  }
}

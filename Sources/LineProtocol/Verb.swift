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
    case 10 where matches("RESCHEDULE"): self = .reschedule
    default: return nil
    }
  }

  /// The syntax shown by `HELP` and in `SYNTAX` errors.
  public var syntax: String {
    switch self {
    case .join: "JOIN <room>"
    case .part: "PART <room>"
    case .say: "SAY <target> <text>"
    case .sayAt: "SAYAT <target> <when> <text>"
    case .sayEvery: "SAYEVERY <target> <rule> <text>"
    case .history: "HISTORY <target> [<n>] [BEFORE <id> | AFTER <id>]"
    case .scheduled: "SCHEDULED [<target>]"
    case .cancel: "CANCEL <id>"
    case .reschedule: "RESCHEDULE <id> <when>|<rule>"
    case .edit: "EDIT <id> <text>"
    case .rooms: "ROOMS [AFTER <room>]"
    case .who: "WHO <room>"
    case .ping: "PING [<token>]"
    case .help: "HELP"
    case .quit: "QUIT"
    }
  }

  /// One line of `HELP`: what the verb is for.
  public var summary: String {
    switch self {
    case .join: "join a room (created if needed) and receive its messages"
    case .part: "leave a room"
    case .say: "send text to a #room or to @user"
    case .sayAt:
      "send text later; <when> is 18:00, +10m, +1h30m, @1798131600 or 2026-12-24T18:00Z"
    case .history: "show delivered messages, oldest first (default 50, at most 1000)"
    case .sayEvery:
      "send text repeatedly; <rule> is daily@09:00, weekdays@09:00/Europe/Berlin, "
        + "mon,wed@18:00, monthly:31@09:00 or every:15m, optionally ,until:2027-03-01 or ,count:10"
    case .scheduled: "list your pending scheduled messages and series"
    case .cancel: "cancel one of your pending scheduled messages, or end a series"
    case .reschedule:
      "move a pending message to a new <when>; give a series a new <rule>, or a <when> for its next"
    case .edit: "change the text of a pending message or series"
    case .rooms: "list rooms and how many people are in each, 1000 at a time"
    case .who: "list the people in a room"
    case .ping: "check that the broker answers"
    case .help: "show this list"
    case .quit: "close the connection"
    }
  }
}

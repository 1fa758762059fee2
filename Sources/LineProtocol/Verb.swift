/// The command table, one row per verb, in the spirit of ngircd's `parse.c`:
/// the syntax people are shown, what the verb does, and how many words it
/// takes, so that dispatch reads like the protocol document.
public enum Verb: String, CaseIterable, Sendable {
  case join = "JOIN"
  case part = "PART"
  case say = "SAY"
  /// Since 1.6: one message of several lines.
  case block = "BLOCK"
  /// Since 1.4: an action (IRC's `/me`), a message of its own kind.
  case action = "ACTION"
  /// Since 1.6: a message no program answers automatically (IRC's NOTICE).
  case notice = "NOTICE"
  /// Since 1.6: a message that answers another of the conversation.
  case reply = "REPLY"
  /// Since 1.4: take back a message you sent.
  case redact = "REDACT"
  /// Since 1.6: give a message you sent a new text.
  case amend = "AMEND"
  /// Since 1.6: put a reaction on a message.
  case react = "REACT"
  /// Since 1.6: take your reaction off a message.
  case unreact = "UNREACT"
  case sayAt = "SAYAT"
  case sayEvery = "SAYEVERY"
  case history = "HISTORY"
  /// Since 1.6: a message and the replies to it.
  case thread = "THREAD"
  /// Since 1.4: find messages by their words.
  case search = "SEARCH"
  /// Since 1.2: your conversations, with what is new in each.
  case conversations = "CONVERSATIONS"
  /// Since 1.2: move your read position in a conversation.
  case markRead = "MARKREAD"
  case scheduled = "SCHEDULED"
  case cancel = "CANCEL"
  case reschedule = "RESCHEDULE"
  case edit = "EDIT"
  /// Since 1.4: leave out one occurrence of a series.
  case skip = "SKIP"
  /// Since 1.4: replace one occurrence of a series by a single message.
  case replace = "REPLACE"
  case rooms = "ROOMS"
  case who = "WHO"
  /// Since 1.4: show or set a room's topic.
  case topic = "TOPIC"
  /// Since 1.4: say you are away, or back.
  case away = "AWAY"
  /// Since 1.4: let a user into a private room.
  case invite = "INVITE"
  /// Since 1.4: show or change who may read a room.
  case access = "ACCESS"
  /// Since 1.5: show or change a room's modes and operators.
  case mode = "MODE"
  /// Since 1.5: an operator removes a member from a room.
  case kick = "KICK"
  /// Since 1.6: a link for the browser door, on the Unix socket only.
  case web = "WEB"
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
    case 3 where matches("WEB"): self = .web
    case 4 where matches("JOIN"): self = .join
    case 4 where matches("PART"): self = .part
    case 4 where matches("PING"): self = .ping
    case 4 where matches("HELP"): self = .help
    case 4 where matches("QUIT"): self = .quit
    case 4 where matches("EDIT"): self = .edit
    case 4 where matches("AWAY"): self = .away
    case 4 where matches("SKIP"): self = .skip
    case 4 where matches("MODE"): self = .mode
    case 4 where matches("KICK"): self = .kick
    case 5 where matches("SAYAT"): self = .sayAt
    case 5 where matches("BLOCK"): self = .block
    case 5 where matches("REPLY"): self = .reply
    case 5 where matches("AMEND"): self = .amend
    case 5 where matches("REACT"): self = .react
    case 7 where matches("UNREACT"): self = .unreact
    case 5 where matches("ROOMS"): self = .rooms
    case 5 where matches("TOPIC"): self = .topic
    case 6 where matches("CANCEL"): self = .cancel
    case 6 where matches("ACTION"): self = .action
    case 6 where matches("NOTICE"): self = .notice
    case 6 where matches("REDACT"): self = .redact
    case 6 where matches("INVITE"): self = .invite
    case 6 where matches("ACCESS"): self = .access
    case 6 where matches("SEARCH"): self = .search
    case 6 where matches("THREAD"): self = .thread
    case 7 where matches("HISTORY"): self = .history
    case 7 where matches("REPLACE"): self = .replace
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
    case .block: 3
    case .action: 4
    case .notice: 5
    case .reply: 6
    case .redact: 7
    case .amend: 8
    case .react: 9
    case .unreact: 10
    case .sayAt: 11
    case .sayEvery: 12
    case .history: 13
    case .thread: 14
    case .search: 15
    case .conversations: 16
    case .markRead: 17
    case .scheduled: 18
    case .cancel: 19
    case .reschedule: 20
    case .edit: 21
    case .skip: 22
    case .replace: 23
    case .rooms: 24
    case .who: 25
    case .topic: 26
    case .away: 27
    case .invite: 28
    case .access: 29
    case .mode: 30
    case .kick: 31
    case .web: 32
    case .ping: 33
    case .help: 34
    case .quit: 35
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
  /// Whether the text may also be left out (`TOPIC <room>` shows the
  /// topic, `TOPIC <room> <text>` sets it).
  public let textIsOptional: Bool
  public let syntax: String
  public let summary: String
  /// Whether its reply shows no state at all (`PING`, `HELP`, `QUIT`): it
  /// leaves at once, even while other lines wait for the journal's sync
  /// (chatbroker(7), "Order and durability"). Every other verb's replies
  /// wait for the records written before them.
  public let isStateless: Bool
}

/// The command table, one row per verb, in the order `HELP` lists them.
public enum VerbTable {
  public static let rows: [VerbSpec] = [
    row(
      .join, 1...2, "JOIN <room> [group=<group>|invite|key=<key>]",
      "join a room (created if needed, private to a Unix group or to the invited if asked; "
        + "with its key if it has one) and receive its messages"),
    row(
      .part, 1...1, text: true, optionalText: true, "PART <room> [<text>]",
      "leave a room (IRC clients in it see the text)"),
    row(.say, 1...1, text: true, "SAY <target> <text>", "send text to a #room or to @user"),
    row(
      .block, 1...1, text: true, "BLOCK <target> <text>",
      "send several lines as one message: \\n starts a new line, \\\\ is a backslash; "
        + "at most \(MessageBlock.maximumLines) lines"),
    row(
      .action, 1...1, text: true, "ACTION <target> <text>",
      "send an action, shown as \"* you <text>\" (IRC's /me)"),
    row(
      .notice, 1...1, text: true, "NOTICE <target> <text>",
      "send text no program answers automatically, for scripts' news (IRC's NOTICE)"),
    row(
      .reply, 2...2, text: true, "REPLY <target> <id> <text>",
      "answer message <id> of the conversation: clients show it under a quote of it"),
    row(
      .redact, 2...2, "REDACT <target> <id>",
      "take back a message you sent in the last 24 hours: its text is gone from every history"),
    row(
      .amend, 2...2, text: true, "AMEND <target> <id> <text>",
      "give a message you sent in the last 24 hours a new text, shown everywhere as edited"),
    row(
      .react, 3...3, "REACT <target> <id> <reaction>",
      "put a reaction (an emoji or a short word) on a message; others see it counted"),
    row(
      .unreact, 3...3, "UNREACT <target> <id> <reaction>", "take your reaction off a message"),
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
      .thread, 2...3, "THREAD <target> <id> [<n>]",
      "show a message and the first <n> replies to it (default 50), oldest first"),
    row(
      .search, 1...1, text: true, "SEARCH <target>|* [<n>] [BEFORE <id>] <text>",
      "find the messages you can read that hold every word of <text>, newest first "
        + "(default 20, at most 100; case and accents ignored)"),
    row(
      .conversations, 0...0, "CONVERSATIONS",
      "list your rooms and direct conversations: newest message, your read position, "
        + "unread and mentions"),
    row(
      .markRead, 1...2, "MARKREAD <target> [<id>|<time>]",
      "set your read position in a #room or @user to message <id>, or to the last message "
        + "by <time> (it only moves forward); without either, show where it is"),
    row(
      .scheduled, 0...3, "SCHEDULED [<target>] | SCHEDULED <id> NEXT <n>",
      "list your pending scheduled messages and series, or the next <n> due times of one"),
    row(
      .cancel, 1...1, "CANCEL <id>",
      "cancel one of your pending scheduled messages, or end a series"),
    row(
      .reschedule, 2...5, "RESCHEDULE <id> <when>|<rule>",
      "move a pending message to a new <when> (now: send it now); give a series a new <rule>, "
        + "a <when> for its next occurrence only, or skip, pause or resume it"),
    row(
      .edit, 1...1, text: true, "EDIT <id> <text>", "change the text of a pending message or series"
    ),
    row(
      .skip, 2...2, "SKIP <id> <occurrence>",
      "leave out one coming occurrence of a series, named by its due time "
        + "(as SCHEDULED <id> NEXT <n> shows it)"),
    row(
      .replace, 3...3, text: true, "REPLACE <id> <occurrence> <when> <text>",
      "replace one coming occurrence of a series by a single message at <when> with <text>"),
    row(
      .rooms, 0...2, "ROOMS [AFTER <room>]",
      "list rooms and how many people are in each, 1000 at a time"),
    row(.who, 1...1, "WHO <room>", "list the people in a room"),
    row(
      .topic, 1...1, text: true, optionalText: true, "TOPIC <room> [<text>]",
      "show a room's topic, or set it (TOPIC <room> : clears it)"),
    row(
      .away, 0...0, text: true, optionalText: true, "AWAY [<text>]",
      "say you are away, shown to who writes to you and in WHO; AWAY alone says you are back"),
    row(
      .invite, 2...2, "INVITE <room> <user>",
      "let a user into a private room you may change (its creator, or one of its group)"),
    row(
      .access, 1...2, "ACCESS <room> [public|invite|group=<group>]",
      "show who may read a room, or change it (a private room's creator or one of its group)"),
    row(
      .mode, 1...8, "MODE <room> [<changes> [<arguments>]]",
      "show a room's modes, or change them if you are one of its operators: "
        + "+o/-o <user> operator, +v/-v <user> voiced, +b/-b <mask> ban (+b alone lists them), "
        + "+k/-k <key>, +l/-l <n> member limit, +t topic, +n members write, "
        + "+m operators and voiced write, +s secret, +i invite only"),
    row(
      .kick, 2...2, text: true, optionalText: true, "KICK <room> <user> [<text>]",
      "remove a member from a room you are an operator of"),
    row(
      .web, 0...1, "WEB [REVOKE]",
      "print a link that opens this chat in your browser through the web door "
        + "(Unix socket only); WEB REVOKE ends all your links"),
    row(.ping, 0...1, stateless: true, "PING [<token>]", "check that the broker answers"),
    row(.help, 0...0, stateless: true, "HELP", "show this list"),
    row(
      .quit, 0...0, text: true, optionalText: true, stateless: true, "QUIT [<text>]",
      "close the connection (IRC clients in your rooms see the text)"),
  ]

  /// The row of `verb`: the table lists the verbs in `allCases` order (a
  /// test checks it), so the row is found by the verb's position, without
  /// building `allCases` for every request.
  public static func row(_ verb: Verb) -> VerbSpec { rows[verb.position] }

  private static func row(
    _ verb: Verb, _ words: ClosedRange<Int>, text: Bool = false, optionalText: Bool = false,
    stateless: Bool = false, _ syntax: String, _ summary: String
  ) -> VerbSpec {
    VerbSpec(
      verb: verb, words: words, takesText: text, textIsOptional: optionalText, syntax: syntax,
      summary: summary, isStateless: stateless)
  }
}

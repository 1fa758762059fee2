/// A request a client may send, already checked for syntax (chatbroker(7),
/// "Requests"). Whether it can be carried out is the broker's business.
public enum Request: Equatable, Sendable {
  case join(RoomName)
  /// Since 1.4: `JOIN <room> group=<group>|invite`, which creates a
  /// private room (chatbroker(7), "Private rooms").
  case joinPrivate(RoomName, RoomRestriction)
  /// Since 1.4: `INVITE <room> <user>`: `user` may read the private room.
  case invite(RoomName, user: String)
  /// Since 1.4: `ACCESS <room>`, answered with who may read the room.
  case access(RoomName)
  /// Since 1.4: `ACCESS <room> public|invite|group=<group>`; nil is public.
  case setAccess(RoomName, RoomRestriction?)
  /// Since 1.5: `JOIN <room> key=<key>`, the JOIN of a room with a key
  /// (`+k`; chatbroker(7), "Moderation").
  case joinKeyed(RoomName, key: String)
  /// Since 1.5: `MODE <room>`, answered with the room's modes.
  case mode(RoomName)
  /// Since 1.5: `MODE <room> <changes> [<arguments>]`, by an operator.
  case setMode(RoomName, [ModeChange])
  /// Since 1.5: `MODE <room> +b`, answered with the ban list.
  case bans(RoomName)
  /// Since 1.5: `KICK <room> <user> [<reason>]`, by an operator.
  case kick(RoomName, user: String, reason: String?)
  /// `PART <room> [:<reason>]`; since 1.6 with a reason, which the
  /// room's IRC clients see (IRC's `PART <room> :<reason>` is this).
  case part(RoomName, reason: String? = nil)
  /// `SAY <target> <text>`; since 1.6 a text of several lines, which
  /// the line protocol writes `BLOCK <target> <text>` (chatbroker(7)).
  case say(Target, text: String)
  /// Since 1.6: `BLOCK <target> <text>` as it was sent, whatever its
  /// number of lines: answered `OK BLOCK`, as a client that sent it
  /// expects, even for one line.
  case block(Target, text: String)
  /// Since 1.4: `ACTION <target> <text>`, a SAY shown as an action.
  case action(Target, text: String)
  /// Since 1.4: `REDACT <target> <id>`.
  case redact(Target, MessageID)
  /// Since 1.6: `AMEND <target> <id> <text>`: message `id`, which the user
  /// sent, gets `text` (chatbroker(7), `AMEND`).
  case amend(Target, MessageID, text: String)
  /// Since 1.6: `REACT <target> <id> <reaction>` and `UNREACT <target>
  /// <id> <reaction>` (`removed`): the user's reaction on message `id`
  /// (chatbroker(7), `REACT`).
  case react(Target, MessageID, reaction: String, removed: Bool = false)
  /// Since 1.6: `NOTICE <target> <text>`, a message no program answers
  /// automatically: kept and shown as a `SAY` is, and to IRC clients as
  /// a NOTICE (chatbroker(7), `NOTICE`).
  case notice(Target, text: String)
  /// Since 1.6: `REPLY <target> <id> <text>`, a message that answers
  /// message `to` of the same conversation (chatbroker(7), `REPLY`).
  case reply(Target, to: MessageID, text: String)
  /// A `SAY`, `ACTION`, `NOTICE` or `REPLY` with client-only tags for the other
  /// clients (chatbroker(7), "IRC": client-only tags), which the line protocol does
  /// not write: IRC's PRIVMSG with `+draft/reply=...`.
  indirect case tagged(Request, ClientTags)
  /// Client-only tags alone, for the conversation's other clients that can
  /// read them (IRC's `TAGMSG`): nothing is kept, the line protocol
  /// neither writes nor shows it; answered by `OK SAY`.
  case signal(Target, ClientTags)
  /// `when` is kept as typed: only the broker knows "now" and its time zone.
  case sayAt(Target, when: String, text: String)
  /// `rule` is kept as typed, like `when`: the broker's zone is its default.
  case sayEvery(Target, rule: String, text: String)
  case history(Target, count: Int, anchor: HistoryAnchor?)
  /// Since 1.6: `THREAD <target> <id> [<n>]`, message `id` and the first
  /// `count` replies to it (chatbroker(7), `THREAD`).
  case thread(Target, MessageID, count: Int)
  /// Since 1.4: `SEARCH <target>|* [<n>] [BEFORE <id>] <words>`; a nil
  /// target (`*`) searches every conversation the user may read.
  case search(Target?, count: Int, before: MessageID?, words: String)
  /// Since 1.2: `CONVERSATIONS`.
  case conversations
  /// Since 1.2: `MARKREAD <target> <id>`.
  case markRead(Target, MessageID)
  /// Since 1.6: `MARKREAD <target> <time>`: the marker moves to the
  /// newest message delivered at or before `time` (IRC's `MARKREAD
  /// <target> timestamp=<time>` of `draft/read-marker` is this); answered
  /// with where it then stands, ``BrokerEvent/readMarker(target:id:time:)``,
  /// before the `OK`.
  case markReadAt(Target, Timestamp)
  /// Since 1.6: `MARKREAD <target>`: where the marker stands (IRC's
  /// `MARKREAD <target>`), answered as ``markReadAt(_:_:)`` is.
  case readMarker(Target)
  case scheduled(Target?)
  /// `SCHEDULED <id> NEXT <n>`: the next `count` due instants of one
  /// pending message or series.
  case upcoming(MessageID, count: Int)
  case cancel(MessageID)
  /// `when` is a `<when>` or, for a series, a `<rule>`, kept as typed.
  case reschedule(MessageID, when: String)
  case edit(MessageID, text: String)
  /// Since 1.4: `SKIP <id> <occurrence>`; `occurrence` is a `<when>`, kept
  /// as typed.
  case skip(MessageID, occurrence: String)
  /// Since 1.4: `REPLACE <id> <occurrence> <when> <text>`.
  case replace(MessageID, occurrence: String, when: String, text: String)
  /// `ROOMS [AFTER <room>]`: one page of rooms, after `after` if given.
  case rooms(after: RoomName?)
  case who(RoomName)
  /// Since 1.4: `TOPIC <room>`, answered with the topic.
  case topic(RoomName)
  /// Since 1.4: `TOPIC <room> <text>`; an empty `text` (`TOPIC <room> :`)
  /// clears the topic.
  case setTopic(RoomName, text: String)
  /// Since 1.4: `AWAY [<text>]`; nil (or an empty text) says you are back.
  case away(String?)
  /// Since 1.6: `WEB` mints a token for the browser door and answers its
  /// link; `WEB REVOKE` (`revoke`) ends all of the user's tokens. Served
  /// on the Unix socket's line protocol only (chatbroker(7), `WEB`).
  case web(revoke: Bool)
  case ping(token: String?)
  case help
  /// `QUIT [:<reason>]`; since 1.6 with a reason, which IRC clients that
  /// share a room with the user see (IRC's `QUIT :<reason>` is this).
  case quit(reason: String? = nil)

  /// The most due instants `SCHEDULED <id> NEXT <n>` lists.
  public static let maximumUpcoming = 100
  /// How many lines one `SEARCH` returns without `<n>`, and at most
  /// (larger `<n>` are lowered, as for `HISTORY`).
  public static let defaultSearchResults = 20
  public static let maximumSearchResults = 100
  /// How many replies one `THREAD` shows without `<n>`.
  public static let defaultThreadReplies = 50

  public var verb: Verb {
    switch self {
    case .join, .joinPrivate, .joinKeyed: .join
    case .mode, .setMode, .bans: .mode
    case .kick: .kick
    case .invite: .invite
    case .access, .setAccess: .access
    case .part: .part
    // A text of several lines is a block (chatbroker(7), BLOCK).
    case .say(_, let text): MessageBlock.isBlock(text) ? .block : .say
    case .block: .block
    case .signal: .say
    case .action: .action
    case .notice: .notice
    case .reply: .reply
    case .tagged(let message, _): message.verb
    case .redact: .redact
    case .amend: .amend
    case .react(_, _, _, let removed): removed ? .unreact : .react
    case .sayAt: .sayAt
    case .sayEvery: .sayEvery
    case .history: .history
    case .thread: .thread
    case .search: .search
    case .conversations: .conversations
    case .markRead, .markReadAt, .readMarker: .markRead
    case .scheduled, .upcoming: .scheduled
    case .cancel: .cancel
    case .reschedule: .reschedule
    case .edit: .edit
    case .skip: .skip
    case .replace: .replace
    case .rooms: .rooms
    case .who: .who
    case .topic, .setTopic: .topic
    case .away: .away
    case .web: .web
    case .ping: .ping
    case .help: .help
    case .quit: .quit
    }
  }
}

/// Where `HISTORY` starts reading; every reference is exclusive. `HISTORY`
/// writes only `before` and `after`; the others are the IRC gateway's
/// `CHATHISTORY` (chatbroker(7), "IRC"), asked as values.
public enum HistoryAnchor: Equatable, Sendable {
  case before(MessageID)
  case after(MessageID)
  /// The latest messages before a message or a time.
  case beforePoint(HistoryPoint)
  /// The first messages after a message or a time.
  case afterPoint(HistoryPoint)
  /// The latest messages, only those after the point.
  case latestAfter(HistoryPoint)
  /// Half the count before the point, the rest from it on (a message
  /// point is included).
  case around(HistoryPoint)
  /// The messages strictly between two points, counted from the first:
  /// the oldest if it is the earlier, the latest if it is the later.
  case between(HistoryPoint, HistoryPoint)
}

/// A place in a conversation's history: one of its messages, or a time.
public enum HistoryPoint: Equatable, Sendable {
  case message(MessageID)
  case time(Timestamp)
}

/// Everything the broker tells a client, as a value: the engine produces
/// these and never sees bytes; each wire format has a codec that turns them
/// into its lines (``LineCodec`` for chatbroker(7)'s line protocol, the IRC
/// codec for IRC clients).
public enum BrokerEvent: Equatable, Sendable {
  /// The greeting: `HELLO <version> <user> :<text>`.
  case hello(version: String, user: String, text: String)
  /// The final reply of a request that went well: `OK <VERB> <fields>`.
  case ok(Verb, fields: [String])
  /// `OK SAY <id> <time>` and `OK SAYAT <id> <due>`: kept as values, as
  /// this reply goes out for every message.
  case accepted(Verb, id: MessageID, time: Timestamp)
  /// `ERR <verb> <code> :<text>`; `verb` is `-` when no request was read.
  case error(verb: String, code: ErrorCode, text: String)
  /// A delivered message, as `recipient` sees its conversation: `target`
  /// is the room, or for a direct message the other party. Since 1.4
  /// `action`: it was sent with `ACTION`; `series`: it is an occurrence of
  /// that series (`SAYEVERY`). Since 1.6 `replyTo`: the message of the
  /// conversation it answers (`REPLY`); `notice`: it was sent with
  /// `NOTICE`, which IRC clients show as a NOTICE and the line protocol as
  /// any message; `tags`: the sender's client-only tags, for the doors
  /// that carry them (chatbroker(7), "IRC": client-only tags).
  case message(
    target: Target, id: MessageID, time: Timestamp, user: String, text: String,
    action: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil,
    notice: Bool = false, tags: ClientTags = ClientTags())
  /// A line of a `HISTORY` reply; since 1.6 `replyTo`, the message it
  /// answers (`REPLY`), as on ``message(target:id:time:user:text:action:series:replyTo:notice:tags:)``.
  /// Since 1.6 `edited`: its author changed its text (`AMEND`); and
  /// `reactions`, who put which on it (`REACT`).
  case history(
    target: Target, id: MessageID, time: Timestamp, user: String, text: String,
    action: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil,
    edited: Bool = false, reactions: [ReactionTally] = [])
  /// Since 1.4: a line of a `HISTORY` reply for a message its author took
  /// back: `HIST <target> <id> <time> <user> REDACTED :`, with no text.
  case redactedHistory(target: Target, id: MessageID, time: Timestamp, user: String)
  /// Since 1.4: `user` took back message `id` of `target` (as this user
  /// sees it): `REDACT <target> <id> <user>`.
  case redacted(target: Target, id: MessageID, user: String)
  /// Since 1.6: `user` gave message `id` of `target` (as this user sees
  /// it) a new text: `AMEND <target> <id> <user> :<text>`.
  case amended(target: Target, id: MessageID, user: String, text: String)
  /// Since 1.6: `user` put `reaction` on message `id` of `target` (as
  /// this user sees it), or took it off (`removed`): `REACT <target> <id>
  /// <user> <reaction>` or `UNREACT …`.
  case reacted(target: Target, id: MessageID, user: String, reaction: String, removed: Bool)
  /// A line of a `SCHEDULED` reply; `rule` for a series (since 1.1).
  case scheduled(
    id: MessageID, target: Target, due: Timestamp, created: Timestamp, rule: String?,
    text: String)
  /// Someone's first session joined a room.
  case joined(room: RoomName, user: String)
  /// Someone's last session left a room; `reason` is the one an IRC
  /// client gave (`PART <room> :<reason>`), which only IRC shows.
  case parted(room: RoomName, user: String, reason: String? = nil)
  /// Client-only tags alone (``Request/signal(_:_:)``), delivered: the
  /// doors that carry client tags show them (IRC's `TAGMSG`); the line
  /// protocol shows nothing.
  case signal(target: Target, user: String, time: Timestamp, tags: ClientTags)
  /// Since 1.4: `user` was invited to `room` by `by` (`INVITE`), sent to
  /// the invited user's sessions: IRC clients get IRC's `INVITE` line,
  /// and since 1.6 line-protocol clients the `INVITE` event line
  /// (chatbroker(7), "Moderation").
  case invited(room: RoomName, user: String, by: String)
  /// Since 1.5: `user` changed the room's modes (`MODE`; chatbroker(7),
  /// "Moderation"): to the room's other sessions.
  case modeChanged(room: RoomName, user: String, changes: [ModeChange])
  /// Since 1.5: a line of the ban list (`MODE <room> +b`): `user` banned
  /// `mask` at `time`.
  case ban(room: RoomName, mask: String, user: String, time: Timestamp)
  /// Since 1.5: the operator `by` removed `user` from the room (`KICK`),
  /// to the room's sessions, the removed user's included.
  case kicked(room: RoomName, user: String, by: String, reason: String?)
  /// A user's last session closed, which left `rooms` (those shared with
  /// the recipient): IRC shows one `QUIT` with the reason, the line
  /// protocol a `PART` line per room.
  case quit(user: String, reason: String?, rooms: [RoomName])
  /// A line of a `ROOMS` reply.
  /// Since 1.3 `shared`: the room is shared with other hosts.
  /// Since 1.4 `topic`: the room's topic, when it has one; `isPrivate`:
  /// only some users may read it (chatbroker(7), "Private rooms").
  case room(
    RoomName, members: Int, shared: Bool = false, topic: String? = nil, isPrivate: Bool = false)
  /// Since 1.4: a room's topic, set by `user` at `time`; an empty `text`
  /// when it was cleared. Sent to the room's sessions when it changes, to a
  /// session that joins, and in answer to `TOPIC <room>`.
  case topic(room: RoomName, user: String, time: Timestamp, text: String)
  /// A line of a `WHO` reply; since 1.4 with the member's away text.
  case member(room: RoomName, user: String, away: String? = nil)
  /// Since 1.4: the user you wrote to directly is away: `AWAY <user> :<text>`.
  case away(user: String, text: String)
  /// Since 1.4: `user`, who shares a room with the recipient, went away
  /// with `text`, or came back (nil), or joined a room while away: IRC
  /// clients that negotiated `away-notify` get `AWAY`; the line protocol
  /// shows nothing (chatbroker(7), "IRC").
  case awayChanged(user: String, text: String?)
  /// Since 1.2: a line of a `CONVERSATIONS` reply.
  case conversation(ConversationSummary)
  /// Since 1.2: another session of the same user moved its read position
  /// in `target` (as this user sees it) to message `id`.
  case markRead(target: Target, id: MessageID)
  /// Where the user's read marker in `target` stands, with the delivery
  /// time of its message (nil when that message is no longer kept), or
  /// nil for no marker: the broker sends this rather than
  /// ``markRead(target:id:)``, as IRC's `MARKREAD` names a time. The line
  /// protocol shows it as `MARKREAD <target> <id>` (`*` for no marker,
  /// in the answer to `MARKREAD <target>`), which reads back as
  /// ``markRead(target:id:)``.
  case readMarker(target: Target, id: MessageID?, time: Timestamp?)
  /// Free text for people: `HELP` lines.
  case info(String)
  /// The last line before the broker closes the connection.
  case bye(String)
}

extension RequestError {
  /// The error as the event that answers it.
  public var event: BrokerEvent { .error(verb: verb, code: code, text: text) }
}

/// One conversation of a user's as a `CONV` line carries it (chatbroker(7),
/// "Your rooms and read markers", since 1.2): the target as the user sees it, its
/// newest delivered message, the user's read position, and how many
/// messages after it are someone else's and how many of those are for
/// the user.
public struct ConversationSummary: Equatable, Sendable {
  public var target: Target
  /// The newest delivered message's id and time; nil when there is none.
  public var newest: (id: MessageID, time: Timestamp)?
  /// The user's read marker; nil when the user has not set one.
  public var read: MessageID?
  /// Messages after the marker (all when there is none) not written by the user.
  public var unread: Int
  /// Of those, the ones that mention the user, or all of them in a direct
  /// conversation.
  public var mentions: Int

  public init(
    target: Target, newest: (id: MessageID, time: Timestamp)?, read: MessageID?, unread: Int,
    mentions: Int
  ) {
    self.target = target
    self.newest = newest
    self.read = read
    self.unread = unread
    self.mentions = mentions
  }

  public static func == (lhs: ConversationSummary, rhs: ConversationSummary) -> Bool {
    lhs.target == rhs.target && lhs.newest?.id == rhs.newest?.id
      && lhs.newest?.time == rhs.newest?.time && lhs.read == rhs.read
      && lhs.unread == rhs.unread && lhs.mentions == rhs.mentions
  }
}

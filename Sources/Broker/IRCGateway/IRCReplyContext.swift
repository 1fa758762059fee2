import LineProtocol

/// What the engine's replies to one request of an IRC client answer, and
/// what they gather until their final reply (a ``ReplyContext``): made when
/// a command becomes requests, kept by the server with every reply to the
/// request, held for a sync or not, so that a reply encoded late still
/// reads as an answer to the command that asked it. A PRIVMSG refused after
/// a failed sync names its target; a CHATHISTORY answered again keeps its
/// batch.
final class IRCReplyContext: ReplyContext {
  /// Which IRC command asked.
  enum Purpose {
    /// PRIVMSG, NOTICE or TAGMSG: `OK SAY` is the echo (`echo-message`),
    /// with the client-only tags sent; an error names the target.
    case say(command: String, target: String, text: String, tags: ClientTags = ClientTags())
    /// The JOIN of this room itself; the requests the same JOIN made
    /// (names, read marker, backlog) name it as their ``join``. A refusal
    /// names the room: the client may have sent several JOINs, and the
    /// gateway makes some itself (``rejoin``).
    case join(RoomName)
    /// `WHO #room` for a NAMES reply (353, 366) or a WHO reply (352, 315).
    case names, who
    /// The lines a client without chathistory gets when it joins.
    case backlog
    /// The room's read marker, sent with a JOIN.
    case readMarker
    /// A `CHATHISTORY` answer, in this batch.
    case chathistory(batch: String)
    /// `LIST`: pages of ROOMS.
    case list
    /// The user's rooms a session is joined to when it registers, asked
    /// as `CONVERSATIONS` so that the answer, like any other, shows only
    /// rooms that are durably the user's (chatbroker(7), "Order and
    /// durability"): read from the engine's state directly, a room whose
    /// creation was still being synced was joined again, and so made
    /// anew, when the sync failed.
    case rejoin
    /// `TOPIC #room`: 332 and 333, or 331 for none.
    case topic
    /// `TOPIC #room :text`: the room's TOPIC line is the answer.
    case setTopic
    /// `PART <room> :<reason>`: the echo carries the reason.
    case part(reason: String)
    /// `MODE #room`: 324 and 329.
    case modes
    /// `MODE #room +b`: 367 per ban, then 368.
    case banList
    /// `MODE #room <changes>`: `OK MODE` is the sender's MODE line.
    case setMode
    /// `KICK`: the KICK line for a kicker not in the room.
    case kick(room: RoomName)
    /// A request whose replies need nothing from the command, made a
    /// context only to carry its command's ``label``.
    case other
  }

  let purpose: Purpose
  /// The JOIN this request was made with: when it is refused, none of its
  /// names, marker or backlog is shown, since the client is not in the room.
  let join: IRCReplyContext?
  /// Set on a JOIN's own context when the engine refused it.
  var refused = false

  /// The members listed so far, for the NAMES or WHO reply at their end,
  /// each with the prefix this client is shown for it (`@`, `+` or none).
  var members: [String] = []
  var memberPrefixes: [String] = []
  /// A WHO that asked for WHOX's fields: its 354s show them.
  var whox: WhoX?
  /// A NAMES of several rooms: one 366 after the last, naming them all
  /// (`#a,#b`, as RFC 2812 shows it); "" for the rooms before it.
  var namesEnd: String?

  /// A CHATHISTORY answer's lines that showed only synced messages, not yet
  /// encoded, and the batch's end after them: a thousand long lines are
  /// encoded ``IRCSession/historyLinesPerStep`` a step, in the engine's
  /// order (``IRCSession/nextStep(_:)``).
  var deferred: [BrokerEvent] = []
  var deferredStart = 0
  var batchEnd: [UInt8]?
  /// A page of deferred lines is queued as a step.
  var pageQueued = false

  /// A JOIN's or TOPIC's room topic, shown as 332 and 333 after the
  /// JOIN line (or alone), as IRC clients expect.
  var topic: RoomTopic?

  /// The answer this request is part of, when its command was labeled
  /// (labeled-response).
  var label: LabeledResponse?
  /// The replies the gateway made itself that come after this request in
  /// its labeled command (a 403 for the next target, a 301): gathered
  /// after its final reply, so the answer keeps the command's order.
  var labelTrailing: [UInt8] = []

  /// LIST: the room shown last, where its next page starts, and whether
  /// ROOMS said there are more.
  var lastListed: RoomName?
  var morePages = false
  /// LIST's terms (ELIST): the rooms not matching them are not shown.
  var listFilter: IRCListFilter?

  /// The rooms of a ``Purpose/rejoin`` answer, and whether its final
  /// line came: then each is joined, a step each.
  var roomsToJoin: [RoomName] = []
  var roomsComplete = false

  init(_ purpose: Purpose, join: IRCReplyContext? = nil) {
    self.purpose = purpose
    self.join = join
  }

  var isJoin: Bool { if case .join = purpose { true } else { false } }
  var asksTopic: Bool { if case .topic = purpose { true } else { false } }

  /// Whether the JOIN this reply came with was refused: show nothing.
  var joinRefused: Bool { join?.refused == true }

  /// Whether later lines of a CHATHISTORY answer must wait for the ones
  /// already deferred.
  var isDeferring: Bool { deferredStart < deferred.count }
}

extension IRCReplyContext {
  /// The CHATHISTORY batch's name, for its lines' tags.
  var batchName: String? {
    if case .chathistory(let batch) = purpose { batch } else { nil }
  }
}

import Foundation
import LineProtocol

/// One line of the journal. The journal is the truth: replaying its records
/// in order rebuilds rooms, histories and pending schedules.
///
/// The JSON form of each record is user interface (people read the journal
/// with `jq`), documented in chatbroker(8).
public enum JournalRecord: Equatable, Sendable {
  /// The first line of every journal file; ids below `nextID` are taken.
  case header(nextID: MessageID)
  case room(RoomName, created: Timestamp)
  /// A message sent with `SAY`; `target` as its author wrote it.
  case message(StoredMessage, target: Target)
  case schedule(PendingMessage)
  case cancel(MessageID, at: Timestamp)
  /// A scheduled message was delivered at `at` and entered history.
  case delivery(MessageID, at: Timestamp)
  /// Since 1.1: a series was started with `SAYEVERY` (or, in a compacted
  /// journal, is pending with this next due instant and count so far).
  case series(PendingMessage, Series)
  /// Since 1.1: an occurrence of series `series` was delivered at `at` as
  /// message `id`; the series is next due at `next`, or ended when nil.
  case occurrence(MessageID, series: MessageID, at: Timestamp, next: Timestamp?)
  /// Since 1.1: a pending message or series got a new due instant, and a
  /// series perhaps a new rule (its count starts again).
  case reschedule(MessageID, due: Timestamp, rule: Recurrence?, at: Timestamp)
  /// Since 1.1: a pending message or series got a new text.
  case edit(MessageID, text: String, at: Timestamp)
  /// Since 1.4: series `id` leaves out its occurrence at `occurrence`
  /// (`SKIP`, or `REPLACE` with the single message that replaces it); it
  /// is next due at `due`, which moves only when that occurrence was next.
  case skip(MessageID, occurrence: Timestamp, due: Timestamp, at: Timestamp)
  /// Since 1.2: a room became one of `user`'s rooms (a session of theirs
  /// joined it), to stay theirs across disconnects (chatbroker(7), "Your
  /// rooms").
  case member(user: String, room: RoomName, at: Timestamp)
  /// Since 1.2: a room stopped being one of `user`'s rooms (a PART left
  /// none of their sessions in it). Since 1.5, with `by`: an operator
  /// removed them (a KICK, or a ban that matches them), and they are no
  /// longer invited to it either (chatbroker(7), "Moderation").
  case leave(user: String, room: RoomName, at: Timestamp, by: String? = nil)
  /// Since 1.2: `user`'s read position in `target` (as `user` sees it:
  /// `@bob` for alice's conversation with bob) moved to message `id`.
  case read(user: String, target: Target, id: MessageID, at: Timestamp)
  /// Since 1.6: `user`'s last session left `room` (a `PART`, a `KICK`, the
  /// connection closing, or the broker stopping) when its newest message
  /// was `id`, said at `at`: what an IRC client that comes back has missed
  /// comes after it (chatbroker(7), "IRC").
  case seen(user: String, room: RoomName, id: MessageID, at: Timestamp)
  /// Since 1.3: a line said in a shared room, acknowledged and waiting in
  /// the outbox to be published (chatbroker(8), "FEDERATION").
  case outbox(OutboxLine)
  /// Since 1.3: a line read from the stream entered a shared room's
  /// history, or a direct conversation's (`target` as this host sees it:
  /// `@bob` for a line to this host's bob); its author is `user@node`
  /// unless it is this host's.
  case remote(StoredMessage, target: Target, position: StreamPosition)
  /// Since 1.3: how far into the stream this host has applied, and an
  /// outbox id applied from `node` (in compacted journals, one record per
  /// id remembered).
  case streamPosition(StreamPosition)
  /// Since 1.4: `user` set the topic of `room` (chatbroker(7), `TOPIC`);
  /// an empty text cleared it.
  case topic(RoomName, text: String, user: String, at: Timestamp)
  /// Since 1.4: `user` made `room` private to a group or to the invited,
  /// or changed who may read it, or (nil) made it public again
  /// (chatbroker(7), "Private rooms"). The first such record's user is
  /// the room's creator.
  case access(RoomName, RoomRestriction?, user: String, at: Timestamp)
  /// Since 1.4: `user` may read the private `room` (`INVITE`).
  case invite(RoomName, user: String, at: Timestamp)
  /// Since 1.5: `user` changed one mode of `room` (chatbroker(7),
  /// "Moderation"), or, written with the room's record, became its first
  /// operator by creating it.
  case mode(RoomName, ModeChange, user: String, at: Timestamp)
  /// Since 1.4: `user` took back message `id` of `target` (as `user` wrote
  /// it) with `REDACT`. A compacted journal keeps no trace of the text.
  case redact(Target, id: MessageID, user: String, at: Timestamp)
  /// Since 1.6: `user` changed the text of message `id` of `target` (as
  /// `user` wrote it) with `AMEND`. A compacted journal keeps the new
  /// text only, on the message, marked edited.
  case amend(Target, id: MessageID, user: String, at: Timestamp, text: String)
  /// Since 1.6: `user` put `reaction` on message `id` of `target` (as
  /// `user` sees it) with `REACT`, or took it off (`removed`, `UNREACT`).
  /// A compacted journal has one `react` record per reaction still on a
  /// message, right after it, and none for one taken off.
  case react(Target, id: MessageID, user: String, reaction: String, removed: Bool)
  /// Since 1.6: `WEB` gave `grant.user` a token of the browser door, kept
  /// as its hash (chatbroker(7), `WEB`).
  case webToken(WebTokenGrant)
  /// Since 1.6: `WEB REVOKE` ended all of `user`'s tokens.
  case webRevoke(user: String, at: Timestamp)
  /// The highest id this host's own node has in the stream, found at
  /// start: ids are handed out above it.
  case streamLastID(node: String, id: MessageID)
  /// The stream this host reads was created at `created`: another than
  /// before means it was lost or reset, and its sequences start again;
  /// the ids of its lines are `offset` above their sequences
  /// (``FederatedID/offset(forStreamCreated:)``).
  case streamCreated(Timestamp, offset: UInt64)
  /// A line read from the stream that no conversation here takes (another
  /// host's, or one ignored): only how far this host's `reader` has read
  /// (nil, in a journal written before there were three: every reader).
  case streamSequence(UInt64, reader: StreamReader? = .rooms)

  public static let formatVersion: Int64 = 1

  private var textLength: Int {
    switch self {
    case .message(let message, _): message.text.utf8.count
    case .schedule(let pending), .series(let pending, _): pending.text.utf8.count
    case .edit(_, let text, _): text.utf8.count
    case .outbox(let line): line.text.utf8.count
    case .remote(let message, _, _): message.text.utf8.count
    case .topic(_, let text, _, _): text.utf8.count
    case .amend(_, _, _, _, let text): text.utf8.count
    default: 0
    }
  }

  /// The record as one JSON line, LF included.
  public var jsonLine: [UInt8] {
    var json = JSONLineWriter(capacity: 160 + textLength)
    writeFields(to: &json)
    return json.finish()
  }

  /// Appends the record's JSON line, LF included, to `buffer`, with no
  /// array of its own in between.
  public func appendJSONLine(to buffer: inout [UInt8]) {
    var json = JSONLineWriter(appendingTo: &buffer)
    writeFields(to: &json)
    json.finish(into: &buffer)
  }

  private func writeFields(to json: inout JSONLineWriter) {
    switch self {
    case .header(let nextID):
      json.field("type", "journal")
      json.field("version", Self.formatVersion)
      json.field("next_id", nextID)
    case .room(let room, let created):
      json.field("type", "room")
      json.field("room", room.description)
      json.field("at", created)
    case .message(let message, let target):
      json.field("type", "message")
      json.field("id", message.id)
      json.field("to", target.description)
      json.field("from", message.author)
      json.field("at", message.time)
      if let series = message.series { json.field("series", series) }
      if let replyTo = message.replyTo { json.field("reply_to", replyTo) }
      if message.isAction { json.field("kind", "action") }
      if message.isEdited && !message.isRedacted { json.field("edited", Int64(1)) }
      if message.isRedacted {
        json.field("kind", "redacted")
      } else {
        json.field("text", message.text)
      }
    case .schedule(let pending):
      json.field("type", "schedule")
      json.field("id", pending.id)
      json.field("to", pending.target.description)
      json.field("from", pending.author)
      json.field("created", pending.created)
      json.field("due", pending.due)
      if let series = pending.replacing { json.field("series", series) }
      json.field("text", pending.text)
    case .cancel(let id, let time):
      json.field("type", "cancel")
      json.field("id", id)
      json.field("at", time)
    case .delivery(let id, let time):
      json.field("type", "delivery")
      json.field("id", id)
      json.field("at", time)
    case .series(let pending, let series):
      json.field("type", "series")
      json.field("id", pending.id)
      json.field("to", pending.target.description)
      json.field("from", pending.author)
      json.field("created", pending.created)
      json.field("due", pending.due)
      json.field("rule", series.rule.description)
      json.field("done", Int64(series.done))
      if series.paused { json.field("paused", Int64(1)) }
      if !series.skipped.isEmpty {
        json.field("skipped", series.skipped.map(\.description).joined(separator: ","))
      }
      json.field("text", pending.text)
    case .occurrence(let id, let series, let time, let next):
      json.field("type", "occurrence")
      json.field("id", id)
      json.field("series", series)
      json.field("at", time)
      if let next { json.field("next", next) }
    case .reschedule(let id, let due, let rule, let time):
      json.field("type", "reschedule")
      json.field("id", id)
      json.field("at", time)
      json.field("due", due)
      if let rule { json.field("rule", rule.description) }
    case .edit(let id, let text, let time):
      json.field("type", "edit")
      json.field("id", id)
      json.field("at", time)
      json.field("text", text)
    case .skip(let id, let occurrence, let due, let time):
      json.field("type", "skip")
      json.field("id", id)
      json.field("at", time)
      json.field("occurrence", occurrence)
      json.field("due", due)
    case .member(let user, let room, let time):
      json.field("type", "member")
      json.field("user", user)
      json.field("room", room.description)
      json.field("time", time)
    case .leave(let user, let room, let time, let by):
      json.field("type", "leave")
      json.field("user", user)
      json.field("room", room.description)
      json.field("time", time)
      if let by { json.field("by", by) }
    case .redact(let target, let id, let user, let time):
      json.field("type", "redact")
      json.field("id", id)
      json.field("to", target.description)
      json.field("user", user)
      json.field("at", time)
    case .amend(let target, let id, let user, let time, let text):
      json.field("type", "amend")
      json.field("id", id)
      json.field("to", target.description)
      json.field("user", user)
      json.field("at", time)
      json.field("text", text)
    case .react(let target, let id, let user, let reaction, let removed):
      json.field("type", removed ? "unreact" : "react")
      json.field("id", id)
      json.field("to", target.description)
      json.field("user", user)
      json.field("reaction", reaction)
    case .access(let room, let restriction, let user, let time):
      json.field("type", "access")
      json.field("room", room.description)
      json.field("access", RoomRestriction.word(restriction))
      json.field("user", user)
      json.field("time", time)
    case .mode(let room, let change, let user, let time):
      json.field("type", "mode")
      json.field("room", room.description)
      json.field("mode", (change.adding ? "+" : "-") + String(change.letter.rawValue))
      if let argument = change.argument { json.field("value", argument) }
      json.field("user", user)
      json.field("time", time)
    case .invite(let room, let user, let time):
      json.field("type", "invite")
      json.field("room", room.description)
      json.field("user", user)
      json.field("time", time)
    case .topic(let room, let text, let user, let time):
      json.field("type", "topic")
      json.field("room", room.description)
      json.field("user", user)
      json.field("time", time)
      json.field("text", text)
    case .seen(let user, let room, let id, let time):
      json.field("type", "seen")
      json.field("user", user)
      json.field("room", room.description)
      json.field("id", id)
      json.field("at", time)
    case .read(let user, let target, let id, let time):
      json.field("type", "read")
      json.field("user", user)
      json.field("target", target.description)
      json.field("id", id)
      json.field("time", time)
    case .outbox(let line):
      json.field("type", "outbox")
      json.field("id", line.id)
      json.field("node", line.node)
      json.field("to", line.target.description)
      json.field("from", line.author)
      json.field("at", line.time)
      if let series = line.series { json.field("series", series) }
      json.field("text", line.text)
      if line.standing != .waiting { json.field("standing", line.standing.rawValue) }
      if let key = line.dedupKey { json.field("dedup_key", key.hex) }
    case .remote(let message, let target, let position):
      json.field("type", "remote")
      json.field("id", message.id)
      json.field("to", target.description)
      json.field("from", message.author)
      json.field("at", message.time)
      json.field("seq", Int64(position.sequence))
      json.field("node", position.node)
      json.field("origin", position.origin)
      if let reader = position.reader { json.field("reader", reader.name) }
      if let series = message.series { json.field("series", series) }
      json.field("text", message.text)
    case .streamPosition(let position):
      json.field("type", "stream")
      json.field("seq", Int64(position.sequence))
      json.field("node", position.node)
      json.field("origin", position.origin)
      if let reader = position.reader { json.field("reader", reader.name) }
    case .streamSequence(let sequence, let reader):
      json.field("type", "stream")
      json.field("seq", Int64(sequence))
      if let reader { json.field("reader", reader.name) }
    case .streamLastID(let node, let id):
      json.field("type", "stream")
      json.field("node", node)
      json.field("id", id)
    case .streamCreated(let created, let offset):
      json.field("type", "stream")
      json.field("created", created)
      json.field("offset", Int64(offset))
    case .webToken(let grant):
      json.field("type", "web_token")
      json.field("user", grant.user)
      json.field("hash", grant.hash)
      json.field("created", grant.created)
      json.field("expires", grant.expires)
    case .webRevoke(let user, let time):
      json.field("type", "web_revoke")
      json.field("user", user)
      json.field("at", time)
    }
  }

  /// Reads one journal line (without its LF).
  public init(jsonLine line: UnsafeBufferPointer<UInt8>) throws(JournalFormatError) {
    var fields = RecordFields()
    do {
      try readJSONObject(line) { key, value throws(JSONLineError) in
        fields.set(key, value)
      }
    } catch {
      throw JournalFormatError(reason: error.reason)
    }
    self = try fields.record()
  }
}

/// The fields of a record as read, before they are checked. Every field is
/// held to the rules a request is held to (chatbroker(7)), so that what a
/// journal replays could have come from a request: an edited or damaged
/// journal can never put a control character on a client's screen, an
/// impossible id into the counter or a time RFC 3339 cannot write.
///
/// The string fields are kept as read (most as bytes of the line) and only
/// the ones a record keeps become Strings: ids, times and the record type
/// are read from bytes (a String for each measured as a fifth of start-up's
/// parsing).
private struct RecordFields {
  var type: JSONText?
  var id: JSONText?
  var room: JSONText?
  var to: JSONText?
  var from: JSONText?
  var at: JSONText?
  var created: JSONText?
  var due: JSONText?
  var text: JSONText?
  var reaction: JSONText?
  var nextID: JSONText?
  var version: Int64?
  var rule: JSONText?
  var series: JSONText?
  var replyTo: JSONText?
  var edited: Int64?
  var next: JSONText?
  var done: Int64?
  var paused: Int64?
  var user: JSONText?
  var readTarget: JSONText?
  var time: JSONText?
  var sequence: Int64?
  var node: JSONText?
  var origin: JSONText?
  var kind: JSONText?
  var offset: Int64?
  var standing: JSONText?
  var access: JSONText?
  var occurrence: JSONText?
  var skipped: JSONText?
  var mode: JSONText?
  var modeValue: JSONText?
  var reader: JSONText?
  var dedupKey: JSONText?
  var by: JSONText?
  var hash: JSONText?
  var expires: JSONText?

  mutating func set(_ key: UnsafeBufferPointer<UInt8>, _ value: JSONScalar) {
    switch value {
    case .string(let string):
      if key.equals("type") {
        type = string
      } else if key.equals("id") {
        id = string
      } else if key.equals("to") {
        to = string
      } else if key.equals("from") {
        from = string
      } else if key.equals("at") {
        at = string
      } else if key.equals("text") {
        text = string
      } else if key.equals("room") {
        room = string
      } else if key.equals("created") {
        created = string
      } else if key.equals("due") {
        due = string
      } else if key.equals("next_id") {
        nextID = string
      } else if key.equals("rule") {
        rule = string
      } else if key.equals("series") {
        series = string
      } else if key.equals("reply_to") {
        replyTo = string
      } else if key.equals("next") {
        next = string
      } else if key.equals("user") {
        user = string
      } else if key.equals("target") {
        readTarget = string
      } else if key.equals("time") {
        time = string
      } else if key.equals("node") {
        node = string
      } else if key.equals("origin") {
        origin = string
      } else if key.equals("kind") {
        kind = string
      } else if key.equals("standing") {
        standing = string
      } else if key.equals("access") {
        access = string
      } else if key.equals("occurrence") {
        occurrence = string
      } else if key.equals("skipped") {
        skipped = string
      } else if key.equals("mode") {
        mode = string
      } else if key.equals("value") {
        modeValue = string
      } else if key.equals("reader") {
        reader = string
      } else if key.equals("dedup_key") {
        dedupKey = string
      } else if key.equals("by") {
        by = string
      } else if key.equals("hash") {
        hash = string
      } else if key.equals("expires") {
        expires = string
      } else if key.equals("reaction") {
        reaction = string
      }
    case .integer(let number):
      if key.equals("version") {
        version = number
      } else if key.equals("done") {
        done = number
      } else if key.equals("paused") {
        paused = number
      } else if key.equals("edited") {
        edited = number
      } else if key.equals("seq") {
        sequence = number
      } else if key.equals("offset") {
        offset = number
      }
    case .other:
      break  // Unknown fields are kept for later versions, not errors.
    }
  }

  func record() throws(JournalFormatError) -> JournalRecord {
    switch type?.withUTF8(RecordType.init(utf8:)) {
    case .journal:
      guard let version, version <= JournalRecord.formatVersion else {
        throw JournalFormatError(reason: "journal format version \(version ?? 0) is not supported")
      }
      return .header(nextID: try nextMessageID())
    case .room:
      return .room(try roomName(), created: try time(at, "at"))
    case .message:
      if try isRedacted() {
        guard text == nil else { throw invalid("text") }
        let message = StoredMessage(
          id: try messageID(id, "id"), time: try time(at, "at"), author: try author(), text: "",
          isRedacted: true)
        return .message(message, target: try target())
      }
      var message = StoredMessage(
        id: try messageID(id, "id"), time: try time(at, "at"), author: try author(),
        text: try checkedText(allowingLineFeeds: true), isAction: try isAction(),
        series: try seriesID(),
        replyTo: try replyID())
      message.isEdited = try isEdited()
      return .message(message, target: try target())
    case .schedule:
      let pending = PendingMessage(
        id: try messageID(id, "id"), target: try target(), author: try author(),
        created: try time(created, "created"), due: try time(due, "due"), text: try checkedText(),
        replacing: try seriesID())
      return .schedule(pending)
    case .cancel:
      return .cancel(try messageID(id, "id"), at: try time(at, "at"))
    case .delivery:
      return .delivery(try messageID(id, "id"), at: try time(at, "at"))
    case .series:
      let pending = PendingMessage(
        id: try messageID(id, "id"), target: try target(), author: try author(),
        created: try time(created, "created"), due: try time(due, "due"), text: try checkedText())
      guard let parsedRule = try recurrence(), let done, done >= 0, done <= Int32.max else {
        throw invalid(rule == nil ? "rule" : "done")
      }
      guard paused == nil || paused == 1 else { throw invalid("paused") }
      return .series(
        pending,
        Series(
          rule: parsedRule, done: Int(done), paused: paused == 1, skipped: try skippedTimes()))
    case .occurrence:
      return .occurrence(
        try messageID(id, "id"), series: try messageID(series, "series"), at: try time(at, "at"),
        next: try next.map { value throws(JournalFormatError) in try time(value, "next") })
    case .reschedule:
      return .reschedule(
        try messageID(id, "id"), due: try time(due, "due"), rule: try recurrence(),
        at: try time(at, "at"))
    case .edit:
      return .edit(try messageID(id, "id"), text: try checkedText(), at: try time(at, "at"))
    case .skip:
      return .skip(
        try messageID(id, "id"), occurrence: try time(occurrence, "occurrence"),
        due: try time(due, "due"), at: try time(at, "at"))
    case .member:
      return .member(user: try userName(), room: try roomName(), at: try time(time, "time"))
    case .leave:
      return .leave(
        user: try userName(), room: try roomName(), at: try time(time, "time"),
        by: try remover())
    case .seen:
      return .seen(
        user: try userName(), room: try roomName(), id: try messageID(id, "id"),
        at: try time(at, "at"))
    case .read:
      guard let parsed = readTarget?.withUTF8(Target.init(utf8:)) else { throw invalid("target") }
      return .read(
        user: try userName(), target: parsed, id: try messageID(id, "id"),
        at: try time(time, "time"))
    case .outbox:
      return .outbox(
        OutboxLine(
          id: try messageID(id, "id"), node: try nodeName(), target: try target(),
          author: try author(),
          time: try time(at, "at"), text: try checkedText(), series: try seriesID(),
          standing: try outboxStanding(), dedupKey: try deduplicationKey()))
    case .remote:
      let message = StoredMessage(
        id: try messageID(id, "id"), time: try time(at, "at"), author: try author(),
        text: try checkedText(), series: try seriesID())
      return .remote(message, target: try target(), position: try streamPosition())
    case .stream:
      if created != nil {
        guard let offset, offset >= 0 else { throw invalid("offset") }
        return .streamCreated(try time(created, "created"), offset: UInt64(offset))
      }
      if origin == nil, id != nil {
        return .streamLastID(node: try nodeName(), id: try messageID(id, "id"))
      }
      if node == nil && origin == nil {
        guard let sequence, sequence >= 1 else { throw invalid("seq") }
        return .streamSequence(UInt64(sequence), reader: try streamReader())
      }
      // In a compacted journal written after the stream was lost or
      // reset and before any line of the new one was read: 0.
      return .streamPosition(try streamPosition(lowest: 0))
    case .redact:
      return .redact(
        try target(), id: try messageID(id, "id"), user: try userName(), at: try time(at, "at"))
    case .amend:
      return .amend(
        try target(), id: try messageID(id, "id"), user: try userName(), at: try time(at, "at"),
        text: try checkedText())
    case .react, .unreact:
      guard let reaction = reaction?.string, Reaction.isValid(reaction) else {
        throw invalid("reaction")
      }
      return .react(
        try target(), id: try messageID(id, "id"), user: try userName(), reaction: reaction,
        removed: type?.withUTF8(RecordType.init(utf8:)) == .unreact)
    case .topic:
      return .topic(
        try roomName(), text: try checkedText(allowingEmpty: true), user: try userName(),
        at: try time(time, "time"))
    case .access:
      return .access(
        try roomName(), try restriction(), user: try userName(), at: try time(time, "time"))
    case .invite:
      return .invite(try roomName(), user: try userName(), at: try time(time, "time"))
    case .mode:
      return .mode(
        try roomName(), try modeChange(), user: try userName(), at: try time(time, "time"))
    case .webToken:
      guard let hash = hash?.string, WebToken.isWellFormed(hash) else { throw invalid("hash") }
      return .webToken(
        WebTokenGrant(
          hash: hash, user: try userName(), created: try time(created, "created"),
          expires: try time(expires, "expires")))
    case .webRevoke:
      return .webRevoke(user: try userName(), at: try time(at, "at"))
    default:
      throw JournalFormatError(
        reason: "unknown record type \(type.map { "\"\($0.string)\"" } ?? "(none)")")
    }
  }

  private func invalid(_ field: String) -> JournalFormatError {
    JournalFormatError(reason: "field \"\(field)\" is missing or invalid")
  }

  /// A message's text, as `SAY` would have accepted it: not empty, no
  /// control characters, no longer than the longest line a broker accepts.
  /// A topic's may be empty: that record cleared it.
  /// A message's may hold several lines (since 1.6, `BLOCK`).
  private func checkedText(allowingEmpty: Bool = false, allowingLineFeeds: Bool = false)
    throws(JournalFormatError) -> String
  {
    guard let text else { throw invalid("text") }
    if allowingEmpty && text.withUTF8({ $0.isEmpty }) { return "" }
    if allowingLineFeeds && text.withUTF8({ $0.contains(0x0A) }) {
      let string = text.string
      if string.utf8.count > Limits.maximumLineBytes {
        throw JournalFormatError(
          reason: "field \"text\" is longer than \(Limits.maximumLineBytes) bytes")
      }
      switch MessageText.problem(string, verb: "-", allowingLineFeeds: true)?.code {
      case nil: return string
      case .empty?: throw JournalFormatError(reason: "field \"text\" is empty")
      case .tooLong?:
        throw JournalFormatError(
          reason: "field \"text\" has more than \(MessageBlock.maximumLines) lines")
      default: throw JournalFormatError(reason: "field \"text\" holds a control character")
      }
    }
    if let problem = text.withUTF8(Self.problem(withText:)) { throw problem }
    return text.string
  }

  private static func problem(withText text: UnsafeBufferPointer<UInt8>) -> JournalFormatError? {
    if text.count > Limits.maximumLineBytes {
      return JournalFormatError(
        reason: "field \"text\" is longer than \(Limits.maximumLineBytes) bytes")
    }
    switch MessageText.problem(text, verb: "-")?.code {
    case .empty?: return JournalFormatError(reason: "field \"text\" is empty")
    case nil: return nil
    default: return JournalFormatError(reason: "field \"text\" holds a control character")
    }
  }

  /// The user of a `member`, `leave`, `read`, `topic`, `redact`, `access`
  /// or `invite` record:
  /// a login name.
  private func userName() throws(JournalFormatError) -> String {
    guard let user, user.withUTF8(UserName.isValid(utf8:)) else { throw invalid("user") }
    return user.string
  }

  /// A `leave` record's `by`, the operator who removed the user (since
  /// 1.5), when there is one: a login name.
  private func remover() throws(JournalFormatError) -> String? {
    guard let by else { return nil }
    guard by.withUTF8(UserName.isValid(utf8:)) else { throw invalid("by") }
    return by.string
  }

  /// An `access` record's word, as `ACCESS` takes it: `public`, `invite`
  /// or `group=<group>`; nil for `public`.
  private func restriction() throws(JournalFormatError) -> RoomRestriction? {
    guard let access else { throw invalid("access") }
    if access.string == RoomRestriction.publicWord { return nil }
    guard let restriction = access.withUTF8(RoomRestriction.init(utf8:)) else {
      throw invalid("access")
    }
    return restriction
  }

  /// A `mode` record's change, held to what `MODE` accepts: `+i` is an
  /// `access` record's, never a `mode` record's.
  private func modeChange() throws(JournalFormatError) -> ModeChange {
    guard let word = mode?.string, word.count == 2, let sign = word.first,
      sign == "+" || sign == "-", let letter = ModeChange.Letter(rawValue: word.last!),
      letter != .inviteOnly
    else { throw invalid("mode") }
    let change = ModeChange(adding: sign == "+", letter: letter, argument: modeValue?.string)
    guard case .success(let checked) = ModeChange.checked(change), checked == change else {
      throw invalid("value")
    }
    return checked
  }

  private func roomName() throws(JournalFormatError) -> RoomName {
    guard let name = room?.withUTF8(RoomName.init(utf8:)) else { throw invalid("room") }
    return name
  }

  /// A login name, or `user@node` for a user of another host.
  private func author() throws(JournalFormatError) -> String {
    guard let from, from.withUTF8(Self.isAuthor) else { throw invalid("from") }
    return from.string
  }

  private static func isAuthor(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else {
      return UserName.isValid(utf8: bytes)
    }
    return UserName.isValid(utf8: UnsafeBufferPointer(rebasing: bytes[..<at]))
      && FederationSettings.isValidNode(String(decoding: bytes[(at + 1)...], as: UTF8.self))
  }

  private func streamPosition(lowest: Int64 = 1) throws(JournalFormatError) -> StreamPosition {
    guard let sequence, sequence >= lowest else { throw invalid("seq") }
    return StreamPosition(
      sequence: UInt64(sequence), node: try nodeName(), origin: try messageID(origin, "origin"),
      reader: try streamReader())
  }

  /// The reader of a stream position; nil (every reader) in a journal
  /// written before there were three.
  private func streamReader() throws(JournalFormatError) -> StreamReader? {
    guard let reader else { return nil }
    guard let parsed = StreamReader(name: reader.string) else { throw invalid("reader") }
    return parsed
  }

  /// An outbox line's standing: waiting when the record names none.
  private func outboxStanding() throws(JournalFormatError) -> OutboxStanding {
    guard let standing else { return .waiting }
    guard let parsed = OutboxStanding(rawValue: standing.string), parsed != .waiting else {
      throw invalid("standing")
    }
    return parsed
  }

  /// An outbox line's de-duplication key; nil in a record written before
  /// 1.5, and in a line as published.
  private func deduplicationKey() throws(JournalFormatError) -> DeduplicationKey? {
    guard let dedupKey else { return nil }
    guard let key = DeduplicationKey(hex: dedupKey.string) else { throw invalid("dedup_key") }
    return key
  }

  private func nodeName() throws(JournalFormatError) -> String {
    guard let node = node?.string, FederationSettings.isValidNode(node) else {
      throw invalid("node")
    }
    return node
  }

  /// An id the broker can have handed out: 1 to ``MessageID/maximumValue``.
  private func messageID(_ value: JSONText?, _ field: String) throws(JournalFormatError)
    -> MessageID
  {
    guard let id = value?.withUTF8(MessageID.init(utf8:)), id != .none, id.value >= 1 else {
      throw invalid(field)
    }
    return id
  }

  /// `next_id` may be one past the largest id: then every id is taken.
  private func nextMessageID() throws(JournalFormatError) -> MessageID {
    let exhausted = MessageID(value: MessageID.maximumValue + 1)
    if nextID?.string == exhausted.description { return exhausted }
    return try messageID(nextID, "next_id")
  }

  /// A time in years 1 to 9999, in the one form the journal writes.
  private func time(_ value: JSONText?, _ field: String) throws(JournalFormatError) -> Timestamp {
    guard let time = value?.withUTF8(Timestamp.init(rfc3339UTF8:)) else { throw invalid(field) }
    return time
  }

  /// The rule of a series, nil when the record has none.
  private func recurrence() throws(JournalFormatError) -> Recurrence? {
    guard let rule = rule?.string else { return nil }
    do {
      // Read, never expanded: a start-up expands no rule (chatbroker(8),
      // "JOURNAL FORMAT").
      return try Recurrence.parse(
        rule, defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery, budget: nil)
    } catch {
      throw JournalFormatError(reason: "field \"rule\" cannot be read: \(error.text)")
    }
  }

  /// Since 1.4 a message's `kind`: absent for text, `action` for `ACTION`,
  /// `redacted` (in a compacted journal, with no text) for one taken back.
  private func isAction() throws(JournalFormatError) -> Bool {
    guard let kind else { return false }
    guard kind.withUTF8({ $0.equals("action") }) else { throw invalid("kind") }
    return true
  }

  /// Since 1.4 a delivered message's `series`: the series it is an
  /// occurrence of, nil when absent.
  private func seriesID() throws(JournalFormatError) -> MessageID? {
    guard series != nil else { return nil }
    return try messageID(series, "series")
  }

  /// Since 1.6 a message's `edited`: 1 when its author changed its text
  /// (`AMEND`), absent otherwise.
  private func isEdited() throws(JournalFormatError) -> Bool {
    guard let edited else { return false }
    guard edited == 1 else { throw invalid("edited") }
    return true
  }

  /// Since 1.6 a message's `reply_to`: the message it answers, nil when
  /// absent; never beside `series` (an occurrence answers nothing).
  private func replyID() throws(JournalFormatError) -> MessageID? {
    guard replyTo != nil else { return nil }
    guard series == nil else { throw invalid("reply_to") }
    return try messageID(replyTo, "reply_to")
  }

  /// Since 1.4 a series' `skipped`: its skipped instants, comma-separated,
  /// in time order, at most ``Series/maximumSkipped``.
  private func skippedTimes() throws(JournalFormatError) -> [Timestamp] {
    guard let skipped else { return [] }
    let times = skipped.string.split(separator: ",").map { Timestamp(rfc3339: String($0)) }
    guard times.count <= Series.maximumSkipped, !times.contains(nil) else {
      throw invalid("skipped")
    }
    let sorted = times.compactMap { $0 }
    guard zip(sorted, sorted.dropFirst()).allSatisfy({ $0 < $1 }) else {
      throw invalid("skipped")
    }
    return sorted
  }

  private func isRedacted() throws(JournalFormatError) -> Bool {
    kind?.withUTF8 { $0.equals("redacted") } == true
  }

  private func target() throws(JournalFormatError) -> Target {
    guard let target = to?.withUTF8(Target.init(utf8:)) else { throw invalid("to") }
    return target
  }
}

/// Encoders for every line the broker sends (chatbroker(7), "Lines from the broker"). Each
/// returns the finished bytes, LF included, so a line fanned out to many
/// connections is encoded once and shared (arrays are copy-on-write).
///
/// Fixed words come first and free text last after ` :`, so `cut`, `awk` and
/// `read` split the fixed words safely.
public enum BrokerLine {
  public static func hello(version: String, user: String, text: String) -> [UInt8] {
    build {
      $0.word("HELLO")
      $0.word(version)
      $0.word(user)
      $0.text(text)
    }
  }

  public static func ok(_ verb: Verb, _ words: String...) -> [UInt8] {
    ok(verb, words: words)
  }

  public static func ok(_ verb: Verb, words: [String]) -> [UInt8] {
    build {
      $0.word("OK")
      $0.word(verb.rawValue)
      for word in words { $0.word(word) }
    }
  }

  /// `OK SAY <id> <time>` and `OK SAYAT <id> <due>`: written straight from
  /// the id and the instant, as this reply goes out for every message.
  public static func ok(_ verb: Verb, id: MessageID, time: Timestamp) -> [UInt8] {
    build {
      $0.word("OK")
      $0.word(verb.rawValue)
      $0.id(id)
      $0.time(time)
    }
  }

  public static func error(verb: String, code: ErrorCode, text: String) -> [UInt8] {
    build {
      $0.word("ERR")
      $0.word(verb)
      $0.word(code.rawValue)
      $0.text(text)
    }
  }

  /// `MSG <target> <id> <time> <user> :<text>`
  public static func message(
    target: String, id: MessageID, time: Timestamp, user: String, text: String,
    action: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil
  ) -> [UInt8] {
    build {
      $0.word("MSG")
      $0.message(
        target: target, id: id, time: time, user: user, text: text, action: action,
        series: series, replyTo: replyTo)
    }
  }

  /// `HIST <target> <id> <time> <user> :<text>`, a line of a `HISTORY` reply.
  public static func history(
    target: String, id: MessageID, time: Timestamp, user: String, text: String,
    action: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil,
    edited: Bool = false, reactions: [ReactionTally] = []
  ) -> [UInt8] {
    build {
      $0.word("HIST")
      $0.message(
        target: target, id: id, time: time, user: user, text: text, action: action,
        series: series, replyTo: replyTo, edited: edited, reactions: reactions)
    }
  }

  /// `HIST <target> <id> <time> <user> REDACTED :` (since 1.4): a message
  /// its author took back, in its place in the history, with no text.
  public static func redactedHistory(target: String, id: MessageID, time: Timestamp, user: String)
    -> [UInt8]
  {
    build {
      $0.word("HIST")
      $0.word(target)
      $0.id(id)
      $0.time(time)
      $0.word(user)
      $0.word("REDACTED")
      $0.text("")
    }
  }

  /// `REDACT <target> <id> <user>` (since 1.4): `user` took message `id` back.
  public static func redacted(target: Target, id: MessageID, user: String) -> [UInt8] {
    build {
      $0.word("REDACT")
      $0.word(target.description)
      $0.id(id)
      $0.word(user)
    }
  }

  /// `AMEND <target> <id> <user> :<text>` (since 1.6): `user` gave message
  /// `id` a new text.
  public static func amended(target: Target, id: MessageID, user: String, text: String)
    -> [UInt8]
  {
    build {
      $0.word("AMEND")
      $0.word(target.description)
      $0.id(id)
      $0.word(user)
      $0.text(text)
    }
  }

  /// `REACT <target> <id> <user> <reaction>` and `UNREACT …` (since 1.6):
  /// `user` put a reaction on message `id`, or took it off.
  public static func reacted(
    target: Target, id: MessageID, user: String, reaction: String, removed: Bool
  ) -> [UInt8] {
    build {
      $0.word(removed ? "UNREACT" : "REACT")
      $0.word(target.description)
      $0.id(id)
      $0.word(user)
      $0.word(reaction)
    }
  }

  /// `SCHED <id> <target> <due> <created> :<text>`, and for a series (since
  /// 1.1) `SCHED <id> <target> <due> <created> <rule> :<text>`: the rule
  /// comes after the v1 words, so a v1 script still finds them in place.
  public static func scheduled(
    id: MessageID, target: String, due: Timestamp, created: Timestamp, rule: String? = nil,
    text: String
  ) -> [UInt8] {
    build {
      $0.word("SCHED")
      $0.id(id)
      $0.word(target)
      $0.time(due)
      $0.time(created)
      if let rule { $0.word(rule) }
      $0.text(text)
    }
  }

  /// `CONV <target> <newest> <time> <read> <unread> <mentions>` (since
  /// 1.2): a line of a `CONVERSATIONS` reply; `-` stands for a newest
  /// message, time or read marker that does not exist.
  public static func conversation(_ summary: ConversationSummary) -> [UInt8] {
    build {
      $0.word("CONV")
      $0.word(summary.target.description)
      if let newest = summary.newest {
        $0.id(newest.id)
        $0.time(newest.time)
      } else {
        $0.word("-")
        $0.word("-")
      }
      if let read = summary.read { $0.id(read) } else { $0.word("-") }
      $0.word(String(summary.unread))
      $0.word(String(summary.mentions))
    }
  }

  /// `MARKREAD <target> <id>` (since 1.2): another session of yours moved
  /// your read position.
  public static func markRead(target: Target, id: MessageID?) -> [UInt8] {
    build {
      $0.word("MARKREAD")
      $0.word(target.description)
      if let id { $0.id(id) } else { $0.word("*") }
    }
  }

  // MARK: - Reading lines back (for clients)

  /// Reads the words after `CONV` (six of them) back into a summary; nil
  /// when they are not what the broker writes. For clients such as
  /// chatsh(1): `ConversationSummary(words:)` in one place instead of a
  /// parser per client.
  public static func conversation<S: StringProtocol>(words: [S]) -> ConversationSummary? {
    guard words.count == 6, let target = Target(words[0]) else { return nil }
    var newest: (id: MessageID, time: Timestamp)?
    if words[1] != "-" || words[2] != "-" {
      guard let id = MessageID(words[1]), id != .none, let time = Timestamp(rfc3339: words[2])
      else { return nil }
      newest = (id, time)
    }
    var read: MessageID?
    if words[3] != "-" {
      guard let id = MessageID(words[3]), id != .none else { return nil }
      read = id
    }
    guard let unread = Int(words[4]), unread >= 0, let mentions = Int(words[5]), mentions >= 0,
      mentions <= unread
    else { return nil }
    return ConversationSummary(
      target: target, newest: newest, read: read, unread: unread, mentions: mentions)
  }

  /// Reads the words after `MARKREAD` (two of them) back: the target and
  /// the new read position.
  public static func markRead<S: StringProtocol>(words: [S]) -> (target: Target, id: MessageID)? {
    guard words.count == 2, let target = Target(words[0]), let id = MessageID(words[1]),
      id != .none
    else { return nil }
    return (target, id)
  }

  public static func join(room: RoomName, user: String) -> [UInt8] {
    build {
      $0.word("JOIN")
      $0.word(room.description)
      $0.word(user)
    }
  }

  public static func part(room: RoomName, user: String) -> [UInt8] {
    build {
      $0.word("PART")
      $0.word(room.description)
      $0.word(user)
    }
  }

  /// `ROOM <room> <members> [SHARED|PRIVATE] [:<topic>]`: the topic
  /// (since 1.4) comes last, as free text, so the words stay where a 1.3
  /// script finds them. `flag` is `SHARED` or (since 1.4) `PRIVATE`: a
  /// shared room is never private.
  public static func room(
    _ room: RoomName, members: Int, flag: String? = nil, topic: String? = nil
  ) -> [UInt8] {
    build {
      $0.word("ROOM")
      $0.word(room.description)
      $0.word(String(members))
      if let flag { $0.word(flag) }
      if let topic { $0.text(topic) }
    }
  }

  /// `TOPIC <room> <user> <time> :<text>` (since 1.4); an empty text says
  /// the topic was cleared.
  public static func topic(room: RoomName, user: String, time: Timestamp, text: String)
    -> [UInt8]
  {
    build {
      $0.word("TOPIC")
      $0.word(room.description)
      $0.word(user)
      $0.time(time)
      $0.text(text)
    }
  }

  /// `MODE <room> <user> <changes> [<arguments>]` (since 1.5): `user`
  /// changed the room's modes (chatbroker(7), "Moderation").
  public static func mode(room: RoomName, user: String, changes: [ModeChange]) -> [UInt8] {
    build {
      $0.word("MODE")
      $0.word(room.description)
      $0.word(user)
      for piece in ModeChange.summary(changes) { $0.word(piece) }
    }
  }

  /// `BAN <room> <mask> <user> <time>` (since 1.5): a line of the ban list.
  public static func ban(room: RoomName, mask: String, user: String, time: Timestamp) -> [UInt8] {
    build {
      $0.word("BAN")
      $0.word(room.description)
      $0.word(mask)
      $0.word(user)
      $0.time(time)
    }
  }

  /// `KICK <room> <user> <by> [:<reason>]` (since 1.5): the operator `by`
  /// removed `user` from the room.
  public static func kick(room: RoomName, user: String, by: String, reason: String?) -> [UInt8] {
    build {
      $0.word("KICK")
      $0.word(room.description)
      $0.word(user)
      $0.word(by)
      if let reason { $0.text(reason) }
    }
  }

  /// `INVITE <room> <user> <by>`: since 1.6, `by` invited `user` (you)
  /// to `room`.
  public static func invite(room: RoomName, user: String, by: String) -> [UInt8] {
    build {
      $0.word("INVITE")
      $0.word(room.description)
      $0.word(user)
      $0.word(by)
    }
  }

  /// `MEMBER <room> <user> [:<away>]`: the away text since 1.4.
  public static func member(room: RoomName, user: String, away: String? = nil) -> [UInt8] {
    build {
      $0.word("MEMBER")
      $0.word(room.description)
      $0.word(user)
      if let away { $0.text(away) }
    }
  }

  /// `AWAY <user> :<text>` (since 1.4): the user you wrote to is away.
  public static func away(user: String, text: String) -> [UInt8] {
    build {
      $0.word("AWAY")
      $0.word(user)
      $0.text(text)
    }
  }

  public static func info(_ text: String) -> [UInt8] {
    build {
      $0.word("INFO")
      $0.text(text)
    }
  }

  public static func bye(_ text: String) -> [UInt8] {
    build {
      $0.word("BYE")
      $0.text(text)
    }
  }

  private static func build(_ body: (inout LineBuilder) -> Void) -> [UInt8] {
    var builder = LineBuilder()
    body(&builder)
    builder.bytes.append(UInt8(ascii: "\n"))
    return builder.bytes
  }
}

/// Appends space-separated words and a final ` :text` to one buffer.
private struct LineBuilder {
  var bytes: [UInt8] = []

  init() {
    bytes.reserveCapacity(96)
  }

  mutating func id(_ id: MessageID) {
    separate()
    id.appendDescription(to: &bytes)
  }

  mutating func word(_ word: String) {
    separate()
    bytes.append(contentsOf: word.utf8)
  }

  mutating func time(_ time: Timestamp) {
    separate()
    time.appendRFC3339(to: &bytes)
  }

  mutating func text(_ text: String) {
    separate()
    bytes.append(UInt8(ascii: ":"))
    bytes.append(contentsOf: text.utf8)
  }

  /// The words of a `MSG` or `HIST` line; `ACTION` and `SERIES <id>`
  /// (since 1.4) come after the user, so the v1 words stay where a script
  /// finds them.
  mutating func message(
    target: String, id: MessageID, time: Timestamp, user: String, text: String, action: Bool,
    series: MessageID?, replyTo: MessageID?, edited: Bool = false,
    reactions: [ReactionTally] = []
  ) {
    bytes.reserveCapacity(72 + target.utf8.count + user.utf8.count + text.utf8.count)
    word(target)
    self.id(id)
    self.time(time)
    word(user)
    if action { word("ACTION") }
    if let series {
      word("SERIES")
      self.id(series)
    }
    // Since 1.6, after the others (chatbroker(7), `MSG`).
    if let replyTo {
      word("REPLY")
      self.id(replyTo)
    }
    if edited { word("EDITED") }
    if !reactions.isEmpty {
      word("REACTIONS")
      word(ReactionTally.word(reactions))
    }
    // Since 1.6, last: a text of several lines (chatbroker(7), BLOCK).
    if MessageBlock.isBlock(text) {
      word("BLOCK")
      separate()
      bytes.append(UInt8(ascii: ":"))
      MessageBlock.appendEscaped(text, to: &bytes)
    } else {
      self.text(text)
    }
  }

  private mutating func separate() {
    if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
  }
}

/// The line protocol's codec (chatbroker(7)): a ``BrokerEvent`` becomes the
/// bytes of one broker line, LF included, and a broker line becomes the
/// event again: the broker encodes, clients such as chatsh(1) decode, and
/// round-trip tests keep both directions honest. Requests go the same two
/// ways: `encode(_ request:)` (RequestEncoding.swift) writes them for
/// clients, ``RequestParser`` reads them for the broker.
public enum LineCodec {
  public static func encode(_ event: BrokerEvent) -> [UInt8] {
    switch event {
    case .hello(let version, let user, let text):
      BrokerLine.hello(version: version, user: user, text: text)
    case .ok(let verb, let fields): BrokerLine.ok(verb, words: fields)
    case .accepted(let verb, let id, let time): BrokerLine.ok(verb, id: id, time: time)
    case .error(let verb, let code, let text): BrokerLine.error(verb: verb, code: code, text: text)
    // A notice is shown as any message; client tags are not carried.
    case .message(
      let target, let id, let time, let user, let text, let action, let series, let replyTo, _, _):
      BrokerLine.message(
        target: target.description, id: id, time: time, user: user, text: text, action: action,
        series: series, replyTo: replyTo)
    case .history(
      let target, let id, let time, let user, let text, let action, let series, let replyTo,
      let edited, let reactions):
      BrokerLine.history(
        target: target.description, id: id, time: time, user: user, text: text, action: action,
        series: series, replyTo: replyTo, edited: edited, reactions: reactions)
    case .reacted(let target, let id, let user, let reaction, let removed):
      BrokerLine.reacted(target: target, id: id, user: user, reaction: reaction, removed: removed)
    case .amended(let target, let id, let user, let text):
      BrokerLine.amended(target: target, id: id, user: user, text: text)
    case .redactedHistory(let target, let id, let time, let user):
      BrokerLine.redactedHistory(target: target.description, id: id, time: time, user: user)
    case .redacted(let target, let id, let user):
      BrokerLine.redacted(target: target, id: id, user: user)
    case .scheduled(let id, let target, let due, let created, let rule, let text):
      BrokerLine.scheduled(
        id: id, target: target.description, due: due, created: created, rule: rule, text: text)
    case .joined(let room, let user): BrokerLine.join(room: room, user: user)
    case .parted(let room, let user, _): BrokerLine.part(room: room, user: user)
    case .signal, .awayChanged: []
    case .invited(let room, let user, let by): BrokerLine.invite(room: room, user: user, by: by)
    case .quit(let user, _, let rooms):
      rooms.flatMap { BrokerLine.part(room: $0, user: user) }
    case .room(let room, let members, let shared, let topic, let isPrivate):
      BrokerLine.room(
        room, members: members, flag: shared ? "SHARED" : isPrivate ? "PRIVATE" : nil, topic: topic)
    case .topic(let room, let user, let time, let text):
      BrokerLine.topic(room: room, user: user, time: time, text: text)
    case .member(let room, let user, let away):
      BrokerLine.member(room: room, user: user, away: away)
    case .away(let user, let text): BrokerLine.away(user: user, text: text)
    case .conversation(let summary): BrokerLine.conversation(summary)
    case .markRead(let target, let id): BrokerLine.markRead(target: target, id: id)
    case .readMarker(let target, let id, _): BrokerLine.markRead(target: target, id: id)
    case .modeChanged(let room, let user, let changes):
      BrokerLine.mode(room: room, user: user, changes: changes)
    case .ban(let room, let mask, let user, let time):
      BrokerLine.ban(room: room, mask: mask, user: user, time: time)
    case .kicked(let room, let user, let by, let reason):
      BrokerLine.kick(room: room, user: user, by: by, reason: reason)
    case .info(let text): BrokerLine.info(text)
    case .bye(let text): BrokerLine.bye(text)
    }
  }

  /// Reads one broker line (with or without its LF) back into an event;
  /// nil when it is not a line the broker sends.
  public static func decode(_ line: String) -> BrokerEvent? {
    var line = Substring(line)
    if line.last == "\n" { line.removeLast() }
    var text: String?
    var head = line
    if let separator = line.range(of: " :") {
      head = line[..<separator.lowerBound]
      text = String(line[separator.upperBound...])
    }
    let words = head.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    guard let kind = words.first else { return nil }
    let rest = Array(words.dropFirst())
    switch (kind, rest.count, text) {
    case ("HELLO", 2, let text?):
      return .hello(version: rest[0], user: rest[1], text: text)
    case ("OK", 1..., nil):
      guard let verb = Verb(rawValue: rest[0]) else { return nil }
      let fields = Array(rest.dropFirst())
      if [.say, .block, .action, .notice, .reply, .sayAt].contains(verb), fields.count == 2,
        let id = MessageID(fields[0]),
        let time = Timestamp(rfc3339: fields[1])
      {
        return .accepted(verb, id: id, time: time)
      }
      return .ok(verb, fields: fields)
    case ("ERR", 2, let text?):
      guard let code = ErrorCode(rawValue: rest[1]) else { return nil }
      return .error(verb: rest[0], code: code, text: text)
    case ("MSG", 4..., let text?), ("HIST", 4..., let text?):
      // `ACTION`, then `SERIES <id>`, after the user since 1.4
      // (chatbroker(7), `MSG`); words a later version adds after them are
      // skipped, so that the message is still shown.
      guard let target = Target(rest[0]), let id = MessageID(rest[1]),
        let time = Timestamp(rfc3339: rest[2])
      else { return nil }
      if kind == "HIST" && rest.count >= 5 && rest[4] == "REDACTED" && text.isEmpty {
        return .redactedHistory(target: target, id: id, time: time, user: rest[3])
      }
      var flags = rest[4...]
      let action = flags.first == "ACTION"
      if action { flags.removeFirst() }
      var series: MessageID?
      if flags.first == "SERIES", flags.count >= 2 {
        series = MessageID(flags[flags.startIndex + 1])
        flags.removeFirst(2)
      }
      // Since 1.6 (chatbroker(7), `REPLY`).
      var replyTo: MessageID?
      if flags.first == "REPLY", flags.count >= 2 {
        replyTo = MessageID(flags[flags.startIndex + 1])
        flags.removeFirst(2)
      }
      let edited = flags.first == "EDITED"
      if edited { flags.removeFirst() }
      var reactions: [ReactionTally] = []
      if flags.first == "REACTIONS", flags.count >= 2 {
        reactions = ReactionTally.parse(flags[flags.startIndex + 1]) ?? []
        flags.removeFirst(2)
      }
      let text = flags.first == "BLOCK" ? MessageBlock.unescaped(text) : text
      return kind == "MSG"
        ? .message(
          target: target, id: id, time: time, user: rest[3], text: text, action: action,
          series: series, replyTo: replyTo)
        : .history(
          target: target, id: id, time: time, user: rest[3], text: text, action: action,
          series: series, replyTo: replyTo, edited: edited, reactions: reactions)
    case ("SCHED", 4...5, let text?):
      guard let id = MessageID(rest[0]), let target = Target(rest[1]),
        let due = Timestamp(rfc3339: rest[2]), let created = Timestamp(rfc3339: rest[3])
      else { return nil }
      return .scheduled(
        id: id, target: target, due: due, created: created, rule: rest.count == 5 ? rest[4] : nil,
        text: text)
    case ("MEMBER", 2, let away):
      // The away text since 1.4 (chatbroker(7), `WHO`).
      guard let room = RoomName(rest[0]) else { return nil }
      return .member(room: room, user: rest[1], away: away)
    case ("AWAY", 1, let text?):
      return .away(user: rest[0], text: text)
    case ("JOIN", 2, nil), ("PART", 2, nil):
      guard let room = RoomName(rest[0]) else { return nil }
      switch kind {
      case "JOIN": return .joined(room: room, user: rest[1])
      default: return .parted(room: room, user: rest[1])
      }
    case ("ROOM", 2...3, _):
      // `SHARED` since 1.3, the topic and `PRIVATE` since 1.4
      // (chatbroker(7), `ROOMS`).
      guard let room = RoomName(rest[0]), let members = Int(rest[1]),
        rest.count == 2 || rest[2] == "SHARED" || rest[2] == "PRIVATE"
      else { return nil }
      let flag = rest.count == 3 ? rest[2] : nil
      return .room(
        room, members: members, shared: flag == "SHARED", topic: text,
        isPrivate: flag == "PRIVATE")
    case ("TOPIC", 3, let text?):
      guard let room = RoomName(rest[0]), let time = Timestamp(rfc3339: rest[2]) else {
        return nil
      }
      return .topic(room: room, user: rest[1], time: time, text: text)
    case ("CONV", 6, nil):
      return BrokerLine.conversation(words: rest).map(BrokerEvent.conversation)
    case ("MARKREAD", 2, nil):
      return BrokerLine.markRead(words: rest).map { .markRead(target: $0.target, id: $0.id) }
    case ("AMEND", 3, let text?):
      guard let target = Target(rest[0]), let id = MessageID(rest[1]) else { return nil }
      return .amended(target: target, id: id, user: rest[2], text: text)
    case ("REACT", 4, nil), ("UNREACT", 4, nil):
      guard let target = Target(rest[0]), let id = MessageID(rest[1]) else { return nil }
      return .reacted(
        target: target, id: id, user: rest[2], reaction: rest[3], removed: kind == "UNREACT")
    case ("REDACT", 3, nil):
      guard let target = Target(rest[0]), let id = MessageID(rest[1]) else { return nil }
      return .redacted(target: target, id: id, user: rest[2])
    case ("MODE", 3...9, nil):
      guard let room = RoomName(rest[0]),
        case .success(let changes?) = ModeChange.parse(rest[2], arguments: Array(rest[3...]))
      else { return nil }
      return .modeChanged(room: room, user: rest[1], changes: changes)
    case ("BAN", 4, nil):
      guard let room = RoomName(rest[0]), let time = Timestamp(rfc3339: rest[3]) else {
        return nil
      }
      return .ban(room: room, mask: rest[1], user: rest[2], time: time)
    case ("KICK", 3, let reason):
      guard let room = RoomName(rest[0]) else { return nil }
      return .kicked(room: room, user: rest[1], by: rest[2], reason: reason)
    case ("INVITE", 3, nil):
      guard let room = RoomName(rest[0]) else { return nil }
      return .invited(room: room, user: rest[1], by: rest[2])
    case ("INFO", 0, let text?): return .info(text)
    case ("BYE", 0, let text?): return .bye(text)
    default: return nil
    }
  }
}

extension LineCodec {
  /// One framed input line as a request, or the error that answers it
  /// (chatbroker(7), "Errors"): a line too long or not UTF-8 is discarded
  /// with `ERR -`, anything else goes to ``RequestParser``.
  public static func request(from frame: Frame, maximumLineBytes: Int) -> Result<
    Request, RequestError
  > {
    switch frame {
    case .tooLong:
      .failure(
        RequestError(
          verb: "-", code: .tooLong,
          text: "the line is longer than \(maximumLineBytes) bytes and was discarded"))
    case .badUTF8:
      .failure(
        RequestError(
          verb: "-", code: .badUTF8, text: "the line is not valid UTF-8 and was discarded"))
    case .line(let line): RequestParser.parse(line)
    }
  }
}

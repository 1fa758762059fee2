import Foundation
import IRCProtocol
import LineProtocol

/// The engine's events as this client's IRC lines. What a reply answers
/// comes with it (``IRCReplyContext``); nothing here changes the
/// session's own state, so a reply encoded late, after a sync, reads the
/// same as one encoded at once.
extension IRCSession {
  /// The event as this client's IRC lines (possibly none). Room events are
  /// encoded once per capability set and shared; the rest are for this
  /// client alone.
  ///
  /// `mayDefer`: the line shows nothing unsynced (its kind is neutral), so
  /// a CHATHISTORY line may be kept in its context for a later step
  /// (``nextStep()``) instead of encoded now; it still leaves in the
  /// engine's order.
  func encode(_ outgoing: Outgoing, answering context: ReplyContext?, mayDefer: Bool) -> [UInt8] {
    let bytes: [UInt8]
    switch outgoing.event {
    case .message(.room, _, _, _, _, _, _, _, _, _), .signal(.room, _, _, _), .joined, .parted,
      .awayChanged, .modeChanged, .kicked:
      bytes = outgoing.encoded(variant: encodingVariant) { encode($0) }
    default:
      bytes = encode(outgoing.event, answering: context as? IRCReplyContext, mayDefer: mayDefer)
    }
    return labeledBytes(bytes, of: outgoing.event, for: context)
      + selfDelivery(outgoing.event, answering: context as? IRCReplyContext)
  }

  /// With echo-message, a PRIVMSG, NOTICE or TAGMSG to one's own nick
  /// comes back twice, as IRCv3 echo-message and labeled-response have it:
  /// the echo (with the command's label, if any) and then the delivery,
  /// never labeled. Without echo-message the one delivery is the echo.
  func selfDelivery(_ event: BrokerEvent, answering context: IRCReplyContext?) -> [UInt8] {
    guard capabilities.contains(.echoMessage),
      case .say(let command, let target, let text, let tags) = context?.purpose,
      isOwnNick(target)
    else { return [] }
    switch event {
    case .accepted(.say, let id, let time), .accepted(.notice, let id, let time),
      .accepted(.reply, let id, let time), .accepted(.block, let id, let time):
      return privmsgLines(
        from: nick, to: target, text: text, id: id, time: time, command: command,
        clientTags: tags)
    case .accepted(.action, let id, let time):
      return privmsgLines(
        from: nick, to: target, text: text, id: id, time: time, command: command, action: true)
    case .ok(.say, _), .ok(.react, _), .ok(.unreact, _):
      guard command == "TAGMSG", capabilities.contains(.messageTags) else { return [] }
      return tagmsgLine(from: nick, to: target, time: nil, tags: tags)
    default: return []
    }
  }

  /// One event, for this client alone, as a reply to `context`'s request
  /// when it is one.
  func encode(
    _ event: BrokerEvent, answering context: IRCReplyContext? = nil, mayDefer: Bool = false
  ) -> [UInt8] {
    if let context, context.joinRefused { return [] }
    switch event {
    case .hello: return []
    case .message(
      let target, let id, let time, let author, let text, let action, let series, let replyTo,
      let notice, let tags):
      return privmsgLines(
        from: author, to: shown(target, author: author), text: text, id: id, time: time,
        command: notice ? "NOTICE" : "PRIVMSG", clientTags: tags, action: action, series: series,
        replyTo: replyTo)
    case .joined(let room, let who):
      return IRCMessage(source: "\(who)!\(who)@\(serverName)", "JOIN", [room.description])
        .encoded()
    case .invited(let room, let invited, let by):
      return IRCMessage(
        source: Self.source(by, serverName: serverName), "INVITE", [invited, room.description]
      ).encoded()
    case .signal(let target, let author, let time, let tags):
      guard capabilities.contains(.messageTags) else { return [] }
      return tagmsgLine(from: author, to: shown(target, author: author), time: time, tags: tags)
    case .reacted(let target, let id, let author, let reaction, let removed):
      return reactionLine(
        from: author, to: shown(target, author: author), id: id, reaction: reaction,
        removed: removed)
    case .parted(let room, let who, let reason):
      return IRCMessage(
        source: "\(who)!\(who)@\(serverName)", "PART",
        [room.description] + (reason.map { [$0] } ?? [])
      ).cleaned().encoded(trailing: reason != nil)
    case .quit(let who, let reason, _):
      let text = reason.map { "Quit: \($0)" } ?? "Connection closed"
      return IRCMessage(source: Self.source(who, serverName: serverName), "QUIT", [text])
        .cleaned().encoded(trailing: true)
    case .accepted(.say, let id, let time), .accepted(.notice, let id, let time),
      .accepted(.reply, let id, let time), .accepted(.block, let id, let time):
      // A message to one's own nick is delivered to the session that
      // sent it too, as any IRC server does, echo-message or not.
      guard case .say(let command, let target, let text, let tags) = context?.purpose,
        capabilities.contains(.echoMessage) || isOwnNick(target)
      else { return [] }
      return privmsgLines(
        from: nick, to: target, text: text, id: id, time: time, command: command,
        clientTags: tags)
    case .accepted(.action, let id, let time):
      guard case .say(let command, let target, let text, _) = context?.purpose,
        capabilities.contains(.echoMessage) || isOwnNick(target)
      else { return [] }
      return privmsgLines(
        from: nick, to: target, text: text, id: id, time: time, command: command, action: true)
    case .accepted(let verb, let id, let time):
      return serviceAccepted(verb, id: id, time: time)
    case .ok(let verb, let fields):
      return ok(verb, fields, answering: context)
    case .error(let verb, let code, let text):
      return error(verb, code, text, answering: context)
    case .history:
      guard let context, let batch = context.batchName else {
        return historyLine(event, batch: nil, backlog: true)
      }
      if mayDefer || context.isDeferring {
        context.deferred.append(event)
        return []
      }
      return historyLine(
        event, batch: capabilities.contains(.batch) ? batch : nil, backlog: false)
    case .scheduled(let id, let target, let due, _, let rule, let text):
      return serviceScheduled(id: id, target: target, due: due, rule: rule, text: text)
    case .room(let room, let count, _, let topic, _):
      context?.lastListed = room
      if let filter = context?.listFilter, !filter.matches(room.description, members: count) {
        return []
      }
      return numeric(.list, [room.description, String(count), topic ?? ""]).bytes
    case .away:
      // The gateway answers 301 itself with every PRIVMSG, as IRC servers do.
      return []
    case .awayChanged(let who, let text):
      // IRCv3 away-notify: `AWAY :text` when away, a bare `AWAY` when back;
      // a text set over the line protocol is cut to AWAYLEN.
      guard capabilities.contains(.awayNotify) else { return [] }
      return IRCMessage(
        source: Self.source(who, serverName: serverName), "AWAY",
        text.map { [IRCText.prefix($0, maximumBytes: Self.maximumAwayBytes)] } ?? []
      ).cleaned().encoded(trailing: text != nil)
    case .redactedHistory, .redacted:
      // What was taken back is not shown; IRC clients keep their own logs
      // (chatbroker(7), REDACT).
      return []
    case .amended(let target, let id, let author, let text):
      return amendedLines(from: author, to: shown(target, author: author), id: id, text: text)
    case .topic(let room, let who, let time, let text):
      if let context, context.isJoin || context.asksTopic {
        // After the JOIN line, or alone for TOPIC #room: 332 and 333.
        context.topic = RoomTopic(text: text, user: who, time: time)
        return []
      }
      return IRCMessage(
        source: Self.source(who, serverName: serverName), "TOPIC",
        [
          room.description, text,
        ]
      ).cleaned().encoded(trailing: true)
    case .member(let room, let who, _):
      context?.members.append(Self.nickname(who))
      context?.memberPrefixes.append(membershipPrefix(of: who, in: room))
      return []
    case .modeChanged(let room, let who, let changes):
      return IRCMessage(
        source: Self.source(who, serverName: serverName), "MODE",
        [room.description] + ModeChange.summary(changes)
      ).encoded(trailing: false)
    case .ban(let room, let mask, let who, let time):
      return numeric(
        .banList,
        [
          room.description, mask, Self.source(who, serverName: serverName),
          String(time.milliseconds / 1000),
        ], trailing: false
      ).bytes
    case .kicked(let room, let who, let by, let reason):
      return IRCMessage(
        source: Self.source(by, serverName: serverName), "KICK",
        [room.description, Self.nickname(who), reason ?? by]
      ).cleaned().encoded(trailing: true)
    case .conversation(let summary):
      if case .rejoin = context?.purpose, case .room(let room) = summary.target {
        context?.roomsToJoin.append(room)
      }
      return []
    case .markRead:
      return []
    case .readMarker(let target, _, let time):
      guard capabilities.contains(.readMarker) else { return [] }
      return IRCMessage(
        source: serverName, "MARKREAD",
        [shown(target, author: nick), time.map { "timestamp=\($0)" } ?? "*"]
      ).encoded()
    case .info(let text):
      return reply(source: serverName, "NOTICE", [nick, text]).bytes
    case .bye(let text):
      return IRCMessage("ERROR", ["Closing link: \(text)"]).encoded(trailing: true)
    }
  }

  /// A `HIST` event as PRIVMSG lines, in a CHATHISTORY `batch` if any; in
  /// a JOIN's `backlog` the time starts the text for a client without
  /// server-time.
  func historyLine(_ event: BrokerEvent, batch: String?, backlog: Bool) -> [UInt8] {
    guard
      case .history(
        let target, let id, let time, let author, let text, let action, let series, let replyTo, _,
        _) =
        event
    else {
      return []
    }
    var shownText = text
    if backlog && !capabilities.contains(.serverTime) {
      shownText = "[\(clock(time))] " + text
    }
    return privmsgLines(
      from: author, to: shown(target, author: author), text: shownText, id: id, time: time,
      batch: batch, action: action, series: series, replyTo: replyTo)
  }

  func ok(_ verb: Verb, _ fields: [String], answering context: IRCReplyContext?) -> [UInt8] {
    switch verb {
    case .away:
      // `OK AWAY BACK` when back, `OK AWAY` when away (chatbroker(7), AWAY).
      if fields.first == "BACK" {
        return numeric(.unAway, ["You are no longer marked as being away"]).bytes
      }
      return numeric(.nowAway, ["You have been marked as being away"]).bytes
    case .join:
      return IRCMessage(source: mask, "JOIN", [fields.first ?? ""]).encoded()
        + topicLines(fields.first ?? "", context)
    case .topic:
      guard case .topic = context?.purpose else { return [] }
      let room = fields.first ?? ""
      let lines = topicLines(room, context)
      return lines.isEmpty ? numeric(.noTopic, [room, "No topic is set"]).bytes : lines
    case .part:
      if case .part(let reason) = context?.purpose {
        return IRCMessage(source: mask, "PART", [fields.first ?? "", reason]).cleaned()
          .encoded(trailing: true)
      }
      return IRCMessage(source: mask, "PART", [fields.first ?? ""]).encoded()
    case .who:
      let room = fields.first ?? "*"
      let listed = context?.members ?? []
      let prefixes = context?.memberPrefixes ?? []
      context?.members = []
      context?.memberPrefixes = []
      if case .names = context?.purpose {
        // `@` for a secret room, `=` for any other (RFC 2812, 353).
        let secret = self.room(room).flatMap { reader.roomMode($0)?.isSecret } == true
        let symbol = secret ? "@" : "="
        var bytes: [UInt8] = []
        var line: [String] = []
        let userhost = capabilities.contains(.userhostInNames)
        for (index, member) in listed.enumerated() {
          let shown = userhost ? Self.userhost(ofNick: member, serverName: serverName) : member
          line.append((index < prefixes.count ? prefixes[index] : "") + shown)
          if line.joined(separator: " ").utf8.count > 400 {
            bytes += numeric(.namesReply, [symbol, room, line.joined(separator: " ")]).bytes
            line = []
          }
        }
        if !line.isEmpty {
          bytes += numeric(.namesReply, [symbol, room, line.joined(separator: " ")]).bytes
        }
        if context?.namesEnd == "" { return bytes }
        return bytes
          + numeric(.endOfNames, [context?.namesEnd ?? room, "End of /NAMES list"]).bytes
      }
      let whox = context?.whox
      return listed.enumerated().flatMap { index, member in
        whoLine(
          room: room, member: member, away: reader.awayText(of: member) != nil,
          prefix: index < prefixes.count ? prefixes[index] : "", whox: whox
        ).bytes
      }
        + numeric(.endOfWho, [room, "End of /WHO list"]).bytes
    case .history:
      guard let context, let batch = context.batchName else { return [] }
      let end = batchLine(["-\(batch)"])
      // After deferred lines, the end waits for the last of their pages.
      if context.isDeferring {
        context.batchEnd = end
        return []
      }
      return end
    case .conversations:
      if case .rejoin = context?.purpose { context?.roomsComplete = true }
      return []
    case .rooms:
      // A page of ROOMS is 1000 rooms: LIST goes on with the next page
      // as a step of its own (``answered(_:)``), and ends after the last.
      if fields.contains("MORE"), context?.lastListed != nil {
        context?.morePages = true
        return []
      }
      return numeric(.listEnd, ["End of /LIST"]).bytes
    case .say, .react, .unreact:
      // TAGMSG's answer (a reaction's too): its echo.
      guard case .say("TAGMSG", let target, _, let tags) = context?.purpose,
        capabilities.contains(.echoMessage), capabilities.contains(.messageTags)
      else { return [] }
      return tagmsgLine(from: nick, to: target, time: nil, tags: tags)
    case .scheduled:
      let count = fields.first ?? "0"
      return serviceNotice("\(count) pending").bytes
    case .cancel:
      return serviceNotice("cancelled \(fields.first ?? "")").bytes
    case .sayEvery:
      return serviceSeriesStarted(fields)
    case .invite:
      guard fields.count == 2 else { return [] }
      return numeric(.inviting, [fields[1], fields[0]], trailing: false).bytes
    case .mode:
      return modeOK(fields, answering: context)
    case .kick:
      return kickOK(fields, answering: context)
    case .markRead:
      // The MARKREAD line before it (``BrokerEvent/readMarker(target:id:time:)``)
      // is the answer, when draft/read-marker was negotiated.
      return []
    case .access:
      guard fields.count == 2 else { return [] }
      let mode = fields[1] == RoomRestriction.publicWord ? "-i" : "+i"
      return IRCMessage(source: mask, "MODE", [fields[0], mode]).encoded()
    default:
      return []
    }
  }

  /// 332 and 333 for a topic a JOIN or TOPIC gathered; none when it had none.
  func topicLines(_ room: String, _ context: IRCReplyContext?) -> [UInt8] {
    guard let topic = context?.topic else { return [] }
    context?.topic = nil
    let seconds = String(topic.time.milliseconds / 1000)
    return numeric(.topic, [room, topic.text]).bytes
      + numeric(
        .topicWhoTime, [room, Self.source(topic.user, serverName: serverName), seconds],
        trailing: false
      ).bytes
  }

  /// The room an error is about: the KICK's, or the first its text names.
  private func roomOfError(_ text: String, _ context: IRCReplyContext?) -> String? {
    if case .kick(let room) = context?.purpose { return room.description }
    if case .join(let room) = context?.purpose { return room.description }
    return firstRoom(in: text)
  }

  /// The first word of an error's text that names a room.
  private func firstRoom(in text: String) -> String? {
    text.split(separator: " ").first(where: { $0.hasPrefix("#") }).map(String.init)
  }

  func error(
    _ verb: String, _ code: ErrorCode, _ text: String, answering context: IRCReplyContext?
  ) -> [UInt8] {
    if let bytes = moderationError(
      Verb(rawValue: verb), code, text, room: roomOfError(text, context))
    {
      if Verb(rawValue: verb) == .join { context?.refused = true }
      return bytes
    }
    switch Verb(rawValue: verb) {
    case .topic:
      if code == .notJoined, let room = firstRoom(in: text) {
        return numeric(.notOnChannel, [room, "You're not on that channel"]).bytes
      }
      return reply(source: serverName, "NOTICE", [nick, "TOPIC refused: \(text)"]).bytes
    case .action, .notice, .reply, .block:
      return error(Verb.say.rawValue, code, text, answering: context)
    case .join:
      // The names, marker and backlog asked with it are not shown.
      context?.refused = true
      if code == .noAccess, let room = firstRoom(in: text) {
        // The same for every private room (chatbroker(7), "Moderation").
        return numeric(.inviteOnlyChannel, [room, "Cannot join channel (+i)"]).bytes
      }
      guard case .join(let room) = context?.purpose else {
        return reply(source: serverName, "NOTICE", [nick, "JOIN refused: \(text)"]).bytes
      }
      return reply(source: serverName, "NOTICE", [nick, "JOIN \(room) refused: \(text)"]).bytes
    case .invite, .access:
      if code == .noAccess, let room = firstRoom(in: text) {
        return verb == Verb.invite.rawValue
          ? numeric(.notOnChannel, [room, "You're not on that channel"]).bytes
          : numeric(.chanOPrivsNeeded, [room, "You may not change this room's modes"]).bytes
      }
      return reply(source: serverName, "NOTICE", [nick, "\(verb) refused: \(text)"]).bytes
    case .part:
      if code == .notJoined,
        let room = text.split(separator: " ").first(where: { $0.hasPrefix("#") })
      {
        return numeric(.notOnChannel, [String(room), "You're not on that channel: \(text)"]).bytes
      }
      return reply(source: serverName, "NOTICE", [nick, "PART refused: \(text)"]).bytes
    case .say:
      var target = "*"
      if case .say(_, let said, _, _) = context?.purpose { target = said }
      if code == .noSuchUser { return numeric(.noSuchNick, [target, text]).bytes }
      return numeric(.cannotSendToChannel, [target, text]).bytes
    case .history:
      guard let batch = context?.batchName else { return [] }
      return batchLine(["-\(batch)"])
        + reply(source: serverName, "FAIL", ["CHATHISTORY", "MESSAGE_ERROR", text]).bytes
    case .who:
      context?.members = []
      return reply(source: serverName, "NOTICE", [nick, text]).bytes
    case .markRead:
      let code = code == .storage ? "INTERNAL_ERROR" : "INVALID_PARAMS"
      return reply(source: serverName, "FAIL", ["MARKREAD", code, text]).bytes
    case .sayAt, .scheduled, .cancel, .skip, .replace:
      return serviceNotice("\(verb) \(code.rawValue): \(text)").bytes
    default:
      if verb == "-" && code == .limit {
        return IRCMessage("ERROR", ["Closing link: \(text)"]).encoded(trailing: true)
      }
      return reply(source: serverName, "NOTICE", [nick, "\(verb) \(code.rawValue): \(text)"])
        .bytes
    }
  }
}

import Foundation
import IRCProtocol
import LineProtocol

/// IRC commands after registration, as the requests they become
/// (chatbroker(7), "IRC"): one step per target where a line names several.
extension IRCSession {

  // MARK: - Commands after registration

  func command(_ message: IRCMessage) -> [Action] {
    let parameters = message.parameters
    func need(_ count: Int) -> [Action]? {
      parameters.count < count
        ? [numeric(.needMoreParameters, [message.command, "Not enough parameters"])] : nil
    }
    switch message.command {
    case "WHO":
      if let missing = need(1) { return missing }
      let whox = parameters.count > 1 ? WhoX(parameters[1]) : nil
      guard parameters[0].hasPrefix("#") || parameters[0].hasPrefix("&") else {
        return whoNick(parameters[0], whox: whox)
      }
      guard let room = room(parameters[0]) else {
        return [numeric(.endOfWho, [parameters[0], "End of /WHO list"])]
      }
      let context = IRCReplyContext(.who)
      context.whox = whox
      return [.request(.who(room), answering: context)]
    case "WHOIS":
      if let missing = need(1) { return missing }
      return whois(parameters.last!)
    case "WHOWAS": return whowas(parameters)
    case "USERHOST":
      if let missing = need(1) { return missing }
      return userhost(parameters)
    case "ISON":
      if let missing = need(1) { return missing }
      return ison(parameters)
    case "AWAY": return away(parameters)
    case "LUSERS": return lusers()
    case "MOTD": return motd()
    case "TIME": return time()
    case "VERSION": return version()
    case "INFO": return info()
    case "ADMIN": return admin()
    case "HELP", "HELPOP": return help(parameters)
    case "LIST":
      let context = IRCReplyContext(.list)
      context.listFilter = IRCListFilter(parameters.first)
      return [
        numeric(.listStart, ["Channel", "Users  Name"]),
        .request(.rooms(after: nil), answering: context),
      ]
    case "TOPIC":
      if let missing = need(1) { return missing }
      guard let room = room(parameters[0]) else { return [noSuchChannel(parameters[0])] }
      guard parameters.count > 1 else {
        guard reader.roomMode(room) != nil else {
          return [numeric(.noSuchChannel, [parameters[0], "No such channel"])]
        }
        return [.request(.topic(room), answering: IRCReplyContext(.topic))]
      }
      // Any member may set it, only an operator with +t, as on the line
      // protocol (chatbroker(7), TOPIC).
      let text = IRCText.replacingControls(
        in: Self.plainText(parameters[1]), spacesToo: false, tabToo: false)
      return [.request(.setTopic(room, text: text), answering: IRCReplyContext(.setTopic))]
    case "MODE":
      if let missing = need(1) { return missing }
      let target = parameters[0]
      guard target.hasPrefix("#") else {
        if target == nick { return [numeric(.userModeIs, ["+i"])] }
        return [numeric(.usersDontMatch, ["Cannot view modes of other users"])]
      }
      return channelMode(target, parameters)
    case "TAGMSG":
      if let missing = need(1) { return missing }
      return tagmsg(to: parameters[0], tags: Self.clientTags(message.tags))
    case "SAYAT":
      if let missing = need(3) { return missing }
      return schedule(target: parameters[0], when: parameters[1], text: parameters[2])
    case "MARKREAD":
      return markRead(parameters)
    case "CHATHISTORY":
      if parameters.first?.uppercased() == "TARGETS" && capabilities.contains(.chathistory) {
        return chathistoryTargets(parameters)
      }
      return chathistory(parameters)
    default:
      if let answer = notOffered(message) { return answer }
      return [numeric(.unknownCommand, [message.command, "Unknown command"])]
    }
  }

  /// `key`: `group=<group>` or `invite` asks for the room to be created
  /// private; any other is the room's key (`+k`; chatbroker(7),
  /// "Moderation").
  func join(_ name: String, key: String? = nil) -> [Action] {
    guard let room = room(name) else { return [noSuchChannel(name)] }
    // A room the user no longer has (a KICK took it) is joined again.
    if let earlier = joins[room], !earlier.refused, reader.rooms.contains(room) {
      return []
    }
    if let key, RoomRestriction(key) == nil {
      let valid = ModeChange.checked(ModeChange(adding: true, letter: .key, argument: key))
      if case .success = valid { return join(room, key: key) }
    }
    return join(room, restriction: key.flatMap { RoomRestriction($0) })
  }

  /// The JOIN of a room by name or on registration. The backlog, for a
  /// client without chathistory, is what the user has not seen: after
  /// their read marker or their last session's leaving, whichever is
  /// later, at most ``backlog`` lines; the last ``backlog`` when neither
  /// is known.
  func join(_ room: RoomName, restriction: RoomRestriction? = nil, key: String? = nil)
    -> [Action]
  {
    // What the JOIN asks besides, shown only when the engine let the
    // client in: the room's read marker (draft/read-marker) before the
    // end of its names, the names, and a backlog without chathistory.
    let joining = IRCReplyContext(.join(room))
    joins[room] = joining
    let request =
      restriction.map { Request.joinPrivate(room, $0) }
      ?? key.map { Request.joinKeyed(room, key: $0) } ?? .join(room)
    var actions: [Action] = [.request(request, answering: joining)]
    if capabilities.contains(.readMarker) {
      actions.append(
        .request(.readMarker(.room(room)), answering: IRCReplyContext(.readMarker, join: joining)))
    }
    actions.append(.request(.who(room), answering: IRCReplyContext(.names, join: joining)))
    if !capabilities.contains(.chathistory) && backlog > 0 {
      let seen = reader.seenUntil(in: room)
      actions.append(
        .request(
          .history(.room(room), count: backlog, anchor: seen.map { .latestAfter($0) }),
          answering: IRCReplyContext(.backlog, join: joining)))
    }
    return actions
  }

  /// `PART <room> [:reason]`: the reason reaches the room's IRC clients.
  func part(_ name: String, reason: String? = nil) -> [Action] {
    guard let room = room(name) else { return [noSuchChannel(name)] }
    joins[room] = nil
    guard let reason, !reason.isEmpty else { return [.request(.part(room), answering: nil)] }
    let shown = Self.reasonText(reason)
    return [
      .request(
        .part(room, reason: shown), answering: IRCReplyContext(.part(reason: shown)))
    ]
  }

  /// A PART or QUIT reason as others see it: formatting taken out, control
  /// characters replaced, at most ``maximumAwayBytes`` bytes.
  static func reasonText(_ raw: String) -> String {
    IRCText.prefix(
      IRCText.replacingControls(in: plainText(raw), spacesToo: false, tabToo: true),
      maximumBytes: maximumAwayBytes)
  }

  /// `NAMES <room>`: its members (353) and 366; a name that is no room
  /// gets 366 alone, as RFC 2812 says of channels that cannot be seen.
  /// `end`: for a NAMES of several rooms, the one 366 (``IRCReplyContext/namesEnd``).
  func names(_ name: String, end: String? = nil) -> [Action] {
    guard let room = room(name) else {
      if end == "" { return [] }
      return [numeric(.endOfNames, [end ?? name, "End of /NAMES list"])]
    }
    let context = IRCReplyContext(.names)
    context.namesEnd = end
    return [.request(.who(room), answering: context)]
  }

  func privmsg(
    _ command: String, to target: String, text raw: String, tags: ClientTags = ClientTags()
  )
    -> [Action]
  {
    if IRCText.sameName(target, Self.serviceNick) {
      // A NOTICE is never answered automatically (RFC 2812, 3.3.2).
      return command == "NOTICE" ? [] : service(raw)
    }
    // CTCP (chatbroker(7), "IRC"): an ACTION (`/me`) is a message of its
    // own kind; any other request or reply (VERSION, PING, ...) is not
    // passed on as text.
    var action = false
    var raw = raw
    if raw.hasPrefix("\u{01}") {
      guard command == "PRIVMSG", raw.hasPrefix("\u{01}ACTION ") else { return [] }
      action = true
      raw = String(raw.dropFirst(8))
      if raw.hasSuffix("\u{01}") { raw.removeLast() }
    }
    let text = Self.plainText(raw)
    guard !text.allSatisfy({ $0 == " " }) else {
      return [numeric(.noTextToSend, ["No text to send"])]
    }
    if containsControlCharacter(text) {
      return [
        reply(
          source: serverName, "NOTICE",
          [nick, "\(target): the text contains a control character and was not sent"])
      ]
    }
    let (found, refusal) = brokerTarget(target)
    guard let brokerTarget = found else { return refusal }
    let said = IRCReplyContext(.say(command: command, target: target, text: text, tags: tags))
    var message: Request =
      action
      ? .action(brokerTarget, text: text)
      : command == "NOTICE" ? .notice(brokerTarget, text: text) : .say(brokerTarget, text: text)
    // A PRIVMSG with `+draft/reply=<msgid>` is a REPLY (chatbroker(7),
    // IRC), kept; one to a message the broker cannot show the user goes
    // as a message with its tag (``Request/tagged(_:_:)``).
    if case .say = message,
      let value = tags.tags.first(where: { $0.key == Self.replyTag })?.value,
      let answered = MessageID(value)
    {
      message = .reply(brokerTarget, to: answered, text: text)
    }
    let request: Request = tags.isEmpty ? message : .tagged(message, tags)
    directory.spoke(user)
    var actions: [Action] = [.request(request, answering: said)]
    // 301 tells who writes to an away user, never for a NOTICE.
    if command == "PRIVMSG", case .user(let name) = brokerTarget,
      let awayText = reader.awayText(of: name)
    {
      actions.append(numeric(.away, [name, awayText]))
    }
    return actions
  }

  /// The room or user an IRC target names, or the reply refusing it.
  func brokerTarget(_ target: String) -> (Target?, [Action]) {
    if target.hasPrefix("#") {
      guard let room = room(target) else { return (nil, [noSuchChannel(target)]) }
      return (.room(room), [])
    }
    guard let user = Target("@" + login(target)) else {
      return (nil, [numeric(.noSuchNick, [target, "No such nick"])])
    }
    return (user, [])
  }

  /// `TAGMSG <target>`: its client-only tags to the target's IRC clients
  /// that negotiated message-tags; nothing is kept.
  func tagmsg(to target: String, tags: ClientTags) -> [Action] {
    let (found, refusal) = brokerTarget(target)
    guard let brokerTarget = found else { return refusal }
    let said = IRCReplyContext(.say(command: "TAGMSG", target: target, text: "", tags: tags))
    // `+draft/react` (or `+draft/unreact`) with `+draft/reply=<msgid>` is
    // a reaction the broker keeps (chatbroker(7), IRC); one on a message
    // it cannot show the user passes on as the TAGMSG it was.
    if let (id, reaction, removed) = Self.reaction(in: tags) {
      let react = Request.react(brokerTarget, id, reaction: reaction, removed: removed)
      return [.request(.tagged(react, tags), answering: said)]
    }
    return [.request(.signal(brokerTarget, tags), answering: said)]
  }

  func schedule(target: String, when: String, text raw: String) -> [Action] {
    let text = Self.plainText(raw)
    let brokerTarget =
      target.hasPrefix("#") ? room(target).map(Target.room) : Target("@" + login(target))
    guard let brokerTarget else { return [serviceNotice("\(target) is not a room or a nick")] }
    guard !text.isEmpty, !containsControlCharacter(text) else {
      return [serviceNotice("the text is empty or holds a control character")]
    }
    return [.request(.sayAt(brokerTarget, when: when, text: text), answering: nil)]
  }

  /// `MARKREAD <target> [timestamp=<time>]` of IRCv3 `draft/read-marker`:
  /// moves the user's read marker (chatbroker(7), "Your rooms and read markers") to the
  /// newest message delivered at or before the time, or asks where it
  /// stands; answered with `MARKREAD <target> timestamp=<time>|*`.
  func markRead(_ parameters: [String]) -> [Action] {
    func fail(_ code: String, _ text: String) -> [Action] {
      [reply(source: serverName, "FAIL", ["MARKREAD", code] + parameters.prefix(1) + [text])]
    }
    guard capabilities.contains(.readMarker) else {
      return [numeric(.unknownCommand, ["MARKREAD", "Negotiate draft/read-marker first"])]
    }
    guard let name = parameters.first else { return fail("NEED_MORE_PARAMS", "Missing parameters") }
    let target = name.hasPrefix("#") ? room(name).map(Target.room) : Target("@" + login(name))
    guard let target else { return fail("INVALID_PARAMS", "No such room or nick") }
    guard parameters.count > 1 else { return [.request(.readMarker(target), answering: nil)] }
    guard case .time(let time) = Self.historyPoint(parameters[1]) else {
      return fail(
        "INVALID_PARAMS",
        "\(parameters[1]) is not a time: use timestamp=<YYYY-MM-DDThh:mm:ss.sssZ>")
    }
    return [.request(.markReadAt(target, time), answering: nil)]
  }
}

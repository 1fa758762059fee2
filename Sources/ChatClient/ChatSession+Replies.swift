import Foundation
import LineProtocol

/// What each final reply does to the model, by the request it answers
/// (chatbroker(7), "Requests"): replies come in request order, so the
/// session pairs them with ``PendingRequest`` values; a refusal becomes a
/// note people can read.
extension ChatSession {
  /// The reply to `CONVERSATIONS`: opens what is not open, and takes the
  /// broker's unread counts and read markers. At the start, with nothing
  /// named on the command line, the conversation with the newest message
  /// is shown (chatsh(1), "The chat screen").
  func took(_ summaries: [ConversationSummary], initial: Bool) {
    let opened = summaries.filter { summary in
      let name = summary.target.description
      return name.hasPrefix("#") || summary.unread > 0 || remembered.contains(name)
        || model.find(name) != nil
    }
    let shown: String?
    if model.currentIndex != nil {
      shown = model.current.name
    } else if initial {
      shown =
        opened.max { ($0.newest?.time.milliseconds ?? 0) < ($1.newest?.time.milliseconds ?? 0) }?
        .target.description
    } else {
      shown = opened.first?.target.description
    }
    for summary in opened {
      let name = summary.target.description
      let existing = model.find(name)
      let conversation =
        existing ?? open(name, show: false, count: min(max(50, summary.unread + 10), 1000))
      guard let conversation else { continue }
      conversation.readMarker = summary.read?.description
      if (existing == nil || initial) && summary.unread > 0 {
        conversation.newLineAfter = summary.read?.description ?? ""
      }
      if name != shown {
        conversation.unread = summary.unread
        conversation.mentioned = summary.mentions > 0
      }
    }
    if let shown { model.show(shown) }
    if initial {
      model.releaseKeptNumbers()
      conversationsChanged(model.conversations.map(\.name))
      welcomeIfEmpty()
    }
  }

  /// What a final reply means for the request it answers: `words` are the
  /// fixed words after `OK VERB`, `data` the reply's data lines.
  func finish(_ request: PendingRequest, _ reply: ServerLine, _ data: [BrokerEvent]) {
    if let (code, text) = reply.refusal {
      failed(request, code: code, text: text)
      return
    }
    guard let words = reply.okFields else { return }
    let time = now()
    switch request {
    case .join:
      break
    case .part(let room):
      model.close(room)
      conversationsChanged(model.conversations.map(\.name))
    case .invite(let room, let user):
      notice("\(user) may now read and join \(room)")
    case .mode(let room):
      // The ban list, the modes, or the changes made (chatbroker(7), MODE).
      let bans = data.compactMap { event -> String? in
        guard case .ban(_, let mask, let user, _) = event else { return nil }
        return "\(mask) (by \(user))"
      }
      let shown = words.dropFirst().joined(separator: " ")
      if words.dropFirst().first == "+b" {
        notice(
          bans.isEmpty ? "\(room) bans nobody" : "\(room) bans " + bans.joined(separator: ", "))
      } else if shown.isEmpty {
        notice("nothing changed in \(room)")
      } else {
        (model.find(room) ?? model.current).notice("\(room): \(shown)", time: time)
      }
    case .kick:
      break
    case .say(let target, let text), .action(let target, let text),
      .reply(let target, _, let text):
      guard let (id, sent) = reply.acceptedMessage else { return }
      if openOnDelivery.remove(target) != nil { open(target, show: true) }
      var answered: String?
      if case .reply(_, let original, _) = request { answered = original }
      model.open(target).append(
        ChatMessage(
          target: target, id: id.description, time: sent, user: model.me, text: text,
          isAction: request == .action(target: target, text: text), replyTo: answered))
    case .sayAt(let target, _):
      guard case .event(.accepted(_, _, let due)) = reply else { return }
      model.pending.insert(words[0])
      (model.find(target) ?? model.current).notice(
        "scheduled for \(clock.shortDateTime(due, now: time)) as \(words[0]) "
          + "(/scheduled lists, /cancel \(words[0]) cancels)", time: time)
    case .history(let target, let shown):
      let messages = historyLines(data)
      for message in messages { model.knownUsers.insert(message.user) }
      guard let conversation = model.find(target) else { return }
      conversation.prepend(history: messages)
      conversation.historyLoaded = true
      if shown && messages.isEmpty { conversation.notice("no earlier messages", time: time) }
    case .search:
      let messages = historyLines(data)
      for message in messages { model.knownUsers.insert(message.user) }
      searchMore = nil
      if words.count >= 4 && words[2] == "MORE", let before = MessageID(words[3]) {
        searchMore = (request.searchWords, before)
      }
      notice(searchNotice(messages, words: request.searchWords, now: time))
    case .thread(let target, let id):
      let messages = historyLines(data)
      for message in messages { model.knownUsers.insert(message.user) }
      // OK THREAD <target> <id> <count> [MORE]
      notice(threadNotice(messages, target: target, id: id, more: words.count >= 4, now: time))
    case .conversations(let initial):
      took(
        data.compactMap { line -> ConversationSummary? in
          if case .conversation(let summary) = line { return summary }
          return nil
        }, initial: initial)
    case .markRead(let target):
      if let conversation = model.find(target), words.count >= 2 {
        conversation.readMarker = words[1]
      }
    case .older(let target):
      let messages = historyLines(data)
      guard let conversation = model.find(target) else { return }
      conversation.loadingOlder = false
      conversation.prepend(history: messages)
      if messages.count < Self.historyCount { conversation.reachedStart = true }
    case .missed(let target):
      let messages = historyLines(data)
      if let conversation = model.find(target) {
        let fresh = conversation.merge(messages)
        model.counted(fresh, in: conversation)
      }
      missedMine[target, default: []] += messages.filter { $0.user == model.me }.map(\.text)
      if messages.count == 1000, let last = messages.last {
        requestMissed(target, after: last.id)
      }
      missedRequests -= 1
      if missedRequests == 0 { sendUnsent() }
    case .refresh(let target):
      guard let conversation = model.find(target) else { return }
      for event in data {
        if case .redactedHistory(_, let id, _, _) = event {
          conversation.remove(messageID: id.description)
        } else if let message = ServerLine.event(event).historyMessage {
          conversation.refresh(message)
        }
      }
    case .topic(let room):
      let line = data.lazy.compactMap(Self.topicLine).first
      guard let conversation = model.find(room) ?? Optional(model.current) else { return }
      if let line, conversation.name == room { conversation.topic = line.text.isEmpty ? nil : line }
      if let line, !line.text.isEmpty {
        notice(
          "topic of \(room): \(line.text) (set by \(line.user), "
            + "\(clock.shortDateTime(line.time, now: time)))")
      } else {
        notice("\(room) has no topic; /topic text sets it")
      }
    case .setTopic:
      break
    case .away(let text):
      notice(
        text.map { "you are away: \($0) (who writes to you is told; /away alone to come back)" }
          ?? "you are back")
    case .redact(let target, let id):
      if model.find(target)?.remove(messageID: id) == true {
        model.find(target)?.notice("you took a message back", time: time)
      }
    case .amend(let target, let id, let text):
      _ = model.find(target)?.amend(messageID: id, text: text)
    case .react(let target, let id, let reaction, let removed):
      // Others are told with REACT lines; this session by its OK.
      model.find(target)?.react(
        messageID: id, user: model.me, reaction: reaction, removed: removed)
    case .who(let room, let shown):
      let users = data.compactMap { line -> String? in
        if case .member(_, let user, _) = line { return user }
        return nil
      }
      model.knownUsers.formUnion(users)
      if let conversation = model.find(room) { conversation.members = Set(users) }
      if shown {
        notice(
          users.isEmpty
            ? "nobody is in \(room)" : "in \(room): " + users.joined(separator: ", "))
      }
    case .access(let room):
      // `OK ACCESS <room> public|invite|group=<group>`.
      if words.count >= 2 { model.find(room)?.isPrivate = words[1] != "public" }
    case .rooms(let shown):
      var lines: [String] = []
      var last: RoomName?
      for case .room(let room, let members, _, let topic, let isPrivate) in data {
        model.knownRooms.insert(room.description)
        model.find(room.description)?.isPrivate = isPrivate
        last = room
        let people = "\(members) \(members == 1 ? "person" : "people")"
        // A private room says so (chatsh(1), /rooms): only some may read it.
        let marker = isPrivate ? "  (private)" : ""
        lines.append("\(room)  \(people)\(marker)" + (topic.map { "  \($0)" } ?? ""))
      }
      if !shown {
        if words.last == "MORE", let last {
          self.request(.rooms(after: last), .rooms(shown: false))
        }
        return
      }
      notice(
        lines.isEmpty
          ? "there are no rooms yet; /join #name creates one" : lines.joined(separator: "\n"))
    case .sayEvery(let target, _):
      guard words.count >= 3, let due = Timestamp(rfc3339: words[1]) else { return }
      model.pending.insert(words[0])
      (model.find(target) ?? model.current).notice(
        "series \(words[0]): \(RuleWording.display(sanitized(words[2]), width: 40)), first \(clock.shortDateTime(due, now: time)) "
          + "(/scheduled lists, /cancel \(words[0]) ends it)", time: time)
    case .reschedule(let id), .edit(let id), .skip(let id):
      guard let item = data.last.flatMap({ ServerLine.event($0).scheduledMessage }) else { return }
      model.pending.insert(id)
      let verb =
        switch request {
        case .edit: "edited"
        case .skip: "skipped one occurrence of"
        default: "rescheduled"
        }
      notice("\(verb) \(id): due \(clock.shortDateTime(item.due, now: time)): \(item.text)")
    case .pause(let id, let pausing):
      guard let item = data.last.flatMap({ ServerLine.event($0).scheduledMessage }) else { return }
      model.pending.insert(id)
      // A paused series has no due time to tell: its SCHED line keeps the
      // one it had (chatbroker(7), RESCHEDULE).
      notice(
        pausing
          ? "paused \(id): nothing is sent until /resume \(id)"
          : "resumed \(id): next due \(clock.shortDateTime(item.due, now: time)): \(item.text)")
    case .occurrence(let id, let name, let use):
      let times = data.compactMap { ServerLine.event($0).scheduledMessage?.due }
      guard let found = name.match(times, clock: clock), let series = MessageID(id) else {
        let next = times.prefix(3).map { clock.occurrenceTime($0, now: time) }
        return error(
          "\(id) has no occurrence at \(name.text)"
            + (next.isEmpty ? "" : "; the next are at \(next.joined(separator: ", ")), …")
            + " (/scheduled \(id) lists them)")
      }
      switch use {
      case .skip:
        self.request(.skip(series, occurrence: found.description), .skip(id))
      case .replace(let when, let text):
        self.request(
          .replace(series, occurrence: found.description, when: when.description, text: text),
          .replace(id))
      }
    case .upcoming(let id):
      let items = data.compactMap { ServerLine.event($0).scheduledMessage }
      guard let first = items.first else { return notice("\(id) has no time to come") }
      let rule = first.rule.map { " (\(sanitized($0)))" } ?? ""
      notice(
        "next times of \(id)\(rule), \(first.target): \(first.text)\n"
          + items.map { "  " + clock.occurrenceTime($0.due, now: time) }.joined(separator: "\n"))
    case .replace(let id):
      // The last SCHED line is the message that takes the occurrence's place.
      guard let item = data.last.flatMap({ ServerLine.event($0).scheduledMessage }) else { return }
      model.pending.insert(item.id)
      notice(
        "replaced one occurrence of \(id) by \(item.id): due "
          + "\(clock.shortDateTime(item.due, now: time)): \(item.text)")
    case .scheduled(let shown):
      // The reply is the last COUNT lines: a change made in another session
      // just before it may have come first (chatbroker(7)).
      let count = words.first.flatMap { Int($0) } ?? data.count
      let items = data.suffix(count).compactMap { ServerLine.event($0).scheduledMessage }
      model.pending = Set(items.map(\.id))
      guard shown else { return }
      guard !items.isEmpty else { return notice("no messages are waiting to be sent") }
      notice(scheduledTable(items, now: time))
    case .cancel(let id):
      model.pending.remove(id)
      notice("cancelled \(id)")
    }
  }

  /// The broker refused `request`: `code` as it wrote it (a newer broker's
  /// may be one this client does not know), `broker` its text.
  func failed(_ request: PendingRequest, code: String, text broker: String) {
    let text = localTimes(broker)
    switch request {
    case .join(let room):
      model.close(room)
      conversationsChanged(model.conversations.map(\.name))
      error("could not join \(room): \(text)")
    case .say(let target, let message), .sayAt(let target, let message),
      .action(let target, let message), .reply(let target, _, let message):
      openOnDelivery.remove(target)
      let short = message.count > 40 ? message.prefix(40) + "…" : Substring(message)
      (model.find(target) ?? model.current).notice(
        "not sent to \(target): “\(short)”: \(text)", time: now(), isError: true)
    case .cancel(let id):
      error("could not cancel \(id): \(text)")
    case .invite(let room, let user):
      error("could not invite \(user) to \(room): \(text)")
    case .kick(let room, let user):
      error("could not remove \(user) from \(room): \(text)")
    case .mode(let room):
      error("\(room): \(text)")
    case .redact(_, let id):
      error("could not take \(id) back: \(text)")
    case .amend(_, let id, _):
      error("could not change \(id): \(text)")
    case .thread(_, let id):
      error("could not show the thread of \(id): \(text)")
    case .react(_, let id, let reaction, let removed):
      error(
        removed
          ? "could not take your \(reaction) off \(id): \(text)"
          : "could not put \(reaction) on \(id): \(text)")
    case .away:
      error("could not set your away text: \(text)")
    case .topic(let room), .setTopic(let room):
      error(
        "could not \(request == .topic(room: room) ? "show" : "set") the topic of \(room): \(text)")
    case .reschedule(let id):
      error("could not reschedule \(id): \(text)")
    case .pause(let id, let pausing):
      error("could not \(pausing ? "pause" : "resume") \(id): \(text)")
    case .edit(let id):
      error("could not edit \(id): \(text)")
    case .skip(let id), .occurrence(let id, _, then: .skip):
      error("could not skip an occurrence of \(id): \(text)")
    case .occurrence(let id, _, then: .replace):
      error("could not replace an occurrence of \(id): \(text)")
    case .upcoming(let id):
      error("could not list the next times of \(id): \(text)")
    case .replace(let id):
      error("could not replace an occurrence of \(id): \(text)")
    case .sayEvery(let target, _):
      (model.find(target) ?? model.current).notice(
        "no series started in \(target): \(text)", time: now(), isError: true)
    case .conversations(let initial):
      // A broker before 1.2: the conversations open last time.
      guard initial else { return }
      for name in remembered { open(name, show: false) }
      model.releaseKeptNumbers()
      conversationsChanged(model.conversations.map(\.name))
      welcomeIfEmpty()
    case .access:
      // Before 1.4 no room is private: nothing to show.
      if code == "UNKNOWN" { accessSupported = false }
    case .markRead:
      // Before 1.2 there are no markers; a message gone from the history
      // (NOSUCHMSG) is simply not marked.
      if code == "UNKNOWN" { markersSupported = false }
    case .older(let target):
      model.find(target)?.loadingOlder = false
      error(text)
    case .refresh(let target):
      error("could not fetch what changed in \(target): \(text)")
    case .missed(let target):
      missedRequests -= 1
      error("could not fetch what was missed in \(target): \(text)")
      if missedRequests == 0 { sendUnsent() }
    default:
      error(text)
    }
  }

  /// The messages of a `HISTORY` reply's data lines.
  private func historyLines(_ data: [BrokerEvent]) -> [ChatMessage] {
    data.compactMap { ServerLine.event($0).historyMessage }
  }

  /// A message on one line of a notice, as the screen shows it: when,
  /// where (`showingTarget`), who, what.
  private func noticeLine(_ message: ChatMessage, showingTarget: Bool, now: Timestamp) -> String {
    let when = clock.shortDateTime(message.time, now: now)
    let said =
      message.isAction
      ? "* \(message.user) \(message.singleLineText)"
      : "\(message.user): \(message.singleLineText)"
    return showingTarget ? "\(when)  \(message.target)  \(said)" : "\(when)  \(said)"
  }

  /// What `/search` found, newest first, one line each as the screen
  /// shows a message: when, where, who, what (each line is sanitized when
  /// drawn, as every notice is).
  func searchNotice(_ messages: [ChatMessage], words: String, now: Timestamp) -> String {
    let lines = messages.map { noticeLine($0, showingTarget: true, now: now) }
    let more = searchMore == nil ? "" : "\n(older matches may follow: /search alone shows them)"
    guard !lines.isEmpty else {
      return "nothing found for “\(words)” here" + more
    }
    return "found for “\(words)”, newest first:\n" + lines.joined(separator: "\n") + more
  }

  /// What `/thread` found: the message, then its replies, oldest first,
  /// one line each as `/search` shows them.
  func threadNotice(
    _ messages: [ChatMessage], target: String, id: String, more: Bool, now: Timestamp
  ) -> String {
    let lines = messages.map { noticeLine($0, showingTarget: false, now: now) }
    guard let first = lines.first else { return "no message \(id) in \(target)" }
    let replies = lines.dropFirst()
    let heading =
      replies.isEmpty
      ? "no replies yet to:\n\(first)"
      : "\(replies.count) \(replies.count == 1 ? "reply" : "replies") to:\n\(first)"
    return ([heading] + replies.map { "  ↳ " + $0 }).joined(separator: "\n")
      + (more ? "\n(more replies follow: chatsh thread -n N shows more)" : "")
  }

  /// Pending messages as a table, times in the user's zone: the text of
  /// each wraps under the TEXT column.
  func scheduledTable(_ items: [ScheduledMessage], now: Timestamp) -> NoticeTable {
    let repeats = items.contains { $0.rule != nil }
    var rows = [["ID", "DUE", "CREATED", "TO"] + (repeats ? ["REPEATS"] : []) + ["TEXT"]]
    for item in items {
      rows.append(
        [
          item.id, item.isPaused ? "paused" : clock.shortDateTime(item.due, now: now),
          clock.shortDateTime(item.created, now: now), item.target,
        ]
          + (repeats
            ? [
              item.rule.map {
                RuleWording.display(
                  sanitized(String($0.dropLast(item.isPaused ? 7 : 0))), width: 24)
              } ?? "once"
            ]
            : []) + [item.text])
    }
    let fixed = rows[0].count - 1
    var widths = [Int](repeating: 0, count: fixed)
    for row in rows {
      for column in 0..<fixed { widths[column] = max(widths[column], TextWidth.of(row[column])) }
    }
    return NoticeTable(
      items: rows.map { row in
        NoticeTable.Item(
          lead: (0..<fixed).map {
            row[$0] + String(repeating: " ", count: widths[$0] - TextWidth.of(row[$0]))
          }.joined(separator: "  "), text: row[fixed])
      })
  }
}

extension ChatSession {
  /// A `TOPIC` line as a value, nil for any other line.
  static func topicLine(_ event: BrokerEvent) -> RoomTopic? {
    guard case .topic(_, let user, let time, let text) = event else { return nil }
    return RoomTopic(text: text, user: user, time: time)
  }

  /// A `TOPIC` line that is no reply: the topic changed, or came with a
  /// `JOIN` (again after a reconnect: then it is news only if it changed).
  func topicArrived(_ event: BrokerEvent) {
    guard case .topic(let room, _, _, _) = event, let line = Self.topicLine(event),
      let conversation = model.find(room.description)
    else { return }
    let topic = line.text.isEmpty ? nil : line
    guard topic != conversation.topic else { return }
    conversation.topic = topic
    let time = now()
    let who = line.user == model.me ? "you" : line.user
    if pending.first == .join(room.description) {
      conversation.notice(
        "topic: \(line.text) (set by \(line.user), \(clock.shortDateTime(line.time, now: time)))",
        time: time)
    } else if line.text.isEmpty {
      conversation.notice("\(who) cleared the topic", time: time)
    } else {
      conversation.notice("\(who) set the topic: \(line.text)", time: time)
    }
  }
}

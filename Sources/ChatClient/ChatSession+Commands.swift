import Foundation
import LineProtocol

/// The slash commands of the chat screen (chatsh(1)): what `/join`, `/at`,
/// `/every` and the others send, checked and resolved on the user's clock
/// first, and what Tab offers. Apart from the session's core so that the
/// commands read as one list.
extension ChatSession {
  public static let commands: [(name: String, syntax: String, summary: String)] = [
    (
      "/join", "/join #room [group=GROUP|invite]",
      "join a room (created if needed, private to a Unix group or to who you invite) and show it"
    ),
    ("/invite", "/invite [#room] user", "let a user into a private room"),
    ("/part", "/part [#room]", "leave the room shown, or the one named"),
    (
      "/mode", "/mode [#room] [CHANGES [ARGS]]",
      "show the room's modes, or change them as its operator: +o user, +v user, +b mask, "
        + "+k key, +l n, +t +n +m +s +i (- takes back; +b alone lists the bans)"
    ),
    ("/kick", "/kick user [reason]", "remove someone from the room shown, as its operator"),
    ("/switch", "/switch #room|@user|N", "show another conversation (also Alt-1..9)"),
    ("/msg", "/msg @user|#room text", "send to someone or somewhere else"),
    ("/me", "/me text", "say what you do: shown as “* you text”"),
    (
      "/reply", "/reply [ID] text",
      "answer the last message someone else sent here, or message ID (Tab offers them), "
        + "shown under a quote of it"
    ),
    ("/away", "/away [text]", "say you are away (who writes to you is told); alone: back"),
    (
      "/delete", "/delete [ID]",
      "take back your last message here, once you say y (or message ID), within 24 h"
    ),
    (
      "/amend", "/amend [ID] text",
      "give your last message here, or message ID, a new text, within 24 h; shown as edited"
    ),
    (
      "/react", "/react [ID] reaction",
      "put a reaction (👍, +1, lol) on the last message someone else sent here, or message ID; "
        + "counted under it"
    ),
    (
      "/unreact", "/unreact [ID] reaction",
      "take your reaction off the last message here that has it from you, or message ID"
    ),
    ("/ids", "/ids", "show message ids (for /delete ID), or hide them again"),
    ("/at", "/at WHEN text", "send later: 18:00 (your clock), +10m, 2026-12-24T18:00Z"),
    ("/later", "/later DURATION text", "send after 90s, 10m, 1h30m, 1d"),
    (
      "/every", "/every RULE text",
      "send again and again: weekdays@09:00, monthly:last-fri@17:00, every:15m (your clock)"
    ),
    (
      "/scheduled", "/scheduled [ID]",
      "your messages and series waiting to be sent, or the next times of one"
    ),
    ("/reschedule", "/reschedule ID WHEN|RULE", "move one of them, or give a series a new rule"),
    ("/edit", "/edit ID text", "change the text of one of them"),
    (
      "/skip", "/skip ID [WHEN]",
      "leave out a series' next occurrence, or the one at WHEN (2026-12-24 09:00)"
    ),
    (
      "/replace", "/replace ID WHEN NEWWHEN text",
      "send text at NEWWHEN instead of a series' occurrence at WHEN (one word each)"
    ),
    ("/pause", "/pause ID", "stop a series for now; /resume ID starts it again"),
    ("/resume", "/resume ID", "start a paused series again at its next occurrence"),
    ("/cancel", "/cancel ID", "cancel one of them, or end a series"),
    ("/history", "/history [N]", "load N earlier messages (default 50)"),
    (
      "/search", "/search [words]",
      "find messages you can read holding all the words; alone: older matches"
    ),
    (
      "/thread", "/thread [ID]",
      "a message and the replies to it: message ID, or the one the last reply here answers"
    ),
    ("/who", "/who [#room]", "who is in the room"),
    ("/topic", "/topic [text|-delete]", "show the room's topic, set it, or clear it"),
    ("/rooms", "/rooms", "all rooms and how many are in each"),
    ("/help", "/help", "this list"),
    ("/quit", "/quit", "leave chatsh (also Ctrl-C, Ctrl-D)"),
  ]

  func command(_ line: String) {
    let words = line.split(separator: " ", maxSplits: 1)
    let name = words[0].lowercased()
    let rest = words.count > 1 ? String(words[1]).trimmingSpaces : ""
    let arguments = rest.split(separator: " ").map(String.init)
    switch name {
    case "/join", "/j":
      let restriction = arguments.count == 2 ? RoomRestriction(arguments[1]) : nil
      guard (1...2).contains(arguments.count), RoomName(arguments[0]) != nil,
        arguments.count == 1 || restriction != nil
      else {
        return usage("/join #room [group=GROUP|invite] (# then a-z 0-9 . _ -)")
      }
      open(arguments[0], show: true, restriction: restriction)
    case "/invite":
      let room = arguments.count == 2 ? arguments[0] : model.current.name
      guard (1...2).contains(arguments.count), let name = RoomName(room),
        let user = arguments.last.map({ $0.hasPrefix("@") ? String($0.dropFirst()) : $0 }),
        UserName.isValid(user)
      else { return usage("/invite [#room] user, in a private room") }
      request(.invite(name, user: user), .invite(room: name.description, user: user))
    case "/mode":
      // MODE <room> [<changes> [<arguments>]] (chatbroker(7), since 1.5).
      var words = arguments
      let room =
        words.first.flatMap { RoomName($0) }
        ?? RoomName(model.currentIndex == nil ? "" : model.current.name)
      if let first = words.first, RoomName(first) != nil { words.removeFirst() }
      guard let room else { return usage("/mode [#room] [CHANGES [ARGS]], in a room") }
      switch RequestParser.parse((["MODE", room.description] + words).joined(separator: " ")) {
      case .success(let request): self.request(request, .mode(room: room.description))
      case .failure(let problem): error(problem.text)
      }
    case "/kick":
      guard let room = RoomName(model.currentIndex == nil ? "" : model.current.name),
        let user = arguments.first.map({ $0.hasPrefix("@") ? String($0.dropFirst()) : $0 }),
        UserName.isValid(user)
      else { return usage("/kick user [reason], in a room") }
      let reason = rest.split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init)
      request(
        .kick(room, user: user, reason: reason), .kick(room: room.description, user: user))
    case "/part", "/leave", "/close":
      let target = arguments.first ?? (model.currentIndex == nil ? "" : model.current.name)
      let name = Target(target)?.description ?? target
      guard model.find(name) != nil else { return error("\(target) is not open") }
      if case .room(let room)? = Target(name) {
        request(.part(room), .part(name))
      } else {
        model.close(name)
        conversationsChanged(model.conversations.map(\.name))
      }
    case "/switch", "/s":
      guard let word = arguments.first else { return usage("/switch #room, @user or a number") }
      if let number = Int(word) {
        guard model.switchTo(number: number) else {
          return error("there is no conversation number \(number)")
        }
      } else if !model.switchTo(Target(word)?.description ?? word) {
        if word.hasPrefix("@") {
          open(word, show: true)
        } else {
          error("\(word) is not open; /join \(word) to join it")
        }
      }
    case "/msg", "/m":
      let parts = rest.split(separator: " ", maxSplits: 1)
      guard parts.count == 2, let target = Target(parts[0]) else {
        return usage("/msg @user text (or /msg #room text)")
      }
      let name = target.description
      if case .user = target, model.find(name) == nil {
        // Opened once the broker takes the message: a user that does not
        // exist gets an error here, not a dead conversation.
        openOnDelivery.insert(name)
      } else {
        open(name, show: true)
      }
      say(String(parts[1]), to: name)
    case "/me":
      guard !rest.isEmpty else { return usage("/me text, e.g. /me waves") }
      guard let name = model.currentIndex == nil ? nil : model.current.name,
        let target = Target(name)
      else {
        return error("join a room first (/join #general) or write to someone (/msg @name text)")
      }
      request(.action(target, text: String(rest)), .action(target: name, text: String(rest)))
    case "/reply":
      guard model.currentIndex != nil, let target = Target(model.current.name) else {
        return error("no conversation is open")
      }
      // The last message someone else sent here, unless ID names one.
      let (answered, text) = chosenMessage(rest) { $0.user != model.me }
      guard !text.isEmpty else { return usage("/reply [ID] text, e.g. /reply on it") }
      guard let answered, let id = MessageID(answered.id) else {
        return error("nobody else has written here yet: there is nothing to reply to")
      }
      let name = model.current.name
      request(
        .reply(target, to: id, text: text), .reply(target: name, to: answered.id, text: text))
    case "/away":
      let text = rest.isEmpty ? nil : String(rest)
      request(.away(text), .away(text))
    case "/delete", "/unsay":
      guard model.currentIndex != nil, let target = Target(model.current.name) else {
        return error("no conversation is open")
      }
      let mine = model.current.entries.reversed().lazy.compactMap { entry -> ChatMessage? in
        if case .message(let message) = entry, message.user == self.model.me { return message }
        return nil
      }
      let conversation = model.current.name
      guard let word = arguments.first ?? mine.first?.id, let id = MessageID(word) else {
        return error(
          arguments.isEmpty ? "you have sent nothing here to take back" : "\(rest) is no message id"
        )
      }
      let takeBack = { self.request(.redact(target, id), .redact(target: conversation, id: word)) }
      guard arguments.isEmpty, let last = mine.first else { return takeBack() }
      // Alone, it names no message: ask, showing which (chatsh(1), /delete).
      let text = last.singleLineText
      let short = text.count > 60 ? text.prefix(60) + "…" : Substring(text)
      notice("take back your last message here, “\(short)”? y and Enter to take it back")
      awaitingYes = takeBack
    case "/amend", "/fix":
      guard model.currentIndex != nil, let target = Target(model.current.name) else {
        return error("no conversation is open")
      }
      // My last message here, unless ID names another of mine.
      let (changed, text) = chosenMessage(rest) { $0.user == model.me }
      guard !text.isEmpty else { return usage("/amend [ID] text, e.g. /amend deploy at 18:00") }
      guard let changed, let id = MessageID(changed.id) else {
        return error("you have sent nothing here to change")
      }
      let conversation = model.current.name
      request(
        .amend(target, id, text: text), .amend(target: conversation, id: changed.id, text: text))
    case "/react", "/unreact":
      react(arguments, removed: name == "/unreact")
    case "/at", "/later":
      let parts = rest.split(separator: " ", maxSplits: 1)
      guard parts.count == 2 else {
        return usage(name == "/at" ? "/at WHEN text, e.g. /at 18:00 deploy now" : "/later 10m text")
      }
      var when = String(parts[0])
      if name == "/later" && !when.hasPrefix("+") { when = "+" + when }
      if name == "/at" {
        // A local date and a clock time: tomorrow 09:00, mon 09:00, 2026-12-24 18:00.
        let more = parts[1].split(separator: " ", maxSplits: 1)
        do {
          if more.count == 2,
            let due = try LocalDateWhen.resolve(
              day: when, time: String(more[0]), now: now(), clock: clock)
          {
            return schedule(String(more[1]), due: due)
          }
        } catch {
          return self.error(error.text)
        }
        let next = more.first.map(String.init) ?? ""
        return schedule(String(parts[1]), when: when, dayAndTime: more.count == 2 && isClock(next))
      }
      schedule(String(parts[1]), when: when)
    case "/every":
      var parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
      // A systemd calendar expression takes up to four words, as the
      // broker reads it (chatbroker(7), "Series").
      if let first = parts.first, Recurrence.startsCalendarExpression(first) {
        var rule = first
        var text = parts.count == 2 ? parts[1] : ""
        for _ in 0..<3 {
          let next = text.split(separator: " ", maxSplits: 1).map(String.init)
          guard let word = next.first, Recurrence.continuesCalendarExpression(word) else { break }
          rule += " " + word
          text = next.count == 2 ? next[1] : ""
        }
        parts = text.isEmpty ? [rule] : [rule, text]
      }
      guard parts.count == 2 else {
        return usage("/every RULE text, e.g. /every weekdays@09:00 stand-up")
      }
      repeatedly(parts[1], rule: parts[0])
    case "/reschedule":
      var words = Array(arguments.dropFirst())
      // A systemd calendar expression is a rule of several words; a plain
      // date and time (2026-12-02 09:30) is a <when>, as for /at.
      let plainDateAndTime =
        words.count == 2 && words.joined().allSatisfy { $0.isNumber || $0 == "-" || $0 == ":" }
      if words.count > 1, words.count <= 4, !plainDateAndTime,
        Recurrence.startsCalendarExpression(words[0])
      {
        words = [words.joined(separator: " ")]
      }
      guard (1...2).contains(words.count), let id = arguments.first.flatMap(MessageID.init) else {
        return usage(
          "/reschedule ID WHEN (18:00, +10m, tomorrow 09:30, now, ...) or, for a series, ID RULE")
      }
      reschedule(id, to: words)
    case "/skip" where (2...3).contains(arguments.count):
      guard let id = MessageID(arguments[0]) else {
        return usage("/skip ID [WHEN] (a series, see /scheduled)")
      }
      skip(id, at: Array(arguments.dropFirst()))
    case "/skip", "/pause", "/resume":
      guard arguments.count == 1, let id = MessageID(arguments[0]) else {
        return usage(
          name == "/skip"
            ? "/skip ID [WHEN] (a series, see /scheduled)" : "\(name) ID (a series, see /scheduled)"
        )
      }
      request(
        .reschedule(id, when: String(name.dropFirst())),
        name == "/skip" ? .reschedule(arguments[0]) : .pause(arguments[0], name == "/pause"))
    case "/replace":
      let parts = rest.split(separator: " ", maxSplits: 3)
      guard parts.count == 4, let id = MessageID(parts[0]) else {
        return usage(
          "/replace ID WHEN NEWWHEN text, WHEN the occurrence and NEWWHEN its new time, "
            + "one word each (2026-12-24T09:00+01:00, 18:00, +1h)")
      }
      replace(id, occurrence: String(parts[1]), at: String(parts[2]), text: String(parts[3]))
    case "/edit":
      let parts = rest.split(separator: " ", maxSplits: 1)
      guard parts.count == 2, let id = MessageID(parts[0]) else {
        return usage("/edit ID new text (see /scheduled)")
      }
      request(.edit(id, text: String(parts[1])), .edit(String(parts[0])))
    case "/scheduled" where arguments.count == 1:
      guard let id = MessageID(arguments[0]) else {
        return usage("/scheduled [ID]: all your pending messages, or the next times of one")
      }
      request(.upcoming(id, count: Self.upcomingCount), .upcoming(arguments[0]))
    case "/scheduled":
      request(.scheduled(nil), .scheduled(shown: true))
    case "/cancel":
      guard arguments.count == 1, let id = MessageID(arguments[0]) else {
        return usage("/cancel ID (see /scheduled)")
      }
      request(.cancel(id), .cancel(arguments[0]))
    case "/history":
      guard model.currentIndex != nil, let target = Target(model.current.name) else {
        return error("no conversation is open")
      }
      let count = arguments.first.flatMap { Int($0) } ?? Self.historyCount
      guard count > 0 else { return usage("/history [N], N from 1 to 1000") }
      request(
        .history(target, count: min(count, 1000), anchor: before(model.current)),
        .history(target: model.current.name, shown: true))
    case "/search", "/find":
      if rest.isEmpty {
        guard let more = searchMore else {
          return usage("/search words, e.g. /search deploy failed")
        }
        return request(
          .search(nil, count: Self.searchCount, before: more.before, words: more.words),
          .search(words: more.words))
      }
      request(
        .search(nil, count: Self.searchCount, before: nil, words: String(rest)),
        .search(words: String(rest)))
    case "/thread":
      thread(arguments)
    case "/who", "/names":
      guard let room = RoomName(arguments.first ?? model.current.name) else {
        return usage("/who #room")
      }
      request(.who(room), .who(room: room.description, shown: true))
    case "/topic", "/t":
      guard let room = RoomName(model.currentIndex == nil ? "" : model.current.name) else {
        return error("/topic works in a room; /join one first")
      }
      let name = room.description
      switch rest {
      case "": request(.topic(room), .topic(room: name))
      case "-delete", "-clear": request(.setTopic(room, text: ""), .setTopic(room: name))
      default: request(.setTopic(room, text: String(rest)), .setTopic(room: name))
      }
    case "/ids":
      model.showIDs.toggle()
      notice(model.showIDs ? "message ids shown (/ids hides them)" : "message ids hidden")
    case "/rooms", "/list":
      request(.rooms(after: nil), .rooms(shown: true))
    case "/help", "/h", "/?":
      notice(
        NoticeTable(
          before: ["Type to talk in the conversation shown; Enter sends."],
          items: Self.commands.map { NoticeTable.Item(lead: $0.syntax, text: $0.summary) },
          after: [
            "Keys: PageUp/PageDown scroll, Alt-1..9 switch, Tab completes, Up/Down recall.",
            "Start a line with // to send a line starting with /.",
          ]))
    case "/quit", "/exit", "/q":
      quitRequested = true
    default:
      error("unknown command \(name); /help lists them")
    }
  }

  /// `/thread [ID]` (chatbroker(7), `THREAD`): without ID, the message
  /// the last reply shown here answers, else the last message shown. An ID
  /// need not be shown: the broker knows whether there is such a message.
  private func thread(_ arguments: [String]) {
    guard model.currentIndex != nil, let target = Target(model.current.name) else {
      return error("no conversation is open")
    }
    guard arguments.count <= 1 else { return usage("/thread [ID], e.g. /thread 42") }
    let shown = model.current.entries.reversed().lazy.compactMap { entry -> ChatMessage? in
      if case .message(let message) = entry { return message }
      return nil
    }
    let chosen =
      arguments.first ?? shown.lazy.compactMap(\.replyTo).first ?? shown.first?.id
    guard let chosen else { return error("nobody has written here yet: there is no thread") }
    guard let id = MessageID(chosen) else { return error("\(chosen) is no message id") }
    request(
      .thread(target, id, count: Self.threadCount),
      .thread(target: target.description, id: chosen))
  }

  /// `/react [ID] reaction` and `/unreact [ID] reaction` (chatbroker(7),
  /// `REACT`): without ID, the last message someone else sent here, or,
  /// taking one off, the last here that has `reaction` from me. An ID
  /// need not be shown: the broker knows whether there is such a message.
  private func react(_ arguments: [String], removed: Bool) {
    let name = removed ? "/unreact" : "/react"
    guard model.currentIndex != nil, let target = Target(model.current.name) else {
      return error("no conversation is open")
    }
    guard (1...2).contains(arguments.count), let reaction = arguments.last else {
      return usage("\(name) [ID] reaction, e.g. \(name) 👍 or \(name) 42 +1")
    }
    guard Reaction.isValid(reaction) else {
      return error(
        "\(reaction) is no reaction: an emoji or a word of 1 to \(Reaction.maximumBytes) bytes, "
          + "without commas or =, not starting with :")
    }
    let me = model.me
    let chosen =
      arguments.count == 2
      ? arguments[0]
      : model.current.entries.reversed().lazy.compactMap { entry -> String? in
        guard case .message(let message) = entry else { return nil }
        let fits =
          removed
          ? message.reactions.contains { $0.reaction == reaction && $0.users.contains(me) }
          : message.user != me
        return fits ? message.id : nil
      }.first
    guard let chosen else {
      return error(
        removed
          ? "you have put \(reaction) on no message shown here"
          : "nobody else has written here yet: there is nothing to react to")
    }
    guard let id = MessageID(chosen) else { return error("\(chosen) is no message id") }
    request(
      .react(target, id, reaction: reaction, removed: removed),
      .react(target: target.description, id: chosen, reaction: reaction, removed: removed))
  }

  /// `dayAndTime`: the word after `when` is a clock time, so the user
  /// may have meant a day and a time; the error then names those forms too.
  private func schedule(_ text: String, when: String, dayAndTime: Bool = false) {
    let due: Timestamp
    do {
      due = try WhenParser.resolve(when, now: now(), timeZone: clock.timeZone)
    } catch {
      return self.error(localTimes(error.text) + (dayAndTime ? Self.dayAndTimeForms : ""))
    }
    schedule(text, due: due)
  }

  /// What a day and a time may be, for errors (chatsh(1), `/at`).
  static let dayAndTimeForms =
    "; or a day and a time: today 18:00, tomorrow 09:30, mon 09:00, 2026-12-24 18:00"

  /// Whether `word` reads as a clock time (`09:30`, `9:30:15`).
  func isClock(_ word: String) -> Bool {
    let parts = word.split(separator: ":", omittingEmptySubsequences: false)
    return (2...3).contains(parts.count)
      && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
  }

  private func schedule(_ text: String, due: Timestamp) {
    guard model.currentIndex != nil else {
      return error("join a room first; scheduled messages go to the conversation shown")
    }
    guard let target = Target(model.current.name) else { return }
    request(
      .sayAt(target, when: due.description, text: text),
      .sayAt(target: target.description, text: text))
  }

  /// `/every`: the rule is read in the user's zone unless it names one, and
  /// sent in full, so the broker's own zone never applies.
  private func repeatedly(_ text: String, rule: String) {
    guard model.currentIndex != nil else {
      return error("join a room first; a series goes to the conversation shown")
    }
    let full: String
    do {
      full = try Recurrence.parse(
        rule, defaultZone: clock.timeZone, defaultZoneName: clock.zoneName, now: now(),
        verb: .sayEvery
      ).description
    } catch {
      return self.error(localTimes(error.text))
    }
    guard let target = Target(model.current.name) else { return }
    request(
      .sayEvery(target, rule: full, text: text), .sayEvery(target: target.description, text: text))
  }

  /// `/reschedule`: a `<when>` is resolved here like `/at`'s (one word, or
  /// a day and a time: `tomorrow 09:30`), a rule read like `/every`'s.
  private func reschedule(_ id: MessageID, to words: [String]) {
    let word = words[0]
    let resolved: String
    do {
      if words.count == 2 {
        let due: Timestamp?
        do {
          due = try LocalDateWhen.resolve(day: word, time: words[1], now: now(), clock: clock)
        } catch {
          return self.error(error.text)
        }
        guard let due else {
          return usage(
            "/reschedule ID WHEN, where WHEN is one word (18:00, +10m) "
              + "or a day and a time (tomorrow 09:30, 2026-12-02 09:30)")
        }
        resolved = due.description
      } else if ["now", "skip", "pause", "resume"].contains(word.lowercased()) {
        // Send it now, or skip a series' next occurrence: the broker's words.
        resolved = word.lowercased()
      } else if Recurrence.isRule(word) {
        resolved = try Recurrence.parse(
          word, defaultZone: clock.timeZone, defaultZoneName: clock.zoneName, now: now(),
          verb: .reschedule
        ).description
      } else {
        resolved = try WhenParser.resolve(
          word, now: now(), timeZone: clock.timeZone, verb: .reschedule
        ).description
      }
    } catch {
      return self.error(localTimes(error.text))
    }
    request(.reschedule(id, when: resolved), .reschedule(id.description))
  }

  /// `/skip ID WHEN`: the occurrence named on the user's clock, to the
  /// minute or the second (``OccurrenceName``), found among the series'
  /// next occurrences, then skipped.
  private func skip(_ id: MessageID, at words: [String]) {
    let name: OccurrenceName
    do {
      name = try OccurrenceName(words, now: now(), clock: clock)
    } catch {
      return self.error(localTimes(error.text))
    }
    findOccurrence(id, name, then: .skip)
  }

  /// `/replace`: the occurrence named as for `/skip` (one word), its new
  /// time read as `/at` reads one word, sent in UTC.
  private func replace(_ id: MessageID, occurrence: String, at when: String, text: String) {
    let name: OccurrenceName
    let due: Timestamp
    do {
      name = try OccurrenceName([occurrence], now: now(), clock: clock)
      due = try WhenParser.resolve(when, now: now(), timeZone: clock.timeZone, verb: .replace)
    } catch let error as WhenError {
      return self.error(localTimes(error.text))
    } catch let error as RequestError {
      return self.error(localTimes(error.text))
    } catch {
      return self.error("\(error)")
    }
    findOccurrence(id, name, then: .replace(when: due, text: text))
  }

  /// Asks for the next occurrences of `id` (`SCHEDULED id NEXT`); the
  /// reply sends the request `use` makes of the one `name` names.
  private func findOccurrence(_ id: MessageID, _ name: OccurrenceName, then use: OccurrenceUse) {
    request(
      .upcoming(id, count: Request.maximumUpcoming),
      .occurrence(id.description, name, then: use))
  }

  func usage(_ text: String) { error("usage: " + text) }

  /// An error text with every RFC 3339 UTC time in it shown on the user's
  /// clock, like the rest of the screen.
  func localTimes(_ text: String) -> String {
    guard text.contains("Z") else { return text }
    var words: [String] = []
    for word in text.split(separator: " ", omittingEmptySubsequences: false) {
      var core = Substring(word)
      var tail = ""
      while let last = core.last, ".,;:)".contains(last) {
        tail = String(last) + tail
        core = core.dropLast()
      }
      if let time = parseTimestamp(String(core)) {
        words.append(clock.shortDateTime(time, now: now()) + tail)
      } else {
        words.append(String(word))
      }
    }
    return words.joined(separator: " ")
  }

  // MARK: - Completion

  /// What Tab offers for a rule: one of each form, to edit.
  static let ruleExamples = [
    "daily@09:00", "weekdays@09:00", "daily@09:00,17:00", "mon,wed,fri@18:00",
    "monthly:1@09:00", "monthly:last-fri@17:00", "monthly:2nd-tue@09:00", "yearly:03-14@09:00",
    "every:2w:tue@09:00", "every:15m", "rrule:FREQ=WEEKLY;BYDAY=TU;BYHOUR=9",
  ]

  /// `[ID] text` of `/reply` and `/amend`: the message shown here that
  /// ID names, when the first word is the id of one that `fits` and text
  /// follows it, else the last that fits; and the text.
  func chosenMessage(_ rest: Substring, fits: (ChatMessage) -> Bool) -> (ChatMessage?, String) {
    let shown = model.current.entries.compactMap { entry -> ChatMessage? in
      if case .message(let message) = entry, fits(message) { return message }
      return nil
    }
    let words = rest.split(separator: " ", maxSplits: 1)
    if words.count == 2, let named = shown.last(where: { $0.id == words[0] }) {
      return (named, String(words[1].drop { $0 == " " }))
    }
    return (shown.last, String(rest))
  }

  /// The reactions Tab offers after `/react`, as the chat page does.
  public static let quickReactions = ["👍", "❤️", "😂", "🎉", "👀"]

  /// Tab after `/react` or `/unreact` (see ``completions(for:isFirst:line:)``):
  /// the second word is an id or a reaction, the third a reaction.
  private func reactionCompletions(removed: Bool, words: [Substring], line: String) -> [String] {
    let typing = line.hasSuffix(" ") ? words.count + 1 : words.count
    guard typing == 2 || typing == 3 else { return [] }
    let me = model.me
    let messages = model.current.entries.reversed().compactMap { entry -> ChatMessage? in
      guard case .message(let message) = entry else { return nil }
      return !removed || message.reactions.contains { $0.users.contains(me) } ? message : nil
    }.prefix(20)
    func mine(_ messages: some Sequence<ChatMessage>) -> [String] {
      var seen: Set<String> = []
      return messages.flatMap { message in
        message.reactions.filter { $0.users.contains(me) }.map(\.reaction)
      }.filter { seen.insert($0).inserted }
    }
    if typing == 3 {
      let id = String(words[1])
      return removed ? mine(messages.filter { $0.id == id }) : Self.quickReactions
    }
    return messages.map(\.id) + (removed ? mine(messages) : Self.quickReactions)
  }

  /// Candidates for Tab, by what the word before the cursor starts with.
  /// `line` is the whole input line, so that the id after `/cancel`,
  /// `/reschedule` and `/edit` completes from the pending ids.
  public func completions(for word: String, isFirst: Bool, line: String = "") -> [String] {
    if isFirst && word.hasPrefix("/") { return Self.commands.map(\.name) }
    let words = line.split(separator: " ", omittingEmptySubsequences: true)
    let command = words.first?.lowercased() ?? ""
    let takesID = ["/cancel", "/reschedule", "/edit", "/skip", "/replace", "/pause", "/resume"]
      .contains(command)
    let atSecond = words.count == 1 || (words.count == 2 && !line.hasSuffix(" "))
    if takesID && atSecond {
      return model.pending.sorted()
    }
    // The ids of the messages shown here, newest first, after /reply;
    // of mine after /amend.
    if (command == "/reply" || command == "/amend" || command == "/thread") && atSecond {
      let mineOnly = command == "/amend"
      return model.current.entries.reversed().compactMap { entry -> String? in
        if case .message(let message) = entry, !mineOnly || message.user == model.me {
          return message.id
        }
        return nil
      }.prefix(20).map { $0 }
    }
    // After /react: the ids of the messages shown, newest first, and a
    // few reactions; after /unreact, the messages that have one from me,
    // and mine. After an id, the reactions alone.
    if command == "/react" || command == "/unreact" {
      return reactionCompletions(removed: command == "/unreact", words: words, line: line)
    }
    // The rule forms of chatbroker(7), "Series", after /every.
    if command == "/every" && atSecond { return Self.ruleExamples }
    let atThird =
      words.count == 2 && line.hasSuffix(" ") || words.count == 3 && !line.hasSuffix(" ")
    if command == "/reschedule" && atThird {
      return ["now", "skip", "pause", "resume"] + Self.ruleExamples
    }
    // The day of the occurrence `/skip ID` leaves out, as `/at` reads it.
    if command == "/skip" && atThird {
      return ["today", "tomorrow"] + LocalClock.weekdays.map { $0.lowercased() }
    }
    let rooms = model.knownRooms.union(model.conversations.map(\.name).filter { $0.hasPrefix("#") })
    let users = model.knownUsers.union(model.current.members).subtracting([model.me])
    if word.hasPrefix("#") { return Array(rooms) }
    if word.hasPrefix("@") {
      return users.map { "@" + $0 } + model.conversations.map(\.name).filter { $0.hasPrefix("@") }
    }
    return Array(users)
  }
}

import Foundation
import LineProtocol

/// A request sent and awaiting its reply. Replies come in request order, so
/// a queue pairs them up.
enum PendingRequest: Equatable {
  case join(String)
  case part(String)
  case say(target: String, text: String)
  case sayAt(target: String, text: String)
  case sayEvery(target: String, text: String)
  case history(target: String, shown: Bool)
  /// `CONVERSATIONS` (chatbroker(7), since 1.2): my rooms and direct
  /// conversations with their unread counts; `initial` at the start.
  case conversations(initial: Bool)
  case markRead(String)
  /// PageUp past the oldest line: `HISTORY target 50 BEFORE id`.
  case older(target: String)
  /// `HISTORY target 1000 AFTER id` after a reconnect: what was missed.
  case missed(target: String)
  case who(room: String, shown: Bool)
  /// `shown: false`: only to learn every room's name, for Tab.
  case rooms(shown: Bool)
  case scheduled(shown: Bool)
  case cancel(String)
  case reschedule(String)
  case edit(String)

  /// Whether a `SCHED` line may be part of this request's reply; any other
  /// `SCHED` line is an event: a change made in another session.
  var takesScheduledLines: Bool {
    switch self {
    case .scheduled, .reschedule, .edit: true
    default: false
    }
  }
}

/// The chat screen's behaviour without the terminal: turns typed lines into
/// requests and broker lines into changes of the ``ChatModel``. The
/// terminal layer feeds it and draws the model.
public final class ChatSession {
  public let model: ChatModel
  public var clock: LocalClock
  public var now: () -> Timestamp
  /// Queues a request for the broker (written with ``LineCodec``).
  public var send: (Request) -> Void = { _ in }
  /// Rings the terminal bell.
  public var bell: () -> Void = {}
  /// Called when the set of open conversations changes (to remember them).
  public var conversationsChanged: ([String]) -> Void = { _ in }
  public private(set) var quitRequested = false
  public private(set) var connected = true
  /// What the status line says while disconnected (`reconnecting in 3s`),
  /// set by the terminal layer, which does the reconnecting.
  public var reconnectStatus: String?
  private var pending: [PendingRequest] = []
  /// The data lines of the reply being read (`HIST`, `MEMBER`, ...).
  var replyData: [BrokerEvent] = []
  /// Lines typed, or sent and not acknowledged, when the connection was
  /// lost; sent after the reconnect unless the missed history shows them.
  private var unsent: [(target: String, text: String, inFlight: Bool)] = []
  /// `HISTORY ... AFTER` requests of a reconnect not answered yet, and my
  /// own texts they brought, per conversation.
  private var missedRequests = 0
  private var missedMine: [String: [String]] = [:]
  /// Conversations open last time, saved here: opened when the broker
  /// cannot list mine (before 1.2), and direct ones kept open.
  private var remembered: [String] = []
  private var heldNotes: [String] = []
  /// Whether the broker knows `MARKREAD` (1.2 and later).
  private var markersSupported = true
  /// Direct conversations `/msg` opens once its message is delivered.
  private var openOnDelivery: Set<String> = []

  public static let historyCount = 50

  public static let commands: [(name: String, syntax: String, summary: String)] = [
    ("/join", "/join #room", "join a room (created if needed) and show it"),
    ("/part", "/part [#room]", "leave the room shown, or the one named"),
    ("/switch", "/switch #room|@user|N", "show another conversation (also Alt-1..9)"),
    ("/msg", "/msg @user|#room text", "send to someone or somewhere else"),
    ("/at", "/at WHEN text", "send later: 18:00 (your clock), +10m, 2026-12-24T18:00Z"),
    ("/later", "/later DURATION text", "send after 90s, 10m, 1h30m, 1d"),
    ("/every", "/every RULE text", "send again and again: weekdays@09:00, every:15m (your clock)"),
    ("/scheduled", "/scheduled", "your messages and series waiting to be sent"),
    ("/reschedule", "/reschedule ID WHEN|RULE", "move one of them, or give a series a new rule"),
    ("/edit", "/edit ID text", "change the text of one of them"),
    ("/cancel", "/cancel ID", "cancel one of them, or end a series"),
    ("/history", "/history [N]", "load N earlier messages (default 50)"),
    ("/who", "/who [#room]", "who is in the room"),
    ("/rooms", "/rooms", "all rooms and how many are in each"),
    ("/help", "/help", "this list"),
    ("/quit", "/quit", "leave chatsh (also Ctrl-C, Ctrl-D)"),
  ]

  public init(model: ChatModel, clock: LocalClock, now: @escaping () -> Timestamp) {
    self.model = model
    self.clock = clock
    self.now = now
  }

  // MARK: - Start

  /// Opens the conversations named, then asks the broker for mine
  /// (`CONVERSATIONS`): every room of mine, and each direct conversation
  /// with unread messages or in `remembered`, with unread counts and a
  /// `── new ──` line at my read marker. A broker older than 1.2 refuses
  /// the request; then `remembered` (the list saved last time) is opened.
  public func start(targets: [String], remembered: [String] = []) {
    for target in targets { open(target, show: false) }
    if let first = targets.first { _ = model.switchTo(Target(first)?.description ?? first) }
    self.remembered = remembered
    request(.conversations, .conversations(initial: true))
    request(.scheduled(nil), .scheduled(shown: false))
    request(.rooms(after: nil), .rooms(shown: false))
  }

  /// The conversation shown has been seen to its bottom: moves my read
  /// marker there (chatbroker(7), `MARKREAD`), once per newest message.
  public func seenBottom(of conversation: Conversation) {
    guard connected, markersSupported, conversation.historyLoaded,
      let newest = conversation.newestMessageID, newest != conversation.readMarker,
      newest != conversation.markRequested, let target = Target(conversation.name),
      let id = MessageID(newest)
    else { return }
    conversation.markRequested = newest
    request(.markRead(target, id), .markRead(conversation.name))
  }

  /// A note from chatsh itself at the start (such as the locale's): shown
  /// in the conversation shown, once there is one.
  public func startupNote(_ text: String) {
    if model.currentIndex == nil {
      heldNotes.append(text)
    } else {
      model.current.notice(text, time: now())
    }
  }

  private func welcomeIfEmpty() {
    for text in heldNotes { model.current.notice(text, time: now()) }
    heldNotes = []
    guard model.conversations.isEmpty else { return }
    model.home.notice(
      "Welcome to chatsh, \(model.me). Join a room with /join #general, "
        + "or talk to someone with /msg @name hello. /help lists all commands.",
      time: now())
  }

  /// The reply to `CONVERSATIONS`: opens what is not open, and takes the
  /// broker's unread counts and read markers.
  private func took(_ summaries: [ConversationSummary], initial: Bool) {
    for summary in summaries {
      let name = summary.target.description
      let existing = model.find(name)
      guard
        name.hasPrefix("#") || summary.unread > 0 || remembered.contains(name)
          || existing != nil
      else { continue }
      let conversation =
        existing ?? open(name, show: false, count: min(max(50, summary.unread + 10), 1000))
      guard let conversation else { continue }
      conversation.readMarker = summary.read?.description
      if (existing == nil || initial) && summary.unread > 0 {
        conversation.newLineAfter = summary.read?.description ?? ""
      }
      if conversation !== model.current {
        conversation.unread = summary.unread
        conversation.mentioned = summary.mentions > 0
      }
    }
    if initial { welcomeIfEmpty() }
  }

  @discardableResult
  private func open(_ name: String, show: Bool, count: Int = historyCount) -> Conversation? {
    guard let target = Target(name) else {
      error("'\(name)' is not a room or user: use #room (a-z 0-9 . _ -) or @user")
      return nil
    }
    let name = target.description
    let isNew = model.find(name) == nil
    let conversation = model.open(name)
    if show { _ = model.switchTo(name) }
    guard isNew else { return conversation }
    if case .room(let room) = target {
      request(.join(room), .join(name))
      request(.who(room), .who(room: name, shown: false))
    }
    request(.history(target, count: count, anchor: nil), .history(target: name, shown: false))
    conversationsChanged(model.conversations.map(\.name))
    return conversation
  }

  /// Sends `request`, to be answered as `kind` says; while disconnected,
  /// a message is kept to be sent later and anything else is refused.
  func request(_ request: Request, _ kind: PendingRequest) {
    guard connected else {
      if case .say(let target, let text) = kind {
        unsent.append((target, text, false))
        (model.find(target) ?? model.current).notice(
          "not connected: “\(short(text))” is sent once the broker is back", time: now())
      } else {
        error("not connected to the broker (\(reconnectStatus ?? "reconnecting")); try again then")
      }
      return
    }
    pending.append(kind)
    send(request)
  }

  /// PageUp past the oldest loaded line of the conversation shown: loads
  /// the 50 messages before it (once at a time, until there are no more).
  public func loadOlder() {
    let conversation = model.current
    guard model.currentIndex != nil, connected, !conversation.loadingOlder,
      !conversation.reachedStart, let target = Target(conversation.name)
    else { return }
    conversation.loadingOlder = true
    request(
      .history(target, count: Self.historyCount, anchor: before(conversation)),
      .older(target: conversation.name))
  }

  // MARK: - Input

  /// A line typed and sent with Enter.
  public func submit(_ input: String) {
    let line = input.trimmingSpaces
    guard !line.isEmpty else { return }
    if line.hasPrefix("/") && !line.hasPrefix("//") {
      command(String(line))
    } else {
      say(String(line.hasPrefix("//") ? line.dropFirst() : line), to: nil)
    }
  }

  func say(_ text: String, to name: String?) {
    guard let name = name ?? (model.currentIndex == nil ? nil : model.current.name),
      let target = Target(name)
    else {
      error("join a room first (/join #general) or write to someone (/msg @name text)")
      return
    }
    request(.say(target, text: text), .say(target: name, text: text))
  }

  /// `HISTORY`'s anchor for what comes before the oldest message loaded.
  func before(_ conversation: Conversation) -> HistoryAnchor? {
    conversation.oldestMessageID.flatMap(MessageID.init).map(HistoryAnchor.before)
  }

  private func command(_ line: String) {
    let words = line.split(separator: " ", maxSplits: 1)
    let name = words[0].lowercased()
    let rest = words.count > 1 ? String(words[1]).trimmingSpaces : ""
    let arguments = rest.split(separator: " ").map(String.init)
    switch name {
    case "/join", "/j":
      guard arguments.count == 1, RoomName(arguments[0]) != nil else {
        return usage("/join #room (# then a-z 0-9 . _ -)")
      }
      open(arguments[0], show: true)
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
        guard model.conversations.indices.contains(number - 1) else {
          return error("there is no conversation number \(number)")
        }
        model.switchTo(index: number - 1)
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
      }
      schedule(String(parts[1]), when: when)
    case "/every":
      let parts = rest.split(separator: " ", maxSplits: 1)
      guard parts.count == 2 else {
        return usage("/every RULE text, e.g. /every weekdays@09:00 stand-up")
      }
      repeatedly(String(parts[1]), rule: String(parts[0]))
    case "/reschedule":
      guard arguments.count == 2, let id = MessageID(arguments[0]) else {
        return usage("/reschedule ID WHEN (18:00, +10m, ...) or, for a series, ID RULE")
      }
      reschedule(id, to: arguments[1])
    case "/edit":
      let parts = rest.split(separator: " ", maxSplits: 1)
      guard parts.count == 2, let id = MessageID(parts[0]) else {
        return usage("/edit ID new text (see /scheduled)")
      }
      request(.edit(id, text: String(parts[1])), .edit(String(parts[0])))
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
    case "/who", "/names":
      guard let room = RoomName(arguments.first ?? model.current.name) else {
        return usage("/who #room")
      }
      request(.who(room), .who(room: room.description, shown: true))
    case "/rooms", "/list":
      request(.rooms(after: nil), .rooms(shown: true))
    case "/help", "/h", "/?":
      let width = Self.commands.map { $0.syntax.count }.max() ?? 0
      let lines = Self.commands.map {
        $0.syntax + String(repeating: " ", count: width - $0.syntax.count + 2) + $0.summary
      }
      notice(
        (["Type to talk in the conversation shown; Enter sends."] + lines + [
          "Keys: PageUp/PageDown scroll, Alt-1..9 switch, Tab completes, Up/Down recall.",
          "Start a line with // to send a line starting with /.",
        ]).joined(separator: "\n"))
    case "/quit", "/exit", "/q":
      quitRequested = true
    default:
      error("unknown command \(name); /help lists them")
    }
  }

  private func schedule(_ text: String, when: String) {
    let due: Timestamp
    do {
      due = try WhenParser.resolve(when, now: now(), timeZone: clock.timeZone)
    } catch {
      return self.error(localTimes(error.text))
    }
    schedule(text, due: due)
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
      full = try Recurrence.parse(rule, defaultZone: clock.timeZone, verb: .sayEvery).description
    } catch {
      return self.error(localTimes(error.text))
    }
    guard let target = Target(model.current.name) else { return }
    request(
      .sayEvery(target, rule: full, text: text), .sayEvery(target: target.description, text: text))
  }

  /// `/reschedule`: a `<when>` is resolved here like `/at`'s, a rule read
  /// like `/every`'s.
  private func reschedule(_ id: MessageID, to word: String) {
    let resolved: String
    do {
      if Recurrence.isRule(word) {
        resolved = try Recurrence.parse(word, defaultZone: clock.timeZone, verb: .reschedule)
          .description
      } else {
        resolved = try WhenParser.resolve(
          word, now: now(), timeZone: clock.timeZone, verb: .reschedule
        ).description
      }
    } catch {
      return self.error(error.text)
    }
    request(.reschedule(id, when: resolved), .reschedule(id.description))
  }

  private func usage(_ text: String) { error("usage: " + text) }

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

  private func error(_ text: String) {
    model.current.notice(text, time: now(), isError: true)
  }

  private func notice(_ text: String) {
    model.current.notice(text, time: now())
  }

  // MARK: - Broker lines

  /// One line from the broker: an event changes the model at once, a data
  /// line waits for its reply's final line, and a final reply (even one
  /// this client cannot read) answers the oldest request.
  public func handle(_ line: ServerLine) {
    guard case .event(let event) = line else {
      if line.isFinalReply { answered(line) }
      return
    }
    switch event {
    case .message:
      if let message = line.message, model.receive(message) { bell() }
    case .joined(let room, let user):
      guard let conversation = model.find(room.description) else { return }
      conversation.members.insert(user)
      model.knownUsers.insert(user)
      conversation.notice("\(user) joined", time: now())
    case .parted(let room, let user):
      guard let conversation = model.find(room.description) else { return }
      conversation.members.remove(user)
      conversation.notice("\(user) left", time: now())
    case .bye(let text):
      notice("the broker closed the connection: \(text)")
    case .markRead(let target, let id):
      // Another session of mine has seen this far.
      if let conversation = model.find(target.description) {
        model.markerMoved(in: conversation, to: id.description)
        if conversation.unread == 0 && conversation !== model.current {
          conversation.newLineAfter = nil
        }
      }
    case .hello:
      if !connected { resume() }
    case .scheduled where pending.first?.takesScheduledLines != true:
      // Changed in another session of mine.
      guard let item = line.scheduledMessage else { return }
      model.pending.insert(item.id)
      notice(
        "\(item.id) was changed in another session: due \(clock.shortDateTime(item.due, now: now())) "
          + "to \(item.target): \(item.text)")
    case .ok, .accepted, .error:
      answered(line)
    default:
      replyData.append(event)
    }
  }

  /// A final reply: it answers the oldest request waiting, with the data
  /// lines that came before it.
  private func answered(_ reply: ServerLine) {
    guard !pending.isEmpty else { return }
    let request = pending.removeFirst()
    let data = replyData
    replyData = []
    finish(request, reply, data)
  }

  /// The connection ended. Requests waiting for a reply are dropped (the
  /// next connection's replies must not be taken for theirs); messages
  /// among them are kept, to be sent again unless the broker has them.
  public func connectionLost() {
    guard connected else { return }
    connected = false
    for case .say(let target, let text) in pending {
      unsent.append((target, text, true))
    }
    pending = []
    replyData = []
    missedRequests = 0
    missedMine = [:]
    error("lost the connection to the broker; reconnecting")
  }

  /// A new connection said HELLO: join the rooms again, fetch what was
  /// missed in every open conversation (chatbroker(7), `HISTORY ... AFTER`),
  /// then send what could not be sent.
  private func resume() {
    connected = true
    notice("reconnected")
    for conversation in model.conversations {
      let name = conversation.name
      guard let target = Target(name) else { continue }
      if case .room(let room) = target {
        request(.join(room), .join(name))
        request(.who(room), .who(room: name, shown: false))
      }
      if let newest = conversation.newestMessageID {
        requestMissed(name, after: newest)
      } else {
        request(
          .history(target, count: Self.historyCount, anchor: nil),
          .history(target: name, shown: false))
      }
    }
    request(.scheduled(nil), .scheduled(shown: false))
    request(.conversations, .conversations(initial: false))
    if missedRequests == 0 { sendUnsent() }
  }

  func requestMissed(_ name: String, after id: String) {
    guard let target = Target(name), let id = MessageID(id) else { return }
    missedRequests += 1
    request(.history(target, count: 1000, anchor: .after(id)), .missed(target: name))
  }

  /// Sends the lines kept while disconnected, in order; one that was in
  /// flight and shows up in the missed history was delivered, and is not
  /// sent twice.
  private func sendUnsent() {
    let lines = unsent
    unsent = []
    for line in lines {
      if line.inFlight, let index = missedMine[line.target]?.firstIndex(of: line.text) {
        missedMine[line.target]?.remove(at: index)
        continue
      }
      say(line.text, to: line.target)
    }
    missedMine = [:]
  }

  private func short(_ text: String) -> Substring {
    text.count > 40 ? text.prefix(40) + "…" : Substring(text)
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
    case .say(let target, let text):
      guard case .event(.accepted(_, let id, let sent)) = reply else { return }
      if openOnDelivery.remove(target) != nil { open(target, show: true) }
      model.open(target).append(
        ChatMessage(target: target, id: id.description, time: sent, user: model.me, text: text))
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
    case .who(let room, let shown):
      let users = data.compactMap { line -> String? in
        if case .member(_, let user) = line { return user }
        return nil
      }
      model.knownUsers.formUnion(users)
      if let conversation = model.find(room) { conversation.members = Set(users) }
      if shown {
        notice(
          users.isEmpty
            ? "nobody is in \(room)" : "in \(room): " + users.joined(separator: ", "))
      }
    case .rooms(let shown):
      var lines: [String] = []
      var last: RoomName?
      for case .room(let room, let members, _) in data {
        model.knownRooms.insert(room.description)
        last = room
        lines.append("\(room)  \(members) \(members == 1 ? "person" : "people")")
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
        "series \(words[0]): \(words[2]), first \(clock.shortDateTime(due, now: time)) "
          + "(/scheduled lists, /cancel \(words[0]) ends it)", time: time)
    case .reschedule(let id), .edit(let id):
      guard let item = data.last.flatMap({ ServerLine.event($0).scheduledMessage }) else { return }
      model.pending.insert(id)
      let verb = if case .edit = request { "edited" } else { "rescheduled" }
      notice("\(verb) \(id): due \(clock.shortDateTime(item.due, now: time)): \(item.text)")
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
  private func failed(_ request: PendingRequest, code: String, text broker: String) {
    let text = localTimes(broker)
    switch request {
    case .join(let room):
      model.close(room)
      conversationsChanged(model.conversations.map(\.name))
      error("could not join \(room): \(text)")
    case .say(let target, let message), .sayAt(let target, let message):
      openOnDelivery.remove(target)
      let short = message.count > 40 ? message.prefix(40) + "…" : Substring(message)
      (model.find(target) ?? model.current).notice(
        "not sent to \(target): “\(short)”: \(text)", time: now(), isError: true)
    case .cancel(let id):
      error("could not cancel \(id): \(text)")
    case .reschedule(let id):
      error("could not reschedule \(id): \(text)")
    case .edit(let id):
      error("could not edit \(id): \(text)")
    case .sayEvery(let target, _):
      (model.find(target) ?? model.current).notice(
        "no series started in \(target): \(text)", time: now(), isError: true)
    case .conversations(let initial):
      // A broker before 1.2: the conversations open last time.
      guard initial else { return }
      for name in remembered { open(name, show: false) }
      welcomeIfEmpty()
    case .markRead:
      // Before 1.2 there are no markers; a message gone from the history
      // (NOSUCHMSG) is simply not marked.
      if code == "UNKNOWN" { markersSupported = false }
    case .older(let target):
      model.find(target)?.loadingOlder = false
      error(text)
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

  /// Pending messages as a table, times in the user's zone.
  func scheduledTable(_ items: [ScheduledMessage], now: Timestamp) -> String {
    let repeats = items.contains { $0.rule != nil }
    var rows = [["ID", "DUE", "CREATED", "TO"] + (repeats ? ["REPEATS"] : []) + ["TEXT"]]
    for item in items {
      rows.append(
        [
          item.id, clock.shortDateTime(item.due, now: now),
          clock.shortDateTime(item.created, now: now), item.target,
        ] + (repeats ? [item.rule.map { sanitized($0) } ?? "once"] : []) + [item.text])
    }
    let fixed = rows[0].count - 1
    var widths = [Int](repeating: 0, count: fixed)
    for row in rows {
      for column in 0..<fixed { widths[column] = max(widths[column], TextWidth.of(row[column])) }
    }
    return rows.map { row in
      (0..<fixed).map {
        row[$0] + String(repeating: " ", count: widths[$0] - TextWidth.of(row[$0]))
      }
      .joined(separator: "  ") + "  " + row[fixed]
    }.joined(separator: "\n")
  }

  // MARK: - Completion

  /// Candidates for Tab, by what the word before the cursor starts with.
  /// `line` is the whole input line, so that the id after `/cancel`,
  /// `/reschedule` and `/edit` completes from the pending ids.
  public func completions(for word: String, isFirst: Bool, line: String = "") -> [String] {
    if isFirst && word.hasPrefix("/") { return Self.commands.map(\.name) }
    let words = line.split(separator: " ", omittingEmptySubsequences: true)
    let takesID = ["/cancel", "/reschedule", "/edit"].contains(words.first?.lowercased() ?? "")
    if takesID && (words.count == 1 || (words.count == 2 && !line.hasSuffix(" "))) {
      return model.pending.sorted()
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

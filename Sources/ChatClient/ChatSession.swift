import Foundation
import LineProtocol

/// The chat screen's behaviour without the terminal: turns typed lines into
/// requests and broker lines into changes of the ``ChatModel``. The
/// terminal layer feeds it and draws the model.
///
/// This file holds the session's state and its connection: starting,
/// sending, reading broker lines, losing the connection and resuming. The
/// slash commands are in ChatSession+Commands.swift, what each reply does
/// in ChatSession+Replies.swift.
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
  public internal(set) var quitRequested = false
  public private(set) var connected = true
  /// What the status line says while disconnected (`reconnecting in 3s`),
  /// set by the terminal layer, which does the reconnecting.
  public var reconnectStatus: String?
  var pending: [PendingRequest] = []
  /// The data lines of the reply being read (`HIST`, `MEMBER`, ...).
  var replyData: [BrokerEvent] = []
  /// Lines typed, or sent and not acknowledged, when the connection was
  /// lost; sent after the reconnect unless the missed history shows them.
  var unsent: [(target: String, text: String, inFlight: Bool)] = []
  /// `HISTORY ... AFTER` requests of a reconnect not answered yet, and my
  /// own texts they brought, per conversation.
  var missedRequests = 0
  var missedMine: [String: [String]] = [:]
  /// Conversations open last time, saved here: opened when the broker
  /// cannot list mine (before 1.2), and direct ones kept open.
  var remembered: [String] = []
  var heldNotes: [String] = []
  /// Whether the broker knows `MARKREAD` (1.2 and later).
  var markersSupported = true
  /// Whether the broker knows `ACCESS` (1.4 and later).
  var accessSupported = true
  /// Direct conversations `/msg` opens once its message is delivered.
  var openOnDelivery: Set<String> = []
  /// The words of the last `/search` and where its next page starts, when
  /// older matches may follow: `/search` alone asks for them.
  var searchMore: (words: String, before: MessageID)?
  /// What a yes to the question just asked does (`/delete` alone asks
  /// first): the next line typed answers it, `y` or `yes` does it.
  var awaitingYes: (() -> Void)?

  public static let historyCount = 50
  /// How many next times `/scheduled ID` shows.
  public static let upcomingCount = 10
  /// Matches one `/search` shows.
  public static let searchCount = 20
  /// Replies one `/thread` shows.
  public static let threadCount = 50

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

  /// Asks for my pending messages again (``ChatModel/pending``, the count
  /// on the input line): the broker tells my other sessions of a change
  /// (`SCHED` events) but not of a `SAYAT` or `CANCEL` made elsewhere, so
  /// the screen asks every minute (chatsh(1)). Once at a time.
  public func refreshPending() {
    guard connected else { return }
    let asked = pending.contains {
      if case .scheduled = $0 { return true }
      return false
    }
    guard !asked else { return }
    request(.scheduled(nil), .scheduled(shown: false))
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

  func welcomeIfEmpty() {
    for text in heldNotes { model.current.notice(text, time: now()) }
    heldNotes = []
    guard model.conversations.isEmpty else { return }
    model.home.notice(
      "Welcome to chatsh, \(model.me). Join a room with /join #general, "
        + "or talk to someone with /msg @name hello. /help lists all commands.",
      time: now())
  }

  @discardableResult
  /// `restriction`: `/join #room group=GROUP|invite` creates the room
  /// private (chatbroker(7), "Private rooms").
  func open(
    _ name: String, show: Bool, count: Int = historyCount, restriction: RoomRestriction? = nil
  ) -> Conversation? {
    guard let target = Target(name) else {
      error("'\(name)' is not a room or user: use #room (a-z 0-9 . _ -) or @user")
      return nil
    }
    let name = target.description
    let isNew = model.find(name) == nil
    let conversation = model.open(name)
    if restriction != nil { conversation.isPrivate = true }
    if show { _ = model.switchTo(name) }
    guard isNew else { return conversation }
    if case .room(let room) = target {
      join(room, restriction: restriction)
    }
    request(.history(target, count: count, anchor: nil), .history(target: name, shown: false))
    conversationsChanged(model.conversations.map(\.name))
    return conversation
  }

  /// Joins `room` and asks who is in it and who may read it: a room
  /// someone else made private says so on the top line from the join on,
  /// as one this screen created does (chatbroker(7), `ACCESS`).
  func join(_ room: RoomName, restriction: RoomRestriction? = nil) {
    let name = room.description
    request(restriction.map { .joinPrivate(room, $0) } ?? .join(room), .join(name))
    request(.who(room), .who(room: name, shown: false))
    if accessSupported { request(.access(room), .access(room: name)) }
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
    if let yes = awaitingYes {
      awaitingYes = nil
      if ["y", "yes"].contains(line.lowercased()) { return yes() }
      notice("nothing taken back")
      return
    }
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
    // A line longer than a request holds goes as several messages, as
    // `say` sends it, rather than being refused (chatsh(1)); a text of
    // several lines (Alt-Enter, a paste) as one block, or as few as
    // `say --block` would.
    let pieces =
      MessageBlock.isBlock(text)
      ? BuildOutput.blocks(of: text, to: target) : BuildOutput.messages(saying: text, to: target)
    for piece in pieces {
      request(.say(target, text: piece), .say(target: name, text: piece))
    }
  }

  /// `HISTORY`'s anchor for what comes before the oldest message loaded.
  func before(_ conversation: Conversation) -> HistoryAnchor? {
    conversation.oldestMessageID.flatMap(MessageID.init).map(HistoryAnchor.before)
  }

  func error(_ text: String) {
    model.current.notice(text, time: now(), isError: true)
  }

  func notice(_ text: String) {
    model.current.notice(text, time: now())
  }

  func notice(_ table: NoticeTable) {
    model.current.notice(table, time: now())
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
      guard let message = line.message else { return }
      // Someone who writes is no longer away (as far as this screen knows).
      if !message.target.hasPrefix("#") { model.find(message.target)?.away = nil }
      if model.find(message.target) == nil {
        // A conversation opened by what arrives (someone writes to me)
        // loads its history like any other: until that reply is in, its
        // read marker cannot move (``seenBottom(of:)``).
        open(message.target, show: false)
      }
      if model.receive(message) { bell() }
    case .joined(let room, let user):
      guard let conversation = model.find(room.description) else { return }
      conversation.members.insert(user)
      model.knownUsers.insert(user)
      conversation.notice("\(user) joined", time: now())
    case .parted(let room, let user, _):
      guard let conversation = model.find(room.description) else { return }
      conversation.members.remove(user)
      conversation.notice("\(user) left", time: now())
    case .modeChanged(let room, let user, let changes):
      // An operator changed the room's modes (chatbroker(7), "Moderation").
      guard let conversation = model.find(room.description) else { return }
      conversation.notice(
        "\(user) set \(ModeChange.summary(changes).joined(separator: " "))", time: now())
    case .kicked(let room, let user, let by, let reason):
      guard let conversation = model.find(room.description) else { return }
      conversation.members.remove(user)
      let why = reason.map { ": \($0)" } ?? ""
      conversation.notice(
        "\(user == model.me ? "you were" : "\(user) was") removed by \(by)\(why)", time: now())
    case .invited(let room, _, let by):
      invited(to: room, by: by)
    case .topic(let room, _, _, _) where pending.first != .topic(room: room.description):
      topicArrived(event)
    case .away(let user, let text):
      let conversation = model.find("@" + user) ?? model.current
      conversation.away = text
      conversation.notice("\(user) is away: \(text)", time: now())
    case .redacted(let target, let id, let user):
      guard let conversation = model.find(target.description),
        conversation.remove(messageID: id.description)
      else { return }
      conversation.notice(
        "\(user == model.me ? "you" : user) took a message back", time: now())
    case .amended(let target, let id, _, let text):
      // In place, marked edited; nothing to say when it is not shown.
      _ = model.find(target.description)?.amend(messageID: id.description, text: text)
    case .reacted(let target, let id, let user, let reaction, let removed):
      // Only the count under the message changes: a reaction is not a
      // message, so it is not unread and rings nothing (chatbroker(7),
      // `REACT`); nothing to say when the message is not shown.
      model.find(target.description)?.react(
        messageID: id.description, user: user, reaction: reaction, removed: removed)
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
  /// missed in every open conversation (chatbroker(7), `HISTORY ... AFTER`)
  /// and the latest lines again, as many as are shown, for what changed on
  /// them meanwhile, then send what could not be sent.
  func resume() {
    connected = true
    notice("reconnected")
    for conversation in model.conversations {
      let name = conversation.name
      guard let target = Target(name) else { continue }
      if case .room(let room) = target { join(room) }
      if let newest = conversation.newestMessageID {
        requestMissed(name, after: newest)
        // What changed on the lines shown: edits, reactions, lines taken
        // back (``ChatModel/Conversation/refresh(_:)``).
        request(
          .history(target, count: min(conversation.messageCount, 1000), anchor: nil),
          .refresh(target: name))
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
  func sendUnsent() {
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

  /// `text` cut to 40 characters for a notice, a block's lines run on.
  func short(_ text: String) -> Substring {
    let text = ChatMessage.singleLine(text)
    return text.count > 40 ? text.prefix(40) + "…" : Substring(text)
  }

}

import LineProtocol

/// One open conversation: a room or a direct conversation with `@user`.
public final class Conversation {
  public let name: String
  /// Its window number, for Alt-1..9 and `/switch N`: kept while it is
  /// open, and at the next start (``ChatModel/keptNumbers``).
  public let number: Int
  public private(set) var entries: [Entry] = []
  private var messageIDs: Set<String> = []
  public var members: Set<String> = []
  /// Whether the other party of a direct conversation said they are away
  /// (an `AWAY` line), until they write again.
  public var away: String?
  /// A room's topic (chatbroker(7), `TOPIC`), as the broker last said.
  public var topic: RoomTopic?
  /// Whether the room is private (chatbroker(7), "Private rooms"), as
  /// `ACCESS` after the join or `ROOMS` last said, or as this screen
  /// created it: the top line says so.
  public var isPrivate = false
  public var unread = 0
  public var mentioned = false
  /// Rows scrolled back from the bottom (PageUp), 0 = following.
  public var scroll = 0
  /// Entries added at the bottom since the screen last drew this
  /// conversation: while scrolled back, the view moves up by their rows,
  /// so it stays still.
  public var appendedSinceDraw = 0
  /// Messages that arrived while scrolled back (`3 new ↓`).
  public var newBelow = 0
  /// Whether the oldest loaded row is in view (PageUp then loads more),
  /// a request for older messages is out, and none are left.
  public var atTop = false
  public var loadingOlder = false
  public var reachedStart = false
  /// Whether the first history reply is in (before it, the newest message
  /// known may be a live one, and marking it read would skip the rest).
  public var historyLoaded = false
  /// My read marker here, as the broker last said (chatbroker(7),
  /// `MARKREAD`), and the id last asked for.
  public var readMarker: String?
  public var markRequested: String?
  /// Where `── new ──` goes: above the first message by someone else
  /// after the message with this id (after none when "" or when that id
  /// is not loaded), never above my own lines or notices; nil for none.
  public var newLineAfter: String?

  public init(name: String, number: Int = 0) {
    self.name = name
    self.number = number
  }

  public var isRoom: Bool { name.hasPrefix("#") }

  /// The oldest message shown, the anchor for loading earlier history.
  public var oldestMessageID: String? {
    for entry in entries {
      if case .message(let message) = entry { return message.id }
    }
    return nil
  }

  /// Appends a message unless it is already here; `false` if it was.
  @discardableResult
  public func append(_ message: ChatMessage) -> Bool {
    guard messageIDs.insert(message.id).inserted else { return false }
    entries.append(.message(message))
    arrived(1)
    return true
  }

  /// History arrives after JOIN, so live messages may already be here: it
  /// goes before them, without duplicates, in the broker's order.
  public func prepend(history: [ChatMessage]) {
    let fresh = history.filter { messageIDs.insert($0.id).inserted }
    entries.insert(contentsOf: fresh.map(Entry.message), at: 0)
  }

  /// The newest message here, the anchor for fetching what was missed
  /// while disconnected (`HISTORY ... AFTER`).
  public var newestMessageID: String? {
    for entry in entries.reversed() {
      if case .message(let message) = entry { return message.id }
    }
    return nil
  }

  /// Messages fetched after a reconnect: each new one goes in time order
  /// among what is already here (after older lines, before live ones that
  /// arrived first), never twice. Returns the ones that were new.
  @discardableResult
  public func merge(_ messages: [ChatMessage]) -> [ChatMessage] {
    var fresh: [ChatMessage] = []
    for message in messages where messageIDs.insert(message.id).inserted {
      var index = entries.endIndex
      while index > entries.startIndex, entries[index - 1].time > message.time {
        index -= 1
      }
      entries.insert(.message(message), at: index)
      fresh.append(message)
    }
    arrived(fresh.count)
    return fresh
  }

  /// A message its author took back (chatbroker(7), `REDACT`) leaves the
  /// screen; its id stays known, so a later history cannot bring it back.
  @discardableResult
  public func remove(messageID id: String) -> Bool {
    guard
      let index = entries.firstIndex(where: {
        if case .message(let message) = $0 { message.id == id } else { false }
      })
    else { return false }
    entries.remove(at: index)
    appendedSinceDraw += 1
    return true
  }

  /// Message `id`, when shown, gets its author's new text (`AMEND`),
  /// marked edited; false when it is not shown.
  public func amend(messageID id: String, text: String) -> Bool {
    let shown = change(messageID: id) { message in
      message.text = text
      message.isEdited = true
    }
    if shown { appendedSinceDraw += 1 }
    return shown
  }

  /// Message `message.id`, when shown, as the broker now has it: its
  /// text, whether it was edited, its reactions. A message not shown is
  /// left alone: only what was missed is new (``merge(_:)``).
  public func refresh(_ message: ChatMessage) {
    var changed = false
    _ = change(messageID: message.id) { shown in
      guard
        shown.text != message.text || shown.isEdited != message.isEdited
          || shown.reactions != message.reactions
      else { return }
      shown.text = message.text
      shown.isEdited = message.isEdited
      shown.reactions = message.reactions
      changed = true
    }
    if changed { appendedSinceDraw += 1 }
  }

  /// How many messages are shown.
  public var messageCount: Int {
    entries.reduce(0) { count, entry in
      if case .message = entry { count + 1 } else { count }
    }
  }

  /// `user` put `reaction` on message `id`, when shown, or took it off
  /// (`removed`; chatbroker(7), `REACT`): only its count under the
  /// message changes; nothing is unread. False when it is not shown.
  @discardableResult
  public func react(messageID id: String, user: String, reaction: String, removed: Bool)
    -> Bool
  {
    change(messageID: id) { $0.react(user: user, reaction, removed: removed) }
  }

  /// Changes message `id` in place, when shown; false when it is not.
  private func change(messageID id: String, _ body: (inout ChatMessage) -> Void) -> Bool {
    guard
      let index = entries.firstIndex(where: {
        if case .message(let message) = $0 { message.id == id } else { false }
      }), case .message(var message) = entries[index]
    else { return false }
    body(&message)
    entries[index] = .message(message)
    return true
  }

  public func notice(_ text: String, time: Timestamp, isError: Bool = false) {
    entries.append(.notice(text, time: time, isError: isError))
    appendedSinceDraw += 1
  }

  public func notice(_ table: NoticeTable, time: Timestamp) {
    entries.append(.table(table, time: time))
    appendedSinceDraw += 1
  }

  /// The messages after the one with `id`; nil when it is not loaded.
  public func messages(after id: String) -> [ChatMessage]? {
    var found = false
    var after: [ChatMessage] = []
    for case .message(let message) in entries {
      if found { after.append(message) }
      if message.id == id { found = true }
    }
    return found ? after : nil
  }

  /// Switching to a conversation with unread messages: `── new ──` goes
  /// above the first of them. `me`'s own lines are never unread (they may
  /// come from another session of mine), so they are not counted.
  func markNewLine(me: String) {
    guard unread > 0 else {
      newLineAfter = nil
      return
    }
    var remaining = unread
    var previous: String?
    for case .message(let message) in entries.reversed() {
      if remaining == 0 {
        previous = message.id
        break
      }
      if message.user != me { remaining -= 1 }
    }
    newLineAfter = previous ?? ""
  }

  private func arrived(_ count: Int) {
    appendedSinceDraw += count
    if scroll > 0 { newBelow += count }
  }
}

/// The state of the chat screen: the open conversations, which one is shown,
/// what is known about rooms, users and pending scheduled messages.
public final class ChatModel {
  public var me: String
  public private(set) var conversations: [Conversation] = []
  public private(set) var currentIndex: Int?
  /// Shown when no conversation is open.
  public let home = Conversation(name: "chatsh")
  /// Ids of my scheduled messages still pending.
  public var pending: Set<String> = []
  public var knownRooms: Set<String> = []
  public var knownUsers: Set<String> = []
  /// `/ids`: each message shows its id, for `/delete ID` and the like.
  public var showIDs = false
  /// Window numbers of the last run (``StateStore/loadWindows()``): a
  /// conversation opened again at the start gets its number back, and no
  /// other takes it meanwhile, so Alt-N reaches the same room every time.
  /// Released once the start has opened what comes back
  /// (``releaseKeptNumbers()``).
  public var keptNumbers: [String: Int] = [:]

  public init(me: String) {
    self.me = me
  }

  public var current: Conversation { currentIndex.map { conversations[$0] } ?? home }

  public func find(_ name: String) -> Conversation? {
    conversations.first { $0.name == name }
  }

  /// The conversation named `name`, opened if needed with its number of
  /// last time, else the lowest one neither open nor kept for another;
  /// ``conversations`` stay in the order of their numbers.
  @discardableResult
  public func open(_ name: String) -> Conversation {
    if let existing = find(name) { return existing }
    let conversation = Conversation(name: name, number: freeNumber(for: name))
    let index =
      conversations.firstIndex { $0.number > conversation.number } ?? conversations.endIndex
    conversations.insert(conversation, at: index)
    if let current = currentIndex, current >= index { currentIndex = current + 1 }
    if name.hasPrefix("#") { knownRooms.insert(name) }
    if currentIndex == nil { currentIndex = index }
    return conversation
  }

  private func freeNumber(for name: String) -> Int {
    let open = Set(conversations.map(\.number))
    if let kept = keptNumbers[name], !open.contains(kept) { return kept }
    let kept = Set(keptNumbers.filter { $0.key != name }.values)
    var number = 1
    while open.contains(number) || kept.contains(number) { number += 1 }
    return number
  }

  /// The start has opened every conversation that comes back: a number
  /// kept for one that did not is free again.
  public func releaseKeptNumbers() {
    keptNumbers = [:]
  }

  /// The window numbers to keep for the next start: each open
  /// conversation's, and, before the start has released them, those kept
  /// for conversations not open yet.
  public var windowNumbers: [String: Int] {
    var numbers = keptNumbers
    for conversation in conversations { numbers[conversation.name] = conversation.number }
    return numbers
  }

  /// Closing a conversation gives its number up (the others keep theirs).
  public func close(_ name: String) {
    guard let index = conversations.firstIndex(where: { $0.name == name }) else { return }
    keptNumbers[name] = nil
    conversations.remove(at: index)
    if conversations.isEmpty {
      currentIndex = nil
    } else if let current = currentIndex, current >= index {
      currentIndex = max(current - 1, 0)
    }
  }

  public func switchTo(_ name: String) -> Bool {
    guard let index = conversations.firstIndex(where: { $0.name == name }) else { return false }
    switchTo(index: index)
    return true
  }

  /// Shows `name` as it is, counts and new line untouched: at the start,
  /// where the broker's read marker has placed them.
  public func show(_ name: String) {
    if let index = conversations.firstIndex(where: { $0.name == name }) { currentIndex = index }
  }

  /// Alt-N and `/switch N`: false when no conversation has that number.
  @discardableResult
  public func switchTo(number: Int) -> Bool {
    guard let index = conversations.firstIndex(where: { $0.number == number }) else {
      return false
    }
    switchTo(index: index)
    return true
  }

  public func switchTo(index: Int) {
    guard conversations.indices.contains(index) else { return }
    if currentIndex != index { conversations[index].markNewLine(me: me) }
    currentIndex = index
    conversations[index].unread = 0
    conversations[index].mentioned = false
  }

  /// A live message: stored, counted as unread unless shown or mine.
  /// Returns whether it is for me (a direct message, `@me`, or `me:` at
  /// the start), new, and not mine: then the bell rings.
  public func receive(_ message: ChatMessage) -> Bool {
    knownUsers.insert(message.user)
    if message.user == me { pending.remove(message.id) }
    let conversation = open(message.target)
    guard conversation.append(message), message.user != me else { return false }
    let forMe = isForMe(message)
    if conversation !== current {
      conversation.unread += 1
      if forMe { conversation.mentioned = true }
    }
    return forMe
  }

  /// A direct message to me, or one that mentions me (chatsh(1)).
  public func isForMe(_ message: ChatMessage) -> Bool {
    message.user != me && (message.target.hasPrefix("@") || isMention(message, of: me))
  }

  /// My read marker moved (here or in another session): what is after
  /// it, and not mine, is unread.
  public func markerMoved(in conversation: Conversation, to id: String) {
    conversation.readMarker = id
    guard conversation !== current else { return }
    let after = conversation.messages(after: id)?.filter { $0.user != me }
    guard let after else { return }
    conversation.unread = after.count
    conversation.mentioned = after.contains { isForMe($0) }
  }

  /// Messages fetched after a reconnect count as unread where they are
  /// not shown, like live ones (never my own).
  public func counted(_ messages: [ChatMessage], in conversation: Conversation) {
    guard conversation !== current else { return }
    for message in messages where message.user != me {
      knownUsers.insert(message.user)
      conversation.unread += 1
      if isForMe(message) { conversation.mentioned = true }
    }
  }

  /// Every open conversation, numbered as Alt-1..9 and `/switch N` reach
  /// them, with its activity: the window list of the top line.
  public var windows: [(number: Int, name: String, unread: Int, mentioned: Bool, isCurrent: Bool)] {
    conversations.enumerated().map { index, conversation in
      (
        conversation.number, conversation.name, conversation.unread, conversation.mentioned,
        index == currentIndex
      )
    }
  }

  /// The window list as the top line shows it, in at most `width` columns
  /// (chatsh(1), "The chat screen"): every conversation with its number,
  /// the one shown in brackets, unread counts after the name and `!` for a
  /// message for me, `1:#ops 2:@cat 2! [3:#team]`. When that is too wide,
  /// only those with activity, `Act: 2:@cat 2!`; then only their numbers,
  /// `Act: 2!,5`. Empty when only one conversation is open and it has none.
  public func windowList(fitting width: Int) -> String {
    let windows = self.windows
    guard windows.count > 1 || windows.contains(where: { $0.unread > 0 }) else { return "" }
    func activity(
      _ window: (number: Int, name: String, unread: Int, mentioned: Bool, isCurrent: Bool)
    )
      -> String
    {
      window.unread > 0 ? " \(window.unread)\(window.mentioned ? "!" : "")" : ""
    }
    let all = windows.map { window in
      let label = "\(window.number):\(sanitized(window.name))"
      return (window.isCurrent ? "[\(label)]" : label) + activity(window)
    }.joined(separator: " ")
    if TextWidth.of(all) <= width { return all }
    let active = windows.filter { $0.unread > 0 && !$0.isCurrent }
    guard !active.isEmpty else { return "" }
    let named =
      "Act: "
      + active.map { "\($0.number):\(sanitized($0.name))" + activity($0) }.joined(separator: " ")
    if TextWidth.of(named) <= width { return named }
    return "Act: " + active.map { "\($0.number)\($0.mentioned ? "!" : "")" }.joined(separator: ",")
  }

  /// Conversations in the order Alt-1..9 reach them, with unread counts.
  public var otherUnread: [(name: String, unread: Int, mentioned: Bool)] {
    conversations.filter { $0 !== current && $0.unread > 0 }.map {
      ($0.name, $0.unread, $0.mentioned)
    }
  }
}

import LineProtocol

/// A user's read position in one conversation: the message id they gave,
/// and that message's place in the history. Places only grow, so the
/// marker stays comparable with every later message (also a scheduled one
/// delivered after it with a smaller id) and after its own message has
/// been dropped from a full history.
struct ReadMarker: Equatable {
  var id: MessageID
  var sequence: Int
  /// When it was set, for the journal.
  var time: Timestamp
}

/// What is new for one user in one conversation (chatbroker(7), "Your
/// conversations").
struct UnreadCount: Equatable {
  /// Messages after the read marker not written by the user.
  var unread = 0
  /// Of those, the ones that mention the user, or all in a direct
  /// conversation.
  var mentions = 0
}

extension Engine {
  /// `CONVERSATIONS`: one `CONV` line per conversation of the user's, by
  /// target name, then `OK CONVERSATIONS <count>`. The counts are kept up
  /// to date as messages arrive, so the reply costs one line per
  /// conversation however long the histories are.
  func listConversations(connection: ConnectionID, user: String) {
    let entries = (unreadByUser[user] ?? [:]).map { conversation, count in
      (target: conversation.target(seenBy: user), conversation: conversation, count: count)
    }.sorted { $0.target.description < $1.target.description }
    // A conservative test: any record not synced yet may be shown.
    let kinds = listKinds(answering: .conversations, showsUnsynced: unsynced.count > 0)
    for entry in entries {
      let history = histories[entry.conversation]
      let newest = history.flatMap { $0.newest }.map { (id: $0.id, time: $0.time) }
      let summary = ConversationSummary(
        target: entry.target, newest: newest,
        read: readMarkers[user]?[entry.conversation]?.id, unread: entry.count.unread,
        mentions: entry.count.mentions)
      send(.conversation(summary), to: connection, kind: kinds.item)
    }
    send(.ok(.conversations, fields: [String(entries.count)]), to: connection, kind: kinds.end)
  }

  // MARK: - Keeping the counts

  /// The users a conversation belongs to: a room's holders, or both
  /// parties of a direct conversation.
  func holders(of conversation: ConversationKey) -> [String] {
    switch conversation {
    case .room(let name): holdersByRoom[name].map(Array.init) ?? []
    case .direct(let first, let second): first == second ? [first] : [first, second]
    }
  }

  /// Whether anyone counts this conversation's messages: a direct
  /// conversation always, a room once it is someone's.
  func hasHolders(_ conversation: ConversationKey) -> Bool {
    guard case .room(let name) = conversation else { return true }
    return holdersByRoom[name] != nil
  }

  /// A message entered (`delta` 1) or left (`delta` -1) a conversation's
  /// history at `sequence`: each holder's counts change when it is after
  /// their marker and not their own. Runs for every delivered message, so
  /// it walks the holders in place and reads the text for mentions at most
  /// once.
  func countMessage(
    _ message: StoredMessage, at sequence: Int, in conversation: ConversationKey, by delta: Int
  ) {
    func adjust(_ user: String, mentions: () -> Bool) {
      guard user != message.author, unreadByUser[user]?[conversation] != nil else { return }
      if let marker = readMarkers[user]?[conversation], sequence <= marker.sequence { return }
      let mentioned = mentions()
      unreadByUser[user]?[conversation]?.unread += delta
      if mentioned { unreadByUser[user]?[conversation]?.mentions += delta }
    }
    switch conversation {
    case .room(let name):
      guard let holders = holdersByRoom[name] else { return }
      var names: Set<Substring>?
      for user in holders {
        adjust(user) {
          if names == nil { names = Mentions.names(in: message.text) }
          return names?.contains(Substring(user)) == true
        }
      }
    case .direct(let first, let second):
      adjust(first) { true }
      if second != first { adjust(second) { true } }
    }
  }

  /// Counts a user's conversation afresh from their marker: when it
  /// became theirs, or the marker moved. One history, at most its
  /// capacity.
  func recount(_ conversation: ConversationKey, for user: String) {
    guard unreadByUser[user]?[conversation] != nil else { return }
    var count = UnreadCount()
    if let history = histories[conversation] {
      let after = readMarkers[user]?[conversation].map { $0.sequence + 1 } ?? 0
      var names: Set<Substring> = []
      let isDirect = if case .direct = conversation { true } else { false }
      for sequence in max(after, history.firstSequence)..<history.endSequence {
        let message = history[sequence]
        guard message.author != user else { continue }
        count.unread += 1
        if isDirect {
          count.mentions += 1
        } else {
          names = Mentions.names(in: message.text)
          if names.contains(Substring(user)) { count.mentions += 1 }
        }
      }
    }
    unreadByUser[user]?[conversation] = count
  }

  /// A direct conversation got its first message: it becomes one of both
  /// parties' conversations.
  func addDirectConversation(_ conversation: ConversationKey) {
    guard case .direct = conversation else { return }
    for user in holders(of: conversation) where unreadByUser[user]?[conversation] == nil {
      unreadByUser[user, default: [:]][conversation] = UnreadCount()
    }
  }

  /// A direct conversation lost its only message (a rollback).
  func removeDirectConversation(_ conversation: ConversationKey) {
    guard case .direct = conversation else { return }
    for user in holders(of: conversation) {
      unreadByUser[user]?[conversation] = nil
      if unreadByUser[user]?.isEmpty == true { unreadByUser[user] = nil }
    }
  }

  // MARK: - Rooms that stay yours

  /// The room becomes one of the user's rooms.
  func addHolder(_ user: String, of room: RoomName, since time: Timestamp) {
    roomsByUser[user, default: [:]][room] = time
    holdersByRoom[room, default: []].insert(user)
    unreadByUser[user, default: [:]][.room(room)] = UnreadCount()
    recount(.room(room), for: user)
  }

  /// The room stops being one of the user's rooms; its read marker stays,
  /// for when it becomes theirs again.
  func removeHolder(_ user: String, of room: RoomName) {
    roomsByUser[user]?[room] = nil
    if roomsByUser[user]?.isEmpty == true { roomsByUser[user] = nil }
    holdersByRoom[room]?.remove(user)
    if holdersByRoom[room]?.isEmpty == true { holdersByRoom[room] = nil }
    unreadByUser[user]?[.room(room)] = nil
    if unreadByUser[user]?.isEmpty == true { unreadByUser[user] = nil }
  }

  func isHolder(_ user: String, of room: RoomName) -> Bool {
    roomsByUser[user]?[room] != nil
  }
}

/// Who a message mentions (chatbroker(7), "Your conversations"): every
/// `@name` that stands as a word, and a `name:` the text starts with.
enum Mentions {
  static func names(in text: String) -> Set<Substring> {
    var names: Set<Substring> = []
    let utf8 = text.utf8
    // `name:` at the very start.
    var index = utf8.startIndex
    while index != utf8.endIndex, isNameByte(utf8[index]) { index = utf8.index(after: index) }
    if index != utf8.startIndex, index != utf8.endIndex, utf8[index] == UInt8(ascii: ":") {
      names.insert(Substring(utf8[utf8.startIndex..<index]))
    }
    // `@name`, not inside a word (`me@host` is no mention), ending at a
    // byte that is no name byte; a trailing `.` or `-` ends a sentence,
    // not the name (`thanks @bob.`).
    var previous: UInt8?
    index = utf8.startIndex
    while index != utf8.endIndex {
      let byte = utf8[index]
      let next = utf8.index(after: index)
      if byte == UInt8(ascii: "@"), previous.map({ !isNameByte($0) }) ?? true {
        var end = next
        while end != utf8.endIndex, isNameByte(utf8[end]) { end = utf8.index(after: end) }
        var last = end
        while last != next {
          let before = utf8.index(last, offsetBy: -1)
          guard utf8[before] == UInt8(ascii: ".") || utf8[before] == UInt8(ascii: "-") else {
            break
          }
          last = before
        }
        if last != next { names.insert(Substring(utf8[next..<last])) }
        previous = nil
        index = end
        if end != next { previous = utf8[utf8.index(end, offsetBy: -1)] }
        continue
      }
      previous = byte
      index = next
    }
    return names
  }

  /// A byte a login name may hold (chatbroker(7), "Names").
  private static func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."),
      UInt8(ascii: "-"), UInt8(ascii: "$"):
      true
    default: false
    }
  }
}

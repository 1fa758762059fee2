import Glibc
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
  /// When its message was delivered, for IRC's `MARKREAD`; nil when the
  /// message was no longer kept as the marker was replayed.
  var delivered: Timestamp?
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
  /// target name, then `OK CONVERSATIONS <count>`. Each conversation's
  /// counts come from its history's index by binary search, so the reply
  /// costs a few steps per conversation however long the histories are.
  func listConversations(connection: ConnectionID, user: String) {
    // Each name is spelled once, not in every comparison of the sort.
    let entries = (conversationsByUser[user] ?? []).map { conversation in
      let target = conversation.target(seenBy: user)
      return (name: target.description, target: target, conversation: conversation)
    }.sorted { $0.name < $1.name }
    // A conservative test: any record not synced yet may be shown.
    let kinds = listKinds(answering: .conversations, showsUnsynced: unsynced.count > 0)
    let markers = readMarkers[user] ?? [:]
    for entry in entries {
      let history = histories[entry.conversation]
      let marker = markers[entry.conversation]
      let isDirect = if case .direct = entry.conversation { true } else { false }
      let count =
        history?.unread(for: user, after: marker?.sequence, direct: isDirect) ?? UnreadCount()
      let summary = ConversationSummary(
        target: entry.target, newest: history?.newest.map { (id: $0.id, time: $0.time) },
        read: marker?.id, unread: count.unread, mentions: count.mentions)
      send(.conversation(summary), to: connection, kind: kinds.item)
    }
    send(.ok(.conversations, fields: [String(entries.count)]), to: connection, kind: kinds.end)
  }

  /// Both parties of a direct conversation (one, when it is a user's own).
  private func parties(of conversation: ConversationKey) -> [String] {
    guard case .direct(let first, let second) = conversation else { return [] }
    return first == second ? [first] : [first, second]
  }

  /// A direct conversation got its first message: it becomes one of both
  /// parties' conversations.
  func addDirectConversation(_ conversation: ConversationKey) {
    for user in parties(of: conversation) {
      conversationsByUser[user, default: []].insert(conversation)
    }
  }

  /// A direct conversation lost its only message (a rollback).
  func removeDirectConversation(_ conversation: ConversationKey) {
    for user in parties(of: conversation) { removeConversation(conversation, of: user) }
  }

  private func removeConversation(_ conversation: ConversationKey, of user: String) {
    conversationsByUser[user]?.remove(conversation)
    if conversationsByUser[user]?.isEmpty == true { conversationsByUser[user] = nil }
  }

  // MARK: - Rooms that stay yours

  /// The room becomes one of the user's rooms.
  func addHolder(_ user: String, of room: RoomName, since time: Timestamp) {
    roomsByUser[user, default: [:]][room] = time
    holdersByRoom[room, default: []].insert(user)
    conversationsByUser[user, default: []].insert(.room(room))
  }

  /// The room stops being one of the user's rooms; its read marker stays,
  /// for when it becomes theirs again.
  func removeHolder(_ user: String, of room: RoomName) {
    roomsByUser[user]?[room] = nil
    if roomsByUser[user]?.isEmpty == true { roomsByUser[user] = nil }
    holdersByRoom[room]?.remove(user)
    if holdersByRoom[room]?.isEmpty == true { holdersByRoom[room] = nil }
    removeConversation(.room(room), of: user)
  }

  func isHolder(_ user: String, of room: RoomName) -> Bool {
    roomsByUser[user]?[room] != nil
  }
}

/// Who a message mentions (chatbroker(7), "Your rooms and read markers"): every
/// `@name` that stands as a word, and a `name:` the text starts with.
enum Mentions {
  static func names(in text: String) -> Set<Substring> {
    // Most lines mention nobody: without an `@`, only a leading `name:`
    // can be one. Every message of a replay passes here (measured: a
    // tenth of start-up on a million records before this check), and
    // memchr finds neither byte faster than a loop finds the end of a
    // first word.
    let mayMention =
      text.utf8.withContiguousStorageIfAvailable { bytes in
        guard let base = bytes.baseAddress else { return false }
        if memchr(base, Int32(UInt8(ascii: "@")), bytes.count) != nil { return true }
        if memchr(base, Int32(UInt8(ascii: ":")), bytes.count) == nil { return false }
        var index = 0
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        return index > 0 && index < bytes.count && bytes[index] == UInt8(ascii: ":")
      } ?? true
    guard mayMention else { return [] }
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

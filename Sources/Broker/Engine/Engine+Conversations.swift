import Glibc
import LineProtocol

extension Engine {
  /// `CONVERSATIONS`: one `CONV` line per conversation of the user's, by
  /// target name, then `OK CONVERSATIONS <count>`. Each conversation's
  /// counts come from its history's index by binary search, so the reply
  /// costs a few steps per conversation however long the histories are.
  func listConversations(connection: ConnectionID, user: String) {
    // Each name is spelled once, not in every comparison of the sort.
    // A room the user may not read is none of theirs (chatbroker(7),
    // "Private rooms"), even before their next JOIN takes it from them.
    let readable = (conversationsByUser[user] ?? []).filter { conversation in
      guard case .room(let name) = conversation else { return true }
      return mayRead(name, user: user)
    }
    let entries = readable.map { conversation in
      let target = conversation.target(seenBy: user)
      return (name: target.description, target: target, conversation: conversation)
    }.sorted { $0.name < $1.name }
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
      send(.conversation(summary), to: connection)
    }
    send(.ok(.conversations, fields: [String(entries.count)]), to: connection)
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

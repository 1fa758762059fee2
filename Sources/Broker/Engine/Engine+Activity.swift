import LineProtocol

extension Engine {
  /// The conversations `user` takes part in (the rooms they have a session
  /// in, and their direct conversations) that have a message strictly
  /// between `after` and `before`, each with the time of its newest such
  /// message, oldest first, at most `limit`. For the IRC gateway's
  /// `CHATHISTORY TARGETS` (chatbroker(7), "IRC"). Messages not synced yet
  /// are left out: a reply shows only what is durable.
  public func activeConversations(
    of user: String, after: Timestamp, before: Timestamp, limit: Int
  ) -> [ConversationActivity] {
    var found: [ConversationActivity] = []
    for (conversation, history) in histories {
      switch conversation {
      case .room(let name):
        guard rooms[name]?.sessionsByUser[user] != nil, mayRead(name, user: user) else { continue }
      case .direct(let first, let second):
        guard first == user || second == user else { continue }
      }
      let synced = history.endSequence - (unsynced.messages[conversation] ?? 0)
      guard let newest = history.newestTime(after: after, before: before, endBefore: synced)
      else { continue }
      found.append(ConversationActivity(target: conversation.target(seenBy: user), latest: newest))
    }
    found.sort { ($0.latest, $0.target.description) < ($1.latest, $1.target.description) }
    return Array(found.prefix(max(0, limit)))
  }
}

import LineProtocol

/// `SEARCH` (chatbroker(7), `SEARCH`): the messages a user may read that
/// hold every word asked for, newest first, a page at a time. Each
/// conversation's ``SearchIndex`` gives the postings of its rarest word,
/// the candidates, walked newest first and checked against the other
/// words' postings by binary search; a heap merges the conversations by
/// time. A request examines at most ``Limits/searchCandidates``
/// candidates, so however common its words, one request costs a bounded
/// slice of the serving thread (fair turns do the rest, chatbroker(7),
/// "Limits"); where it stopped is the anchor of the next page.
extension Engine {
  /// Where a message stands in the order `SEARCH` answers in: newest
  /// first by delivery time, then by id.
  struct SearchKey: Comparable {
    let time: Timestamp
    let id: MessageID

    init(time: Timestamp, id: MessageID) {
      (self.time, self.id) = (time, id)
    }

    init(_ message: StoredMessage) {
      (time, id) = (message.time, message.id)
    }

    static func < (left: SearchKey, right: SearchKey) -> Bool {
      (left.time, left.id) < (right.time, right.id)
    }
  }

  /// One conversation's candidates: the postings of its rarest word,
  /// walked from `position` down to `lowest`, the first of a kept message
  /// (those below are of messages dropped, SearchIndex); the other words'
  /// postings check them.
  private struct SearchStream {
    let conversation: ConversationKey
    let candidates: Postings
    let others: [Postings]
    let lowest: Int
    var position: Int

    func matches(_ sequence: Int) -> Bool {
      others.allSatisfy { $0.contains(sequence: sequence) }
    }
  }

  /// A stream's next candidate in the heap; ties go to the later stream,
  /// so the order is the same on every page.
  private struct SearchHead: Comparable {
    let key: SearchKey
    let stream: Int

    static func < (left: SearchHead, right: SearchHead) -> Bool {
      (left.key, left.stream) < (right.key, right.stream)
    }
  }

  /// The candidates examined since the last call: the shell charges them
  /// to the turn of the connection that searched (Server+Turns), so a
  /// flood of costly searches gets fewer requests a turn.
  public func takeSearchWork() -> Int {
    defer { searchWork = 0 }
    return searchWork
  }

  func search(
    _ target: Target?, count: Int, before: MessageID?, words text: String,
    connection: ConnectionID, user: String
  ) {
    let words: [String]
    switch SearchWords.request(text) {
    case .success(let found): words = found
    case .failure(let problem):
      fail(.search, problem.code, problem.text, to: connection)
      return
    }
    let conversations = searchable(target, by: user)
    let unindexed = finishWordIndex(of: conversations)
    guard unindexed == 0 else {
      fail(
        .search, .limit,
        "the search index is still being built after start-up (\(unindexed) messages to go);"
          + " try again in a moment",
        to: connection)
      return
    }
    var bound: SearchKey?
    if let before {
      bound =
        conversations.lazy.compactMap { conversation in
          self.histories[conversation].flatMap { history in
            history.sequence(of: before).map { SearchKey(history[$0]) }
          }
        }.first
      guard bound != nil else {
        fail(
          .search, .noSuchMessage,
          "no message \(before) among those you can search in \(target?.description ?? "*")",
          to: connection)
        return
      }
    }
    let limit = min(max(count, 1), Request.maximumSearchResults)
    let found = searchPage(words, in: conversations, before: bound, limit: limit)
    for (conversation, sequence) in found.results {
      guard let message = histories[conversation]?[sequence] else { continue }
      send(historyLine(message, target: conversation.target(seenBy: user)), to: connection)
    }
    var fields = [target?.description ?? "*", String(found.results.count)]
    if let more = found.more { fields += ["MORE", more.description] }
    send(.ok(.search, fields: fields), to: connection)
  }

  /// The conversations `user` may search: the one `target` names, or with
  /// `*` every room they may read (``mayRead(_:user:)``) and their direct
  /// conversations. A room they may not read is searched as an empty one:
  /// the answer is the same as for a room that does not exist.
  private func searchable(_ target: Target?, by user: String) -> [ConversationKey] {
    if let target {
      let conversation = ConversationKey(target: target, author: user)
      if case .room(let name) = conversation, !mayRead(name, user: user) { return [] }
      return [conversation]
    }
    var conversations: [ConversationKey] = []
    for name in rooms.keys where histories[.room(name)] != nil && mayRead(name, user: user) {
      conversations.append(.room(name))
    }
    for conversation in conversationsByUser[user] ?? [] {
      if case .direct = conversation { conversations.append(conversation) }
    }
    return conversations
  }

  /// One page: the matches older than `bound`, newest first, at most
  /// `limit`, and the id to go on from when more candidates are left.
  private func searchPage(
    _ words: [String], in conversations: [ConversationKey], before bound: SearchKey?, limit: Int
  ) -> (results: [(ConversationKey, Int)], more: MessageID?) {
    var streams: [SearchStream] = []
    var heap = MaxHeap<SearchHead>()
    for conversation in conversations {
      guard let history = histories[conversation],
        var lists = history.postings(of: words)
      else { continue }
      let first = history.firstSequence
      let kept = { (list: Postings) in list.count - list.firstPosition(notBelow: first) }
      let rarest = lists.indices.min { kept(lists[$0]) < kept(lists[$1]) }!
      let candidates = lists.remove(at: rarest)
      let lowest = candidates.firstPosition(notBelow: first)
      var position = candidates.count - 1
      if let bound {
        // The first candidate at or after the bound, by binary search:
        // a history is in time order but where a clock was set back.
        var (low, high) = (lowest, candidates.count)
        while low < high {
          let middle = (low + high) / 2
          if history.searchKey(at: candidates[middle]) < bound {
            low = middle + 1
          } else {
            high = middle
          }
        }
        position = low - 1
      }
      guard position >= lowest else { continue }
      heap.push(SearchHead(key: history.searchKey(at: candidates[position]), stream: streams.count))
      streams.append(
        SearchStream(
          conversation: conversation, candidates: candidates, others: lists, lowest: lowest,
          position: position))
    }
    var results: [(ConversationKey, Int)] = []
    var examined = 0
    var last: MessageID?
    while results.count < limit, examined < limits.searchCandidates,
      let head = heap.popMax()
    {
      examined += 1
      let stream = streams[head.stream]
      let sequence = stream.candidates[stream.position]
      // Out of time order, a candidate can lie past the bound: skipped,
      // so that every page ends older than the one before.
      if bound.map({ head.key < $0 }) ?? true {
        last = head.key.id
        if stream.matches(sequence) { results.append((stream.conversation, sequence)) }
      }
      streams[head.stream].position -= 1
      if stream.position > stream.lowest, let history = histories[stream.conversation] {
        heap.push(
          SearchHead(
            key: history.searchKey(at: stream.candidates[stream.position - 1]),
            stream: head.stream))
      }
    }
    searchWork += examined
    return (results, heap.isEmpty ? nil : last)
  }
}

/// The word index of the histories replayed at start-up, built after it
/// (chatbroker(7), `SEARCH`). Replay leaves each history's words out:
/// indexing them costs microseconds a message, seconds for a journal of a
/// million worded messages, and the broker should serve first. The shell
/// then asks for a slice each pass (``indexWords(messages:)``) until none
/// is left; a `SEARCH` that needs a history not indexed yet finishes it
/// on the spot when that is a search's worth of work, and is told to come
/// back otherwise (``finishWordIndex(of:)``).
extension Engine {
  /// Whether some history still has messages out of the word index.
  public var hasWordsToIndex: Bool { !historiesToIndex.isEmpty }

  /// Indexes the words of at most `messages` more messages, the histories
  /// in turn; returns how many it indexed.
  @discardableResult
  public func indexWords(messages: Int) -> Int {
    var indexed = 0
    while indexed < messages, let conversation = historiesToIndex.first {
      indexed += histories[conversation]?.indexWords(upTo: messages - indexed) ?? 0
      dropIndexedHistories()
    }
    return indexed
  }

  /// Takes the histories that need no more indexing (done, gone, or
  /// finished by a search) off the front of the queue.
  private func dropIndexedHistories() {
    while let first = historiesToIndex.first, histories[first]?.wordsComplete ?? true {
      _ = historiesToIndex.popFirst()
    }
  }

  /// Replay is over: every history it made waits for its words.
  func queueWordIndexing() {
    replayDefersWords = false
    historiesToIndex = FIFOQueue()
    for (conversation, history) in histories where !history.wordsComplete {
      historiesToIndex.append(conversation)
    }
  }

  /// Makes the word index of `conversations` complete, if that is at most
  /// a search's candidates of work (``Limits/searchCandidates``, counted
  /// as such); returns how many messages are left out when it is more.
  func finishWordIndex(of conversations: [ConversationKey]) -> Int {
    let missing = conversations.reduce(0) { $0 + (histories[$1]?.unindexedCount ?? 0) }
    guard missing > 0 else { return 0 }
    guard missing <= limits.searchCandidates else { return missing }
    for conversation in conversations { histories[conversation]?.indexWords(upTo: .max) }
    searchWork += missing
    dropIndexedHistories()
    return 0
  }
}

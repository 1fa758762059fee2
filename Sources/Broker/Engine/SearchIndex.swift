/// Which kept messages of one history hold each word (``SearchWords``), as
/// sequence numbers, oldest first: the inverted index `SEARCH` reads
/// (chatbroker(7), `SEARCH`). ``History`` keeps it in step with every
/// change of its messages, so a message is indexed from the moment it is
/// kept (by delivery or replay) until it leaves: rolled back or taken back,
/// when its words go at once, or dropped from the front of a full history,
/// when its postings stay behind until a sweep (``forget(below:kept:)``).
/// A search reads only the postings of kept messages, which lie above the
/// history's first sequence number; finding an old message's words again
/// to remove them was a quarter of a full history's append (`perf record`,
/// fan-out to 10), and a sweep once a quarter of the kept messages have
/// left costs a visit of each word instead.
///
/// In memory, not an SQLite FTS5 table: the history it indexes is in
/// memory already, so the index adds only its postings and not a second
/// copy of every text; a message taken back leaves no word behind in a
/// file (an FTS5 database would need `secure_delete` and would keep words
/// in its free pages and its write-ahead log until overwritten); and a
/// rollback after a failed sync undoes it with the history, in the same
/// step, with no transaction of its own to keep in line with the journal.
/// `chatbench search` measures it (README, "Search").
struct SearchIndex: Sendable {
  private var postings: [String: Postings] = [:]
  /// Every posting from this sequence number on is held; none below it.
  private var heldFrom = 0

  /// The postings of each of `words`, or nil when one of them is in no
  /// kept message.
  func postings(of words: [String]) -> [Postings]? {
    var lists: [Postings] = []
    lists.reserveCapacity(words.count)
    for word in words {
      guard let list = postings[word] else { return nil }
      lists.append(list)
    }
    return lists
  }

  /// A message entered the history as its newest, at `sequence`.
  mutating func addNewest(_ message: StoredMessage, at sequence: Int) {
    for word in Self.words(of: message) { add(word, sequence) { $0.append(sequence) } }
  }

  /// The history keeps the messages from `firstSequence` on, `kept` of
  /// them: the postings of those before are swept out once a quarter as
  /// many have left (and at least 64).
  mutating func forget(below firstSequence: Int, kept: Int) {
    guard firstSequence - heldFrom > max(kept / 4, 64) else { return }
    var emptied: [String] = []
    var index = postings.startIndex
    while index != postings.endIndex {
      while let first = postings.values[index].first, first < firstSequence {
        postings.values[index].removeFirst()
      }
      if postings.values[index].isEmpty { emptied.append(postings.keys[index]) }
      index = postings.index(after: index)
    }
    for word in emptied { postings[word] = nil }
    heldFrom = firstSequence
  }

  /// Whether the postings of `message` at `sequence` are held: a message
  /// dropped and then put back (a rollback) left them unless a sweep
  /// took them.
  func holds(_ message: StoredMessage, at sequence: Int) -> Bool {
    guard sequence >= heldFrom, let word = Self.words(of: message).first else { return false }
    return postings[word]?.contains(sequence: sequence) == true
  }

  /// The newest message was taken back out (a rollback).
  mutating func removeNewest(_ message: StoredMessage) {
    for word in Self.words(of: message) { change(word) { $0.removeLast() } }
  }

  /// A dropped message was put back as the oldest (a rollback), its
  /// postings in their place unless they are still there.
  mutating func addOldest(_ message: StoredMessage, at sequence: Int) {
    guard !holds(message, at: sequence) else { return }
    heldFrom = min(heldFrom, sequence)
    for word in Self.words(of: message) { add(word, sequence) { $0.insert(sequence) } }
  }

  /// The message at `sequence` became `new` (a redaction, or its rollback):
  /// the words only the old one had leave, the new one's come in, in place.
  mutating func replace(_ old: StoredMessage, with new: StoredMessage, at sequence: Int) {
    for word in Self.words(of: old) { change(word) { $0.remove(sequence) } }
    for word in Self.words(of: new) { add(word, sequence) { $0.insert(sequence) } }
  }

  /// How many words are indexed, for tests.
  var wordCount: Int { postings.count }

  /// A message taken back has no words, whatever its text was.
  private static func words(of message: StoredMessage) -> [String] {
    message.isRedacted ? [] : SearchWords.words(in: message.text)
  }

  /// Adds `sequence` to one word's postings with `body`, or starts them
  /// with it when the word is new to this history.
  private mutating func add(
    _ word: String, _ sequence: Int, _ body: (inout Postings) -> Void
  ) {
    if let index = postings.index(forKey: word) {
      body(&postings.values[index])
    } else {
      postings[word] = Postings(sequence)
    }
  }

  /// Changes one word's postings in place, and forgets the word with its
  /// last posting, so that no word of a message that left stays as a key.
  private mutating func change(_ word: String, _ body: (inout Postings) -> Void) {
    guard let index = postings.index(forKey: word) else { return }
    body(&postings.values[index])
    if postings.values[index].isEmpty { postings.remove(at: index) }
  }
}

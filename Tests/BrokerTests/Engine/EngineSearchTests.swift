import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// `SEARCH` (chatbroker(7), `SEARCH`): whole words, case and accents
/// ignored, every word required, newest first over what the user may
/// read, a page at a time; a message taken back or evicted is never found.
@Suite("Engine: searching history")
struct EngineSearchTests {
  /// The ids of the `HIST` lines of a reply, in order.
  private func ids(_ reply: [String]) -> [String] {
    reply.filter { $0.hasPrefix("HIST ") }.map { String($0.split(separator: " ")[2]) }
  }

  @Test("case, accents and compatibility forms are folded; words match whole")
  func folding() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let id = okID(chat.send(alice, "SAY #ops :Le CAFÉ de la Straße: ﬁne déjà-vu ①"))
    for words in ["cafe", "CAFÉ", "Café straSSe", "fine", "DEJA vu", "1", "straße le"] {
      #expect(ids(chat.send(alice, "SEARCH * \(words)")) == [id], "\(words)")
    }
    for words in ["caf", "cafes", "dejavu", "cafe nowhere"] {
      #expect(chat.send(alice, "SEARCH * \(words)") == ["OK SEARCH * 0"], "\(words)")
    }
    #expect(
      chat.send(alice, "SEARCH #ops cafe") == [
        "HIST #ops \(id) 2026-11-30T17:00:00.000Z alice :Le CAFÉ de la Straße: ﬁne déjà-vu ①",
        "OK SEARCH #ops 1",
      ])
  }

  @Test("newest first over rooms and one's own direct conversations, never others'")
  func visibility() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    let inRoom = okID(chat.send(alice, "SAY #ops :deploy failed"))
    chat.clock.set("2026-11-30T17:00:01.000Z")
    let direct = okID(chat.send(alice, "SAY @bob :the deploy failed again"))
    chat.clock.set("2026-11-30T17:00:02.000Z")
    let action = okID(chat.send(carol, "ACTION #dev :failed to deploy"))
    chat.send(carol, "SAY #dev :deploy worked")
    #expect(ids(chat.send(bob, "SEARCH * deploy failed")) == [action, direct, inRoom])
    let mine = chat.send(bob, "SEARCH @alice deploy")
    #expect(
      mine == [
        "HIST @alice \(direct) 2026-11-30T17:00:01.000Z alice :the deploy failed again",
        "OK SEARCH @alice 1",
      ])
    #expect(
      chat.send(bob, "SEARCH #dev failed")
        == [
          "HIST #dev \(action) 2026-11-30T17:00:02.000Z carol ACTION :failed to deploy",
          "OK SEARCH #dev 1",
        ])
    #expect(ids(chat.send(carol, "SEARCH * deploy failed")) == [action, inRoom])
    #expect(chat.send(carol, "SEARCH @alice deploy") == ["OK SEARCH @alice 0"])
  }

  @Test("pages of <n> go on from MORE's id until a reply without MORE; <n> is at most 100")
  func paging() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let said = (1...5).map { okID(chat.send(alice, "SAY #ops :build \($0) broke")) }
    let first = chat.send(alice, "SEARCH * 2 build broke")
    #expect(ids(first) == [said[4], said[3]])
    #expect(first.last == "OK SEARCH * 2 MORE \(said[3])")
    let second = chat.send(alice, "SEARCH * 2 BEFORE \(said[3]) build broke")
    #expect(ids(second) == [said[2], said[1]])
    let third = chat.send(alice, "SEARCH * 2 before \(said[1]) build broke")
    #expect(
      third == [
        "HIST #ops \(said[0]) 2026-11-30T17:00:00.000Z alice :build 1 broke", "OK SEARCH * 1",
      ])
    #expect(
      chat.send(alice, "SEARCH * BEFORE zzzz build").first?.hasPrefix("ERR SEARCH NOSUCHMSG")
        == true)
    #expect(ids(chat.send(alice, "SEARCH * 5")) == [said[4]], "a lone number is a word")
    #expect(chat.send(alice, "SEARCH * :2 build").last == "OK SEARCH * 1", "so is one after :")
    for index in 6...101 { chat.send(alice, "SAY #ops :build \(index) broke") }
    let clamped = chat.send(alice, "SEARCH * 1000 build")
    #expect(ids(clamped).count == 100)
    #expect(clamped.last?.hasPrefix("OK SEARCH * 100 MORE ") == true)
    #expect(ids(chat.send(alice, "SEARCH * build")).count == 20, "20 by default")
  }

  @Test("a request examines a bounded number of candidates and says where to go on")
  func candidateBound() {
    var limits = Limits()
    limits.searchCandidates = 10
    let chat = EngineHarness(limits: limits)
    let alice = chat.connect("alice")
    let wanted = okID(chat.send(alice, "SAY #ops :alpha beta"))
    for index in 1...30 { chat.send(alice, "SAY #ops :alpha \(index)") }
    for _ in 1...40 { chat.send(alice, "SAY #ops :beta") }
    var reply = chat.send(alice, "SEARCH * alpha beta")
    var pages = 1
    while ids(reply).isEmpty, let more = reply.last?.split(separator: " ").last,
      reply.last?.contains(" MORE ") == true, pages < 10
    {
      #expect(reply.last?.hasPrefix("OK SEARCH * 0 MORE ") == true)
      reply = chat.send(alice, "SEARCH * BEFORE \(more) alpha beta")
      pages += 1
    }
    #expect(ids(reply) == [wanted])
    #expect(pages == 4, "31 candidates of the rarer word, 10 a page")
  }

  @Test("a message taken back is never found and leaves no word; a rollback finds it again")
  func redaction() throws {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let id = okID(chat.send(alice, "SAY #ops :the password is hunter2"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let history = { chat.engine.histories[.room(RoomName("#ops")!)] }
    let words = history()?.indexedWordCount
    chat.send(alice, "REDACT #ops \(id)")
    #expect(chat.send(alice, "SEARCH * hunter2") == ["OK SEARCH * 0"])
    #expect(history()?.indexedWordCount == 0, "from \(words ?? 0) words")
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(ids(chat.send(alice, "SEARCH * hunter2 password")) == [id])
    chat.send(alice, "REDACT #ops \(id)")
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let restarted = chat.restarted()
    let bob = restarted.connect("bob")
    #expect(restarted.send(bob, "SEARCH * hunter2") == ["OK SEARCH * 0"])
  }

  @Test(
    "evicted messages are never found and leave the index by the next sweep; a rolled-back SAY gives the evicted one back"
  )
  func eviction() {
    var limits = Limits()
    limits.historyPerConversation = 2
    let chat = EngineHarness(limits: limits)
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let oldest = okID(chat.send(alice, "SAY #ops :oldest line"))
    let middle = okID(chat.send(alice, "SAY #ops :middle line"))
    chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
    let newest = okID(chat.send(alice, "SAY #ops :newest line"))
    #expect(ids(chat.send(alice, "SEARCH * line")) == [newest, middle])
    #expect(chat.send(alice, "SEARCH * oldest") == ["OK SEARCH * 0"])
    chat.engine.rollBack(chat.engine.unsyncedRecordCount)
    #expect(ids(chat.send(alice, "SEARCH * line")) == [middle, oldest])
    #expect(chat.send(alice, "SEARCH * newest") == ["OK SEARCH * 0"])
    // 65 lines more pass the sweep's mark: the words of every message
    // dropped leave, the two kept ones' stay.
    for number in 1...65 { chat.send(alice, "SAY #ops :later \(number)") }
    let words = chat.engine.histories[.room(RoomName("#ops")!)]?.indexedWordCount
    #expect(words == 3, "later, 64 and 65")
    #expect(chat.send(alice, "SEARCH * oldest") == ["OK SEARCH * 0"])
  }

  @Test(
    "finds exactly the kept messages holding the word, newest first, through evictions, rolled-back batches, redactions and sweeps"
  )
  func agreesWithHistory() {
    var random = SystemRandomNumberGenerator()
    let vocabulary = ["red", "green", "blue", "deploy", "lunch"]
    for _ in 0..<20 {
      var limits = Limits()
      limits.historyPerConversation = Int.random(in: 2...20, using: &random)
      let chat = EngineHarness(limits: limits)
      chat.engine.trackUnsyncedRecords()
      let alice = chat.connect("alice")
      var said: [String] = []
      for _ in 0..<60 {
        for _ in 0..<Int.random(in: 1...6, using: &random) {
          let words = (0..<Int.random(in: 1...3, using: &random)).map { _ in
            vocabulary.randomElement(using: &random)!
          }
          let room = Bool.random(using: &random) ? "#a" : "#b"
          said.append(okID(chat.send(alice, "SAY \(room) :\(words.joined(separator: " "))")))
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
          chat.engine.rollBack(chat.engine.unsyncedRecordCount)
        } else {
          chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
          if Int.random(in: 0..<5, using: &random) == 0, let id = said.randomElement(using: &random)
          {
            chat.send(alice, "REDACT #a \(id)")
            chat.send(alice, "REDACT #b \(id)")
            chat.engine.recordsSynced(chat.engine.unsyncedRecordCount)
          }
        }
      }
      // What HISTORY shows kept, newest first over both rooms.
      let kept = (chat.send(alice, "HISTORY #a 100") + chat.send(alice, "HISTORY #b 100"))
        .filter { $0.hasPrefix("HIST ") && !$0.contains(" REDACTED ") }
        .map { line in
          (
            id: String(line.split(separator: " ")[2]), time: String(line.split(separator: " ")[3]),
            words: Set((line.freeText ?? "").split(separator: " ").map(String.init))
          )
        }
        .sorted { ($0.time, $0.id) > ($1.time, $1.id) }
      for word in vocabulary {
        let expected = kept.filter { $0.words.contains(word) }.map(\.id)
        #expect(ids(chat.send(alice, "SEARCH * 100 \(word)")) == expected, "\(word)")
      }
    }
  }

  @Test("limits: at most 8 words of at most 64 bytes once folded, and at least one")
  func wordLimits() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let long = String(repeating: "é", count: 64)
    let id = okID(chat.send(alice, "SAY #ops :a b c d e f g h \(long)"))
    #expect(ids(chat.send(alice, "SEARCH * a b c d e f g h")) == [id])
    #expect(ids(chat.send(alice, "SEARCH * A a b B c d e f g h")) == [id], "repeats count once")
    #expect(
      chat.send(alice, "SEARCH * a b c d e f g h i") == [
        "ERR SEARCH LIMIT :at most 8 words; leave out the commonest"
      ])
    #expect(ids(chat.send(alice, "SEARCH * \(long)")) == [id], "64 bytes once folded")
    #expect(
      chat.send(alice, "SEARCH * \(long)x").first?.hasPrefix(
        "ERR SEARCH LIMIT :a word is at most 64")
        == true)
    #expect(chat.send(alice, "SEARCH * -- !").first?.hasPrefix("ERR SEARCH SYNTAX") == true)
    #expect(chat.send(alice, "SEARCH *").first?.hasPrefix("ERR SEARCH SYNTAX") == true)
    #expect(chat.send(alice, "SEARCH ops x").first?.hasPrefix("ERR SEARCH BADNAME") == true)
  }

  @Test("results that show an unsynced message wait for its sync and are answered again")
  func unsynced() {
    let chat = EngineHarness()
    chat.engine.trackUnsyncedRecords()
    let alice = chat.connect("alice")
    let id = okID(chat.send(alice, "SAY #ops :fresh news"))
    chat.send(alice, "SEARCH * news")
    #expect(
      chat.output.kinds["OK SEARCH * 1"]
        == .answer(.search(nil, count: 20, before: nil, words: "news")))
    #expect(
      chat.output.kinds.first { $0.key.contains(id) && $0.key.hasPrefix("HIST") }?.value
        == .revealing)
  }

  @Test(
    "after a restart the words are indexed later: a search needing more than 2000 of them is LIMIT, then answers"
  )
  func indexBuiltAfterStartUp() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    for number in 0..<2500 { chat.send(alice, "SAY #ops :build \(number) green") }
    let said = okID(chat.send(alice, "SAY #ops :deploy now"))
    let restarted = chat.restarted()
    #expect(restarted.engine.hasWordsToIndex)
    let bob = restarted.connect("bob")
    #expect(
      restarted.send(bob, "SEARCH * deploy") == [
        "ERR SEARCH LIMIT :the search index is still being built after start-up"
          + " (2501 messages to go); try again in a moment"
      ])
    // A slice, as the shell asks for each pass: what is left is a
    // search's worth, which the search then indexes itself.
    #expect(restarted.engine.indexWords(messages: 1000) == 1000)
    #expect(ids(restarted.send(bob, "SEARCH * deploy")) == [said])
    #expect(!restarted.engine.hasWordsToIndex)
    #expect(restarted.send(bob, "SEARCH * build 2499").count == 2)
    // Lines said after the start are found, and so are they after the next.
    let later = okID(restarted.send(bob, "SAY #ops :deploy again"))
    #expect(ids(restarted.send(bob, "SEARCH * deploy")) == [later, said])
  }

  @Test("SEARCH writes a series' occurrence with SERIES <id>, as HISTORY does")
  func searchShowsSeries() {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    chat.send(alice, "JOIN #a")
    chat.send(alice, "SAYEVERY #a daily@18:00 :the standup starts")
    chat.advance(to: "2026-12-01T17:00:00.000Z")
    _ = chat.output.take(alice)
    let history = chat.send(alice, "HISTORY #a")
    #expect(history.first?.contains(" SERIES 1 :the standup starts") == true, "\(history)")
    #expect(chat.send(alice, "SEARCH #a standup").first == history.first)
    #expect(chat.send(alice, "SEARCH * standup").first == history.first)
  }
}

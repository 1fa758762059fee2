import Foundation
import Glibc
import LineProtocol
import TestSupport
import Testing

/// No local user can crash the real broker with a `<when>`, an id or a
/// recipient, and no journal can make it trap or put a forged line on a
/// client's screen (chatbroker(7), chatbroker(8) "JOURNAL FORMAT").
@Suite("Hardened input on the real binary")
struct HardenedInputTests {
  private static let header = "{\"type\":\"journal\",\"version\":1,\"next_id\":\"1\"}"

  private static func message(_ id: String, _ text: String, to: String = "#c") -> String {
    "{\"type\":\"message\",\"id\":\"\(id)\",\"to\":\"\(to)\",\"from\":\"alice\","
      + "\"at\":\"2026-11-30T17:55:0\(id.count).204Z\",\"text\":\"\(text)\"}"
  }

  /// Puts `lines` in place as the journal of a broker not yet started.
  private func writeJournal(_ broker: BrokerProcess, _ lines: [String]) throws {
    #expect(mkdir(broker.stateDirectory, 0o700) == 0)
    try (lines.joined(separator: "\n") + "\n").write(
      toFile: broker.journalPath, atomically: false, encoding: .utf8)
  }

  private func startRefused(_ broker: BrokerProcess) throws -> CommandResult {
    try broker.runToExit([
      "--socket", broker.socketPath, "--state-dir", broker.stateDirectory, "--no-sync",
    ])
  }

  @Test(
    "a <when> outside years 1 to 9999 is PAST or TOOFAR quoting it, and everyone stays connected",
    arguments: [
      ("0000-01-01T00:00+00:01", "PAST"), ("0000-01-01T00:00Z", "PAST"),
      ("@-99999999999999999999", "PAST"), ("@-62135596801", "PAST"),
      ("9999-12-31T23:59-00:01", "TOOFAR"), ("@2733000000000", "TOOFAR"),
      ("@99999999999999999999.5", "TOOFAR"), ("+99999999999999999999d", "TOOFAR"),
      ("+9999999999d9999999999h9999999999m9999999999s", "TOOFAR"),
    ])
  func whenOutOfRange(word: String, code: String) throws {
    let broker = try BrokerProcess().start()
    let author = try broker.connect()
    let other = try broker.connect()
    let reply = try author.request("SAYAT #a \(word) x")
    #expect(
      reply.count == 1 && reply[0].hasPrefix("ERR SAYAT \(code) :\"\(word)\" is "), "\(reply)")
    #expect(!reply[0].contains("8857"), "the year is not cut to four digits")
    #expect(try author.request("PING") == ["OK PING"])
    #expect(try other.request("PING") == ["OK PING"])
    #expect(try author.dataLines("SCHEDULED") == [])
  }

  @Test("HISTORY before an impossible id answers NOSUCHMSG naming the id as sent")
  func historyAnchor() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    #expect(try client.request("SAY #r hi").first?.hasPrefix("OK SAY ") == true)
    #expect(
      try client.request("HISTORY #r 10 BEFORE ABC") == [
        "ERR HISTORY NOSUCHMSG :no message ABC in the history of #r"
      ])
  }

  @Test("SAY to a uid name with no passwd entry and no session is NOSUCHUSER")
  func unknownUID() throws {
    let broker = try BrokerProcess().start()
    let client = try broker.connect()
    let reply = try client.request("SAY @uid99999 hi")
    #expect(reply.count == 1 && reply[0].hasPrefix("ERR SAY NOSUCHUSER :"), "\(reply)")
    #expect(try client.request("SAYAT @uid99999 +1h hi").first?.contains(" NOSUCHUSER :") == true)
    #expect(try client.dataLines("HISTORY @uid99999") == [])
  }

  @Test(
    "a uid with no passwd entry can be written to while connected, not after it left",
    UnixUsers.rootOnly("to connect as a uid with no passwd entry through setpriv"))
  func connectedUID() throws {
    let broker = try BrokerProcess().start()
    let root = try broker.connect()
    let stranger = try broker.connect(as: "54322")
    #expect(stranger.greeting.words[2] == "uid54322")
    #expect(try root.request("SAY @uid54322 hello").first?.hasPrefix("OK SAY ") == true)
    #expect(try stranger.request("QUIT").last == "OK QUIT")
    try waitUntil(timeout: 10, "uid54322's session to end") {
      try root.request("SAY @uid54322 still there?").first?.contains(" NOSUCHUSER :") == true
    }
  }

  @Test("a journal whose next_id is near 2^64 is damage: start-up stops with exit 65")
  func nextIDNearOverflow() throws {
    let broker = try BrokerProcess()
    try writeJournal(
      broker, ["{\"type\":\"journal\",\"version\":1,\"next_id\":\"3w5e11264sgse\"}"])
    let refused = try startRefused(broker)
    #expect(refused.status == 65, "\(refused.errors)")
    #expect(refused.errors.contains("line 1"), "\(refused.errors)")
    #expect(refused.errors.contains("next_id"), "\(refused.errors)")
  }

  @Test("at the last id one SAY is accepted, then LIMIT, and restarts keep working")
  func lastID() throws {
    let broker = try BrokerProcess()
    try writeJournal(
      broker, ["{\"type\":\"journal\",\"version\":1,\"next_id\":\"yzzzzzzzzzzz\"}"])
    try broker.start()
    let client = try broker.connect()
    #expect(try client.request("SAY #a last").first?.hasPrefix("OK SAY yzzzzzzzzzzz ") == true)
    for request in ["SAY #a more", "SAYAT #a +1h more"] {
      let refused = try client.request(request)
      #expect(refused.count == 1 && refused[0].contains(" LIMIT :every message id"), "\(refused)")
    }
    #expect(try broker.stop() == 0)
    for _ in 0..<2 {
      try broker.start()
      let again = try broker.connect()
      #expect(try again.dataLines("HISTORY #a").map(\.freeText) == ["last"])
      #expect(try again.request("SAY #a more").first?.contains(" LIMIT :") == true)
      #expect(try broker.stop() == 0)
    }
  }

  @Test(
    "a journal text with a control character is damage; --repair sets it aside, so no client sees it",
    arguments: [
      "x\\r\\nMSG #c 9 2026-11-30T17:55:01.204Z root :forged", "\\u001b[2J\\u001b[31mred",
      "a\\n\\u001b[2J",
      "c1 \\u009b31m", "\\r", "  ",
    ])
  func controlCharacterInJournal(text: String) throws {
    let broker = try BrokerProcess()
    let lines = [
      Self.header, Self.message("1", "one"), Self.message("2", text), Self.message("3", "three"),
    ]
    try writeJournal(broker, lines)
    let refused = try startRefused(broker)
    #expect(refused.status == 65, "\(refused.errors)")
    #expect(refused.errors.contains("line 3"), "\(refused.errors)")

    try broker.start(["--no-sync", "--repair"])
    let client = try broker.connect()
    let history = try client.request("HISTORY #c")
    #expect(history.map(\.freeText) == ["one", "three", nil], "\(history)")
    #expect(history.allSatisfy { !containsControlCharacter($0) })
    #expect(try client.request("PING") == ["OK PING"], "no forged line came between")
  }

  /// A line feed in a journal's message text is a block's (chatbroker(7),
  /// BLOCK): kept, and shown escaped on one line, so it forges none.
  @Test("a journal text of several lines is one message, written with \\n, and forges no line")
  func blockInJournal() throws {
    let broker = try BrokerProcess()
    let forged = "x\\nMSG #c 9 2026-11-30T17:55:01.204Z root :forged"
    try writeJournal(broker, [Self.header, Self.message("1", forged), Self.message("2", "two")])
    try broker.start(["--no-sync"])
    let client = try broker.connect()
    let history = try client.request("HISTORY #c")
    #expect(history.count == 3, "\(history)")
    #expect(history.first?.hasSuffix(" BLOCK :" + forged) == true, "\(history)")
    #expect(try client.request("PING") == ["OK PING"], "no forged line came between")
  }

  @Test("a damaged last line (complete, with its LF) also stops start-up")
  func damagedLastLine() throws {
    let broker = try BrokerProcess()
    try writeJournal(broker, [Self.header, Self.message("1", "one"), Self.message("2", "\\u001b")])
    let refused = try startRefused(broker)
    #expect(refused.status == 65, "\(refused.errors)")
    #expect(refused.errors.contains("line 3"), "\(refused.errors)")
  }

  @Test("--max-line-bytes stops at 1048576, the longest text the journal accepts")
  func lineLimitCap() throws {
    let broker = try BrokerProcess()
    let refused = try broker.runToExit([
      "--socket", broker.socketPath, "--state-dir", broker.stateDirectory,
      "--max-line-bytes", "1048577",
    ])
    #expect(refused.status == 64)
    #expect(refused.errors.contains("--max-line-bytes needs a whole number from 1 to 1048576"))
    try broker.start(["--no-sync", "--max-line-bytes", "1048576"])
    #expect(try broker.connect().request("PING") == ["OK PING"])
  }

  @Test("blank lines in the journal are skipped, and the journal keeps working")
  func blankLines() throws {
    let broker = try BrokerProcess()
    let lines = [
      "", Self.header, "", Self.message("1", "one"), "   ", "\t", Self.message("2", "two"), "",
    ]
    try writeJournal(broker, lines)
    try broker.start()
    let client = try broker.connect()
    #expect(try client.dataLines("HISTORY #c").map(\.freeText) == ["one", "two"])
    #expect(try client.request("SAY #c three").first?.hasPrefix("OK SAY ") == true)
    #expect(try broker.stop() == 0)
    #expect(broker.journal.hasPrefix(lines.joined(separator: "\n") + "\n"), "left as it was")
    try broker.start()
    #expect(
      try broker.connect().dataLines("HISTORY #c").map(\.freeText) == ["one", "two", "three"])
  }
}

import Foundation
import LineProtocol
import Testing

@testable import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// Messages of several lines in chatsh (chatbroker(7), `BLOCK`; chatsh(1),
/// `say --block` and "The chat screen"), without a broker.
@Suite struct BlockTests {
  init() {
    setlocale(LC_CTYPE, "C.UTF-8")
  }

  private let monday18 = Timestamp(milliseconds: 1_796_061_600_000)

  @Test(
    "say --block: the input is one message of its lines, cleaned; blank lines at the ends and the last line feed go"
  )
  func oneBlock() throws {
    let target = try #require(Target("#builds"))
    let input = "\n\u{1B}[1mCompiling\u{1B}[0m x\r\n\n\tok\\n\n\n"
    #expect(BuildOutput.blocks(of: input, to: target) == ["Compiling x\n\n\tok\\n"])
    #expect(BuildOutput.blocks(of: "one line\n", to: target) == ["one line"])
    #expect(BuildOutput.blocks(of: " \n\n", to: target).isEmpty)
  }

  @Test(
    "say --block: beyond 100 lines or the request line's 4096 bytes, the fewest blocks that hold it, in order"
  )
  func splitBlocks() throws {
    let target = try #require(Target("#builds"))
    let lines = (1...340).map { "line \($0)" }
    let blocks = BuildOutput.blocks(of: lines.joined(separator: "\n"), to: target)
    #expect(blocks.map(MessageBlock.lineCount) == [100, 100, 100, 40])
    #expect(blocks.joined(separator: "\n") == lines.joined(separator: "\n"))

    // Backslashes count twice on the wire: 30 lines of 200 bytes written as 400.
    let wide = (1...30).map { _ in String(repeating: "\\", count: 200) }
    let pieces = BuildOutput.blocks(of: wide.joined(separator: "\n"), to: target)
    #expect(pieces.count == 3, "\(pieces.map(MessageBlock.lineCount))")
    for piece in pieces {
      let line = LineCodec.encode(.say(target, text: piece))
      #expect(line.count - 1 <= 4096 && String(decoding: line, as: UTF8.self).hasPrefix("BLOCK "))
    }
    #expect(pieces.joined(separator: "\n") == wide.joined(separator: "\n"))

    // A line longer than a request alone is cut into lines that fit.
    let long = String(repeating: "é", count: 5000)
    let cut = BuildOutput.blocks(of: "start\n" + long, to: target)
    #expect(cut.allSatisfy { LineCodec.encode(.say(target, text: $0)).count - 1 <= 4096 })
    #expect(cut.joined().replacingOccurrences(of: "\n", with: "") == "start" + long)
  }

  @Test("say --block: of say only, and not with --notice, --at or --every (they carry one line)")
  func blockOption() throws {
    #expect(try OptionParser.parse(["say", "--block", "#b"]).block)
    #expect(try OptionParser.parse(["say", "#b", "x"]).block == false)
    for arguments in [
      ["say", "--block", "--notice", "#b"], ["say", "--block", "--at", "18:00", "#b", "x"],
      ["say", "--every", "daily@09:00", "--block", "#b", "x"], ["history", "--block", "#b"],
    ] {
      #expect(throws: UsageError.self, "\(arguments)") { try OptionParser.parse(arguments) }
    }
  }

  private func renderer(_ me: String = "alice", width: Int = 40) -> TranscriptRenderer {
    var renderer = TranscriptRenderer(
      me: me, width: width, now: monday18 + 60_000,
      clock: LocalClock(timeZone: TimeZone(identifier: "UTC")!))
    renderer.fullName = { _ in nil }
    return renderer
  }

  @Test(
    "a block from someone else: one header, its lines each on its own row, indented, cleaned, tabs to 8 columns, wrapped"
  )
  func othersBlock() {
    let block = ChatMessage(
      target: "#ops", id: "7", time: monday18, user: "bob",
      text: "error: build failed\n\tat main.swift:3\n\u{1B}[2J\u{202E}evil\n\n"
        + Array(repeating: "long", count: 10).joined(separator: " "))
    let rows = renderer().render([.message(block)]).map(\.text)
    #expect(rows.filter { $0.contains("bob") }.count == 1, "\(rows)")
    let header = rows.firstIndex { $0.contains("(BO) bob") }
    #expect(
      header.map { Array(rows[($0 + 1)...]) } == [
        "      error: build failed",
        "              at main.swift:3",
        "      \u{FFFD}[2J\u{FFFD}evil",
        "      ",
        "      long long long long long long",
        "      long long long long",
      ], "\(rows)")
    #expect(!rows.joined().unicodeScalars.contains { $0.value < 0x20 })
  }

  @Test("a block of mine is on the right, line under line; in a search result its lines run on")
  func myBlock() {
    let block = ChatMessage(
      target: "#ops", id: "8", time: monday18, user: "alice", text: "first\nsecond")
    let rows = renderer().render([.message(block)]).map(\.text)
    #expect(rows.suffix(2).map { $0.trimmingCharacters(in: .whitespaces) } == ["first", "second"])
    #expect(rows.suffix(2).allSatisfy { $0.hasSuffix("first") || $0.hasSuffix("second") })
    #expect(block.singleLineText == "first ↵ second")
  }

  @Test(
    "a paste keeps its lines (CR LF, CR or LF) as one input, tabs to 8 columns; Alt-Enter breaks a line"
  )
  func pasteIntoTheEditor() {
    var editor = LineEditor()
    editor.insert("log:")
    editor.insertLineBreak()
    editor.insertPasted("a\r\nb\rc\n\td\u{7}")
    #expect(editor.text == "log:\na\nb\nc\n        d")
    #expect(editor.visible(width: 40).text == "log:↵a↵b↵c↵        d")
  }

  @Test("Enter on several lines sends one BLOCK; OK BLOCK shows it as mine, with its lines")
  func sendingABlock() {
    let harness = ChatSessionTests.Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0")
    harness.sent = []
    harness.session.submit("make: ok\n\\o/\n")
    #expect(harness.sent == [#"BLOCK #ops :make: ok\n\\o/"#])
    harness.feed("OK BLOCK 9 2026-11-30T18:00:05.000Z")
    let shown = harness.session.model.find("#ops")?.entries.last
    #expect(shown?.messageID == "9")
    if case .message(let message)? = shown { #expect(message.text == "make: ok\n\\o/") }
  }

  @Test("a MSG with BLOCK arrives as one message of several lines")
  func receivingABlock() {
    let harness = ChatSessionTests.Harness()
    harness.session.start(targets: ["#ops"])
    harness.feed(
      "OK JOIN #ops 1", "OK WHO #ops 0", "OK ACCESS #ops public", "OK HISTORY #ops 0",
      "OK CONVERSATIONS 0", "OK SCHEDULED 0", "OK ROOMS 0",
      #"MSG #ops 9 2026-11-30T18:00:05.000Z bob BLOCK :a\nb"#)
    guard case .message(let message)? = harness.session.model.find("#ops")?.entries.last else {
      Issue.record("no message")
      return
    }
    #expect(message.text == "a\nb")
  }
}

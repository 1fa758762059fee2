import Testing

@testable import ChatClient

#if canImport(Glibc)
  import Glibc
#endif

/// Widths as terminals draw them, and build output made fit for a chat.
@Suite struct TextCleaningTests {
  init() {
    // chatsh runs with a UTF-8 LC_CTYPE (C.UTF-8 when the locale is not).
    setlocale(LC_CTYPE, "C.UTF-8")
  }

  @Test("an emoji with a skin tone is 4 columns, a joined emoji 2, a heart with VS16 1")
  func widthsPerCodePoint() {
    #expect(TextWidth.of("👍🏽") == 4)
    #expect(TextWidth.of("👩‍💻") == 2)
    #expect(TextWidth.of("❤️") == 1)
    #expect(TextWidth.of("👩‍💻 done") == 7)
    #expect(TextWidth.of(String(repeating: "👍🏽", count: 30)) == 120)
    // What is drawn is what was measured: one cell holds the joined emoji.
    #expect(TextWidth.cells("👩‍💻") == [.init(scalars: ["👩", "\u{200D}", "💻"], width: 2)])
    #expect(TextWidth.cells("👍🏽").map(\.width) == [2, 2])
  }

  @Test("text cut to a width ends with …, never splits a wide character, and is whole when it fits")
  func truncatedEndsWithEllipsis() {
    #expect(TextWidth.truncated("#ops · ann bob cat", fitting: 18) == "#ops · ann bob cat")
    #expect(TextWidth.truncated("#ops · ann bob cat", fitting: 14) == "#ops · ann bo…")
    #expect(
      TextWidth.truncated("#ops · ann bob cat", fitting: 12) == "#ops · ann…", "no space before …")
    // 日 is two columns: 5 columns hold 日本 and …, 6 hold the same (no half 語).
    #expect(TextWidth.truncated("日本語です", fitting: 5) == "日本…")
    #expect(TextWidth.truncated("日本語です", fitting: 6) == "日本…")
    #expect(TextWidth.of(TextWidth.truncated("👍🏽👍🏽👍🏽", fitting: 7)) <= 7)
  }

  @Test("combining marks beyond what a cell holds are left out, never drawn elsewhere")
  func zalgoStaysInItsCell() {
    let zalgo = Character("e" + String(repeating: "\u{301}", count: 40))
    let cells = TextWidth.cells(zalgo)
    #expect(cells.count == 1)
    #expect(cells[0].width == 1)
    #expect(cells[0].scalars.count == TextWidth.scalarsPerCell)
  }

  @Test("a joined emoji typed one code point at a time is one character in the input line")
  func typedJoinedEmojiIsOneCharacter() {
    var editor = LineEditor()
    for scalar in "👩‍💻".unicodeScalars { editor.insert(String(scalar)) }
    editor.insert(" done")
    #expect(editor.characters.count == 6)
    #expect(editor.text == "👩‍💻 done")
  }

  @Test("colour, OSC titles, BEL and backspace are removed from build output")
  func escapesAreStripped() {
    #expect(BuildOutput.clean("\u{1B}[1;31merror:\u{1B}[0m it broke") == "error: it broke")
    #expect(BuildOutput.clean("\u{1B}]0;make: building\u{7}compiling") == "compiling")
    #expect(
      BuildOutput.clean("\u{1B}]8;;https://x.example\u{1B}\\link\u{1B}]8;;\u{1B}\\") == "link")
    #expect(BuildOutput.clean("\u{1B}Pq#0;2;0;0;0\u{1B}\\after") == "after")
    #expect(BuildOutput.clean("ding\u{7}\u{7} dong") == "ding dong")
    #expect(BuildOutput.clean("ab\u{8}c") == "abc")
    #expect(BuildOutput.clean("\u{1B}(Bplain\u{1B}=") == "plain")
    #expect(BuildOutput.clean("tab\tkept") == "tab\tkept")
    #expect(BuildOutput.clean("nul\u{0}x") == "nul\u{FFFD}x")
    #expect(!BuildOutput.clean("\u{1B}]0;title\u{7}x").contains("\u{FFFD}"))
  }

  @Test("a line overwritten with carriage returns keeps what was left visible")
  func carriageReturnsKeepTheLastSegment() {
    #expect(BuildOutput.clean("  0%\r 50%\r100% done") == "100% done")
    #expect(BuildOutput.clean("windows line\r") == "windows line")
    #expect(BuildOutput.clean("\u{1B}[2K\r\u{1B}[32m[3/3]\u{1B}[0m Linking") == "[3/3] Linking")
    #expect(BuildOutput.clean("   \r\t") == "")
  }

  @Test("a line over the limit is split at character boundaries, nothing lost")
  func longLinesAreSplit() {
    let text = String(repeating: "é日👍🏽x", count: 1000)
    let pieces = BuildOutput.split(text, maximumBytes: 4000)
    #expect(pieces.count > 1)
    #expect(pieces.allSatisfy { $0.utf8.count <= 4000 })
    #expect(pieces.joined() == text)
    #expect(BuildOutput.split("short", maximumBytes: 4000) == ["short"])
    let zalgo = "e" + String(repeating: "\u{301}", count: 3000)
    let cut = BuildOutput.split(zalgo, maximumBytes: 1000)
    #expect(cut.allSatisfy { $0.utf8.count <= 1000 })
    #expect(cut.joined() == zalgo)
  }
}

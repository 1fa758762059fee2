import Testing

@testable import ChatClient

@Suite struct LineEditorTests {
  @Test(
    "home, end, deleting a word, to the end or to the start, backspace and delete edit the input line; an escape is never inserted"
  )
  func editingKeys() {
    var editor = LineEditor()
    editor.insert("hello world")
    editor.moveHome()
    editor.insert(">")
    #expect(editor.text == ">hello world")
    editor.moveEnd()
    editor.killWordBack()
    #expect(editor.text == ">hello ")
    editor.moveLeft()
    editor.moveLeft()
    editor.killToEnd()
    #expect(editor.text == ">hell")
    editor.killToStart()
    #expect(editor.text == "")
    editor.insert("ab\u{1B}c")
    #expect(editor.text == "abc")
    editor.backspace()
    editor.moveLeft()
    editor.deleteForward()
    #expect(editor.text == "a")
  }

  @Test("Up and Down walk the sent lines and come back to the unsent draft")
  func historyKeepsTheDraft() {
    var editor = LineEditor()
    editor.insert("one")
    _ = editor.submit()
    editor.insert("two")
    _ = editor.submit()
    editor.insert("draft")
    editor.historyPrevious()
    #expect(editor.text == "two")
    editor.historyPrevious()
    editor.historyPrevious()
    #expect(editor.text == "one")
    editor.historyNext()
    editor.historyNext()
    #expect(editor.text == "draft")
  }

  @Test(
    "Tab completes a unique prefix with a space, and a shared prefix to its longest common part")
  func completion() {
    var editor = LineEditor()
    editor.insert("/jo")
    editor.complete(from: ["/join", "/help"])
    #expect(editor.text == "/join ")
    editor.insert("#de")
    let matches = editor.complete(from: ["#dev", "#deploy", "#ops"])
    #expect(matches == ["#deploy", "#dev"])
    #expect(editor.text == "/join #de")
    editor.insert("v")
    editor.complete(from: ["#dev", "#deploy"])
    #expect(editor.text == "/join #dev ")
  }

  @Test("a line longer than the screen scrolls so that the cursor stays visible")
  func visiblePartFollowsTheCursor() {
    var editor = LineEditor()
    editor.insert(String(repeating: "x", count: 30) + "END")
    let (text, cursor) = editor.visible(width: 10)
    #expect(text.hasSuffix("END"))
    #expect(cursor == 9)
    editor.moveHome()
    #expect(editor.visible(width: 10) == (String(repeating: "x", count: 10), 0))
  }
}

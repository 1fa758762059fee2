import Foundation
import TestSupport
import Testing

/// Messages of several lines on the chat page (chatbroker(7), `BLOCK`):
/// Shift-Enter starts a line in the composer and Enter sends the text as
/// one `BLOCK`; a `MSG` or `HIST` line with `BLOCK` is one bubble that
/// keeps its lines, as text.
@Suite(
  "The chat page: messages of several lines", .serialized, UnixUsers.required, Browser.required)
struct WebPageBlockTests {
  /// The lines of the bubbles of the open conversation, as they are
  /// laid out: each bubble's text split at its line feeds.
  static let bubbleLines = """
    return JSON.stringify([...document.querySelectorAll('#messages .bubble:not(.sending) .text')]
      .map(n => n.innerText.split('\\n')))
    """

  @Test(
    "Shift-Enter then Enter sends one BLOCK; another's BLOCK is one bubble of its lines, HTML as text; over 100 lines is refused"
  )
  func blocksBothWays() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    _ = try bob.request("SAY #lobby :hello")
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "hello")

    try browser.type("#text", "first", keys: ["SHIFT", "ENTER", "NULL"])
    try browser.type("#text", "second \\n", keys: ["ENTER"])
    #expect(try bob.expect("MSG #lobby ").hasSuffix(#" cbtest1 BLOCK :first\nsecond \\n"#))

    _ = try bob.request(#"BLOCK #lobby :<b>bold</b>\n  indented\\n"#)
    try browser.wait(
      """
      return [...document.querySelectorAll('#messages .theirs .bubble .text')]
        .some(n => n.textContent === '<b>bold</b>\\n  indented\\\\n')
      """)
    let lines = try #require(browser.js(Self.bubbleLines) as? String)
    #expect(lines.contains(#"["first","second \\n"]"#), "\(lines)")
    #expect(lines.contains(#"["<b>bold</b>","  indented\\n"]"#), "\(lines)")
    #expect(
      try browser.js("return document.querySelectorAll('#messages .bubble .text b').length")
        as? Int == 0, "HTML in a message is text")
    try browser.screenshot("blocks")

    try browser.js(
      "document.getElementById('text').value = Array.from({length: 101}, (_, i) => 'l' + i).join('\\n')"
    )
    try browser.type("#text", "", keys: ["ENTER"])
    try browser.wait(
      "return document.getElementById('status').textContent.includes('at most 100 lines')")
    #expect(
      try browser.js("return document.getElementById('text').value.split('\\n').length") as? Int
        == 101, "the text stays to be shortened")
    // One line goes as SAY, as before; the next line bob gets is it.
    try browser.js("document.getElementById('text').value = ''")
    try browser.type("#text", "one line", keys: ["ENTER"])
    #expect(try bob.expect("MSG #lobby ").hasSuffix(" cbtest1 :one line"), "nothing else was sent")
  }
}

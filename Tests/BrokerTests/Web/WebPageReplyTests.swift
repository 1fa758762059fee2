import Foundation
import TestSupport
import Testing

/// Replies and changed lines on the chat page (chatbroker(7), `REPLY` and
/// `AMEND`): Reply and Edit buttons on a bubble, the line that says what
/// the next message answers or replaces, a quote at the top of every
/// reply, as text, and "(edited)" on a changed line, whichever door sent it.
@Suite("The chat page: replies and edits", .serialized, UnixUsers.required, Browser.required)
struct WebPageReplyTests {
  /// The quote of each bubble that has one, in order.
  static func quotes(_ browser: Browser) throws -> [String] {
    try browser.js(
      "return [...document.querySelectorAll('#messages .bubble .quote')].map(n => n.textContent)")
      as? [String] ?? []
  }

  @Test(
    "Reply on a bubble sends REPLY; both sides show the quote; Esc cancels; HTML in a quote is text"
  )
  func replyBothWays() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    let asked = okID(try bob.request("SAY #lobby :<b>who</b> deploys?<script>boom()</script>"))
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "<b>who</b> deploys?<script>boom()</script>")

    try WebPageTests.press(browser, "Reply", in: "#messages .theirs .bubble")
    try browser.wait("return !document.getElementById('replying').hidden")
    try browser.type("#text", "me, at six", keys: ["ENTER"])
    let mine = try bob.expect("MSG #lobby ")
    #expect(mine.hasSuffix(" cbtest1 REPLY \(asked) :me, at six"), "\(mine)")
    try WebPageTests.waitForBubble(browser, "me, at six")
    #expect(try browser.js("return document.getElementById('replying').hidden") as? Bool == true)
    #expect(try Self.quotes(browser) == ["↱ cbtest2: <b>who</b> deploys?<script>boom()</script>"])
    #expect(
      try browser.js("return document.querySelectorAll('#messages .quote *').length") as? Int == 0,
      "the quote is text, no element")

    let reply = String(mine.split(separator: " ")[2])
    _ = try bob.request("REPLY #lobby \(reply) :great, thanks")
    try WebPageTests.waitForBubble(browser, "great, thanks")
    #expect(try Self.quotes(browser).last == "↱ you: me, at six")
    try browser.screenshot("reply")

    try WebPageTests.press(browser, "Reply", in: "#messages .theirs .bubble")
    try browser.wait("return !document.getElementById('replying').hidden")
    try browser.type("#text", "", keys: ["ESCAPE"])
    try browser.wait("return document.getElementById('replying').hidden")
    try browser.type("#text", "no reply", keys: ["ENTER"])
    #expect(try bob.expect("MSG #lobby ").hasSuffix(" cbtest1 :no reply"))
  }

  @Test(
    "Edit on my bubble sends AMEND; others' changes show in place; both marked (edited) after a reload"
  )
  func editBothWays() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    let his = okID(try bob.request("SAY #lobby :deploy at 1800"))
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try browser.type("#text", "watching the grahps", keys: ["ENTER"])
    let mine = String(try bob.expect("MSG #lobby ").split(separator: " ")[2])
    try WebPageTests.waitForBubble(browser, "watching the grahps")

    try WebPageTests.press(browser, "Edit", in: "#messages .mine .bubble")
    try browser.wait("return document.getElementById('text').value === 'watching the grahps'")
    try browser.js("document.getElementById('text').value = ''")
    try browser.type("#text", "watching the graphs", keys: ["ENTER"])
    #expect(try bob.expect("AMEND #lobby ") == "AMEND #lobby \(mine) cbtest1 :watching the graphs")
    try WebPageTests.waitForBubble(browser, "watching the graphs")
    #expect(try browser.js("return document.getElementById('text').value") as? String == "")
    _ = try bob.request("AMEND #lobby \(his) :deploy at 18:00")
    try WebPageTests.waitForBubble(browser, "deploy at 18:00")
    let marked = """
      return [...document.querySelectorAll('#messages .bubble')]
        .filter(b => b.querySelector('.edited')).map(b => b.querySelector('.text').textContent)
      """
    #expect(try browser.js(marked) as? [String] == ["deploy at 18:00", "watching the graphs"])
    #expect(try WebPageTests.bubbles(browser) == ["deploy at 18:00", "watching the graphs"])
    try browser.screenshot("edited")

    try browser.js("location.reload()")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "watching the graphs")
    #expect(try browser.js(marked) as? [String] == ["deploy at 18:00", "watching the graphs"])
  }

  @Test(
    "after the broker comes back, the page shows what changed on its lines meanwhile: a new text, a reaction, a line taken back"
  )
  func reconnectRefreshesShownLines() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    let ids = try ["deploy at 1800", "oops, wrong room", "ship it?"].map {
      okID(try bob.request("SAY #lobby :\($0)"))
    }
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "ship it?")

    // While the broker is down, its journal gets what bob did meanwhile
    // (chatbroker(8), amend, redact, react): the page reconnects to a
    // broker that already has it, and hears no AMEND, REDACT or REACT.
    try broker.stop()
    let at = WebPageTests.iso(Date().timeIntervalSince1970)
    let records: [[String: Any]] = [
      [
        "type": "amend", "id": ids[0], "to": "#lobby", "user": "cbtest2", "at": at,
        "text": "deploy at 18:00",
      ],
      ["type": "redact", "id": ids[1], "to": "#lobby", "user": "cbtest2", "at": at],
      ["type": "react", "id": ids[2], "to": "#lobby", "user": "cbtest2", "reaction": "+1"],
    ]
    // The records end where the zeros the broker writes ahead begin.
    var journal = try Data(contentsOf: URL(fileURLWithPath: broker.journalPath))
    journal = journal.prefix { $0 != 0 }
    for record in records {
      journal += try JSONSerialization.data(withJSONObject: record, options: .sortedKeys)
      journal += Data("\n".utf8)
    }
    try journal.write(to: URL(fileURLWithPath: broker.journalPath))
    try broker.start(broker.arguments)

    try WebPageTests.waitForBubble(browser, "deploy at 18:00", timeout: 30)
    try WebPageReactionTests.waitForChips(browser, ["+1 1"])
    try WebPageTests.waitForBubble(browser, "message taken back")
    #expect(
      try WebPageTests.bubbles(browser) == ["deploy at 18:00", "message taken back", "ship it?"])
    #expect(
      try browser.js(
        "return [...document.querySelectorAll('#messages .bubble .edited')].length") as? Int == 1)
  }
}

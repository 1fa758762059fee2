import Foundation
import TestSupport
import Testing

/// Threads on the chat page (chatbroker(7), `THREAD`): Thread on a bubble,
/// or a click on a reply's quote, shows the message and its direct
/// replies, oldest first, as bubbles of text, with the replies that come
/// while it is open; Reply in it answers the message; a thread with no
/// replies, with more than the 50 it asks for, or of a message the broker
/// no longer keeps, says so.
@Suite("The chat page: threads", .serialized, UnixUsers.required, Browser.required)
struct WebPageThreadTests {
  /// The thread view's bubbles, top to bottom, each as author:text.
  static let shown = """
    return [...document.querySelectorAll('dialog.thread .thread-item')].map(n =>
      n.querySelector('.author').textContent + ':' + n.querySelector('.text').textContent)
    """

  /// Waits until the open thread view shows `expected`, as `shown` writes
  /// them.
  static func waitForThread(_ browser: Browser, _ expected: [String]) throws {
    try browser.wait(
      """
      const shown = (() => { \(shown) })();
      return shown.join('\\n') === \(Browser.literal(expected.joined(separator: "\n")))
      """)
  }

  static func note(_ browser: Browser) throws -> String? {
    try browser.js("return document.querySelector('dialog.thread .thread-note')?.textContent")
      as? String
  }

  @Test(
    "Thread on a bubble and a click on a quote show the message and its replies only, as text, with a new reply added live; Reply in it sends REPLY"
  )
  func threadFromBubbleAndQuote() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    let asked = okID(try bob.request("SAY #lobby :who deploys tonight?"))
    let first = okID(try bob.request("REPLY #lobby \(asked) :<b>me</b><img src=x onerror=boom()>"))
    _ = try bob.request("SAY #lobby :lunch anyone?")
    let second = okID(try bob.request("REPLY #lobby \(asked) :not me"))
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "not me")

    let original = "#messages .bubble[data-id=\"\(asked)\"]"
    try WebPageTests.press(browser, "Thread", in: original)
    try Self.waitForThread(
      browser,
      [
        "cbtest2:who deploys tonight?", "cbtest2:<b>me</b><img src=x onerror=boom()>",
        "cbtest2:not me",
      ])
    #expect(try Self.note(browser) == "2 replies")
    #expect(
      try browser.js(
        "return document.querySelectorAll('dialog.thread .thread-item .text *').length")
        as? Int == 0, "a reply's HTML is text, no element")
    #expect(
      try browser.js("return document.querySelector('dialog.thread .original')?.dataset.id")
        as? String == asked)

    // A reply that comes while the view is open is added below; a line
    // that answers nothing, or another reply's reply, is not.
    _ = try bob.request("SAY #lobby :coffee?")
    let nested = okID(try bob.request("REPLY #lobby \(second) :why not?"))
    _ = try bob.request("REPLY #lobby \(asked) :count me in")
    try WebPageTests.waitForBubble(browser, "count me in")
    try Self.waitForThread(
      browser,
      [
        "cbtest2:who deploys tonight?", "cbtest2:<b>me</b><img src=x onerror=boom()>",
        "cbtest2:not me", "cbtest2:count me in",
      ])
    #expect(try Self.note(browser) == "3 replies")
    try browser.screenshot("thread")
    // THREAD's HIST lines answered the view, not the conversation: each
    // line once, in the order it came.
    #expect(
      try WebPageTests.bubbles(browser) == [
        "who deploys tonight?", "<b>me</b><img src=x onerror=boom()>", "lunch anyone?", "not me",
        "coffee?", "why not?", "count me in",
      ])

    // Esc closes it.
    try browser.type("dialog.thread button", "", keys: ["ESCAPE"])
    try browser.wait("return !document.querySelector('dialog.thread')")

    // A click on a reply's quote shows the thread of what it answers.
    try browser.click("#messages .bubble[data-id=\"\(first)\"] .quote")
    try Self.waitForThread(
      browser,
      [
        "cbtest2:who deploys tonight?", "cbtest2:<b>me</b><img src=x onerror=boom()>",
        "cbtest2:not me", "cbtest2:count me in",
      ])
    try WebPageTests.press(browser, "Close", in: "dialog.thread")
    try browser.wait("return !document.querySelector('dialog.thread')")
    // The reply to a reply has a thread of its own.
    try browser.click("#messages .bubble[data-id=\"\(nested)\"] .quote")
    try Self.waitForThread(browser, ["cbtest2:not me", "cbtest2:why not?"])
    #expect(try Self.note(browser) == "1 reply")
    try WebPageTests.press(browser, "Close", in: "dialog.thread")
    try browser.wait("return !document.querySelector('dialog.thread')")

    // Reply in the view answers the message, with the composer's reply line.
    try WebPageTests.press(browser, "Thread", in: original)
    try WebPageTests.press(browser, "Reply", in: "dialog.thread")
    try browser.wait("return !document.querySelector('dialog.thread')")
    try browser.wait(
      "return document.getElementById('replying-text').textContent === 'Replying to cbtest2: who deploys tonight?'"
    )
    try browser.type("#text", "I will", keys: ["ENTER"])
    let mine = try bob.expect("MSG #lobby ")
    #expect(mine.hasSuffix(" cbtest1 REPLY \(asked) :I will"), "\(mine)")
    try WebPageTests.waitForBubble(browser, "I will")
    #expect(try bob.request("THREAD #lobby \(asked)").last == "OK THREAD #lobby \(asked) 4")
  }

  @Test(
    "a thread without replies says so; one of over 50 replies shows 50 and says there are more; a message the broker no longer keeps says so and the page goes on"
  )
  func noRepliesAndNoMessage() throws {
    let now = Date().timeIntervalSince1970 - 600
    func message(_ id: String, _ at: Double, _ text: String, replyTo: String? = nil)
      -> [String: Any]
    {
      var record: [String: Any] = [
        "type": "message", "id": id, "to": "#lobby", "from": "cbtest2",
        "at": WebPageTests.iso(at), "text": text,
      ]
      if let replyTo { record["reply_to"] = replyTo }
      return record
    }
    // Message 5 answers message 4, which is no longer kept.
    let (broker, port) = try WebPageTests.door(journal: [
      ["type": "journal", "version": 1, "next_id": "100"],
      ["type": "room", "room": "#lobby", "at": WebPageTests.iso(now - 60)],
      ["type": "member", "user": "cbtest1", "room": "#lobby", "time": WebPageTests.iso(now - 60)],
      ["type": "member", "user": "cbtest2", "room": "#lobby", "time": WebPageTests.iso(now - 60)],
      message("3", now, "anyone here?"),
      message("5", now + 60, "as I said", replyTo: "4"),
    ])
    let bob = try broker.connect(as: "cbtest2")
    #expect(try bob.request("THREAD #lobby 4").last?.hasPrefix("ERR THREAD NOSUCHMSG ") == true)
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "as I said")

    try WebPageTests.press(browser, "Thread", in: "#messages .bubble[data-id=\"3\"]")
    try Self.waitForThread(browser, ["cbtest2:anyone here?"])
    #expect(try Self.note(browser) == "no replies yet")
    // A change to it shows in the open view.
    _ = try bob.request("AMEND #lobby 3 :anyone here at all?")
    try Self.waitForThread(browser, ["cbtest2:anyone here at all?"])
    #expect(
      try browser.js("return document.querySelector('dialog.thread .edited')?.textContent")
        as? String == "(edited)")
    try WebPageTests.press(browser, "Close", in: "dialog.thread")
    try browser.wait("return !document.querySelector('dialog.thread')")

    try browser.click("#messages .bubble[data-id=\"5\"] .quote")
    try browser.wait(
      "return document.querySelector('dialog.thread .thread-note.error')?.textContent === 'That message is no longer kept, or you may not read it.'"
    )
    #expect(
      try browser.js("return document.querySelectorAll('dialog.thread li').length") as? Int == 0)
    #expect(
      try browser.js(
        "return [...document.querySelectorAll('dialog.thread button')].map(b => b.textContent)")
        as? [String] == ["Close"], "no Reply without the message")
    try browser.screenshot("thread-no-message")
    try browser.type("dialog.thread button", "", keys: ["ESCAPE"])
    try browser.wait("return !document.querySelector('dialog.thread')")
    _ = try bob.request("JOIN #lobby")
    try browser.type("#text", "still here", keys: ["ENTER"])
    #expect(try bob.expect("MSG #lobby ").hasSuffix(" cbtest1 :still here"))
    try WebPageTests.waitForBubble(browser, "still here")

    // 51 replies: the view asks for 50 and says there are more; a reply
    // that comes then is not among the first 50, and is not added.
    let replies = try bob.pipeline((1...51).map { "REPLY #lobby 3 :reply \($0)" })
    #expect(replies.allSatisfy { $0.last?.hasPrefix("OK REPLY ") == true })
    try WebPageTests.waitForBubble(browser, "reply 51")
    try WebPageTests.press(browser, "Thread", in: "#messages .bubble[data-id=\"3\"]")
    try Self.waitForThread(
      browser, ["cbtest2:anyone here at all?"] + (1...50).map { "cbtest2:reply \($0)" })
    #expect(try Self.note(browser) == "50 replies; more replies: only the first 50 are shown")
    _ = try bob.request("REPLY #lobby 3 :one too many")
    try WebPageTests.waitForBubble(browser, "one too many")
    #expect(
      try browser.js("return document.querySelectorAll('dialog.thread .thread-item').length")
        as? Int == 51)
  }
}

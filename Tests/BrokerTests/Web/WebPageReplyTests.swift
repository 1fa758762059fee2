import Foundation
import TestSupport
import Testing

/// Replies on the chat page (chatbroker(7), `REPLY`): a Reply button on a
/// bubble, the line that says what the next message answers, and a quote
/// at the top of every reply, as text, whichever door sent it.
@Suite("The chat page: replies", .serialized, UnixUsers.required, Browser.required)
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
}

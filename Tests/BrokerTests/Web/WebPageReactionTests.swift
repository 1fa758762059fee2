import Foundation
import TestSupport
import Testing

/// Reactions on the chat page (chatbroker(7), `REACT`): React on a bubble
/// offers a few and a field for another, chips under the bubble count each
/// reaction with mine pressed, a click on a chip puts mine on or takes it
/// off, and `REACT`, `UNREACT` and `HIST`'s `REACTIONS` keep them current.
@Suite("The chat page: reactions", .serialized, UnixUsers.required, Browser.required)
struct WebPageReactionTests {
  /// Waits until the chips of the open conversation read `expected`, in
  /// order, each `reaction count`, with ` (mine)` on those pressed.
  static func waitForChips(_ browser: Browser, _ expected: [String]) throws {
    try browser.wait(
      """
      return [...document.querySelectorAll('#messages .reactions .chip')].map(n =>
        n.textContent + (n.getAttribute('aria-pressed') === 'true' ? ' (mine)' : '')).join('|')
        === \(Browser.literal(expected.joined(separator: "|")))
      """)
  }

  @Test(
    "React sends REACT; another's reactions show as chips with counts, live and after a reload; a chip toggles mine; a reaction is text"
  )
  func reactBothWays() throws {
    let (broker, port) = try WebPageTests.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    let asked = okID(try bob.request("SAY #lobby :ship it?"))
    let browser = try WebPageTests.page(broker, port: port)
    try WebPageTests.openConversation(browser, "#lobby")
    try WebPageTests.waitForBubble(browser, "ship it?")

    try WebPageTests.press(browser, "React", in: "#messages .theirs .bubble")
    try WebPageTests.press(browser, "🎉", in: "dialog")
    #expect(try bob.expect("REACT ") == "REACT #lobby \(asked) cbtest1 🎉")
    try Self.waitForChips(browser, ["🎉 1 (mine)"])
    #expect(try browser.js("return document.querySelectorAll('dialog').length") as? Int == 0)

    #expect(try bob.request("REACT #lobby \(asked) 🎉").last == "OK REACT #lobby \(asked) 🎉")
    _ = try bob.request("REACT #lobby \(asked) <b>x</b>")
    try Self.waitForChips(browser, ["🎉 2 (mine)", "<b>x</b> 1"])
    #expect(
      try browser.js("return document.querySelectorAll('#messages .reactions .chip *').length")
        as? Int == 0, "a reaction is text, no element")
    try browser.screenshot("reactions")

    try WebPageTests.press(browser, "🎉 2", in: "#messages .reactions")
    #expect(try bob.expect("UNREACT ") == "UNREACT #lobby \(asked) cbtest1 🎉")
    try Self.waitForChips(browser, ["🎉 1", "<b>x</b> 1"])
    try WebPageTests.press(browser, "React", in: "#messages .theirs .bubble")
    try browser.type("dialog input", "lol", keys: ["ENTER"])
    #expect(try bob.expect("REACT ") == "REACT #lobby \(asked) cbtest1 lol")
    try Self.waitForChips(browser, ["🎉 1", "<b>x</b> 1", "lol 1 (mine)"])
    _ = try bob.request("UNREACT #lobby \(asked) <b>x</b>")
    try Self.waitForChips(browser, ["🎉 1", "lol 1 (mine)"])

    try browser.js("location.reload()")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    try WebPageTests.openConversation(browser, "#lobby")
    try Self.waitForChips(browser, ["🎉 1", "lol 1 (mine)"])
  }
}

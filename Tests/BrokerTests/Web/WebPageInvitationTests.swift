import Testing

/// An invitation on the page (chatbroker(7), `INVITE` line): the invited
/// user is told, and the private room is listed to join.
extension WebPageTests {
  @Test("invited to a private room, the page says who invited you and lists the room to join")
  func invitation() throws {
    let (broker, port) = try Self.door()
    let browser = try Self.page(broker, port: port)
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #plans invite")
    #expect(try bob.request("INVITE #plans cbtest1") == ["OK INVITE #plans cbtest1"])
    try browser.wait(
      """
      return document.getElementById('status').textContent
          === 'cbtest2 invited you to #plans: open it under Rooms to join'
        && [...document.querySelectorAll('#rooms button')].some(b => b.textContent.includes('#plans'))
      """)
    try browser.screenshot("invited")
  }
}

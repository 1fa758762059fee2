import Testing

/// DNS rebinding against the web door (chatbroker(8), "The web door"): a
/// site whose name comes to resolve to 127.0.0.1 runs its script in the
/// user's own browser, as the user's uid, at its own origin on the door's
/// address. The kernel's word names the user, so only the Host allow-list
/// and the Origin check stand between that script and the user's chat.
extension WebPageTests {
  @Test(
    "DNS rebinding: at evil.test on the door's address the page is not served, and a script there reads nothing and opens no WebSocket, even with the user's token"
  )
  func rebinding() throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    // evil.test resolves to the door, as after its DNS answer changed.
    let browser = try Browser(user: "cbtest1", hostRules: "MAP evil.test 127.0.0.1")
    try browser.open("http://evil.test:\(port)/")
    #expect(
      try browser.js("return document.getElementById('me') === null") as? Bool == true,
      "the chat page is not served for Host evil.test")
    // The attacker's script, at http://evil.test:PORT: a same-origin read
    // of the door, and a WebSocket by the rebound name (Host evil.test),
    // sending the token first. (One to localhost would carry Origin
    // evil.test: Chromium's own Local Network Access holds it, and a plain
    // client shows the door refusing it, WebDoorTests.)
    try browser.js(
      """
      window.attack = { read: null, sockets: {} };
      fetch('/').then(r => r.text().then(t => {
        attack.read = r.status + ':' + t.includes('id="me"');
      })).catch(() => { attack.read = 'failed'; });
      for (const url of ['ws://evil.test:\(port)/ws']) {
        const got = attack.sockets[url] = { opened: false, lines: [], closed: false };
        const socket = new WebSocket(url, 'chatbroker');
        socket.onopen = () => { got.opened = true; socket.send('TOKEN \(token)'); };
        socket.onmessage = (event) => got.lines.push(event.data);
        socket.onclose = () => { got.closed = true; };
      }
      """)
    do {
      try browser.wait(
        "return attack.read !== null && Object.values(attack.sockets).every(s => s.closed)")
    } catch {
      let state = try browser.js("return JSON.stringify(window.attack) + ' at ' + location.href")
      Issue.record("the attack did not end: \(String(describing: state))")
      throw error
    }
    let read = try browser.js("return attack.read") as? String
    #expect(read == "403:false", "the door refuses the read: \(read ?? "nil")")
    for url in ["ws://evil.test:\(port)/ws"] {
      let opened = try browser.js("return attack.sockets['\(url)'].opened") as? Bool
      let lines = try browser.js("return attack.sockets['\(url)'].lines") as? [String]
      #expect(
        opened == false && lines == [],
        "\(url): opened \(String(describing: opened)), \(lines ?? [])")
    }
    // The same browser, the same user and token, at localhost: served.
    try browser.open("http://localhost:\(port)/#k=\(token)")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
  }
}

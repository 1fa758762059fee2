import Foundation
import Glibc
import Posix
import TestSupport
import Testing

/// The chat page the web door serves (chatbroker(7), "The web door"), in a
/// real Chromium run by cbtest1, against the real broker, with cbtest2 on
/// the Unix socket: what a person sees on the page, asserted on its DOM,
/// with screenshots in `.build/check/web/` for a person to look at.
@Suite("The chat page in a browser", .serialized, UnixUsers.required, Browser.required)
struct WebPageTests {
  /// A broker with its web door on a free port, its journal prepared with
  /// `records` (chatbroker(8), JOURNAL FORMAT) when there are some.
  static func door(journal records: [[String: Any]] = []) throws -> (BrokerProcess, UInt16) {
    try UnixUsers.ensure()
    let broker = try BrokerProcess()
    if !records.isEmpty {
      try FileManager.default.createDirectory(
        atPath: broker.stateDirectory, withIntermediateDirectories: true)
      let lines = try records.map {
        String(
          decoding: try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys),
          as: UTF8.self)
      }
      try (lines.joined(separator: "\n") + "\n").write(
        toFile: broker.journalPath, atomically: true, encoding: .utf8)
    }
    let port = try LoopbackSocket.freePort()
    try broker.start(["--no-sync", "--verbose", "--web-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("web=127.0.0.1:\(port)")
    return (broker, port)
  }

  /// The page opened by cbtest1 with the link `chatsh web` prints, once it
  /// is greeted.
  static func page(_ broker: BrokerProcess, port: UInt16, width: Int = 1100) throws -> Browser {
    let token = try broker.webToken(for: "cbtest1")
    let browser = try Browser(user: "cbtest1", width: width)
    try browser.open("http://localhost:\(port)/#k=\(token)")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    return browser
  }

  /// Opens `target` with the page's own form, as a person types it.
  static func openConversation(_ browser: Browser, _ target: String) throws {
    try browser.type("#open-input", target, keys: ["ENTER"])
    try browser.wait(
      "return document.getElementById('title').textContent === \(Browser.literal(target))")
  }

  /// What the conversation shows, top to bottom: day separators, the
  /// "new" line, and each group of bubbles as side:author:text|text.
  static let layout = """
    return [...document.querySelectorAll('#messages > *')].map(n =>
      n.classList.contains('day') ? 'day:' + n.textContent
      : n.classList.contains('new-line') ? 'new'
      : n.classList.contains('group') ? (n.classList.contains('mine') ? 'mine:' : 'theirs:')
        + n.dataset.user + ':' + [...n.querySelectorAll('.bubble')].map(b =>
          b.querySelector('.text').textContent + (b.classList.contains('sending') ? '(sending)' : '')).join('|')
      : n.classList.contains('action') || n.classList.contains('notice')
        ? n.className + ':' + n.firstChild.textContent
      : 'other:' + n.className)
    """

  static func layout(_ browser: Browser) throws -> [String] {
    try browser.js(layout) as? [String] ?? []
  }

  /// Every bubble's text in the open conversation, in order.
  static func bubbles(_ browser: Browser) throws -> [String] {
    try browser.js(
      "return [...document.querySelectorAll('#messages .bubble .text')].map(n => n.textContent)")
      as? [String] ?? []
  }

  static func waitForBubble(_ browser: Browser, _ text: String, timeout: Double = 10) throws {
    try browser.wait(
      """
      return [...document.querySelectorAll('#messages .bubble:not(.sending) .text')]
        .some(n => n.textContent === \(Browser.literal(text)))
      """, timeout: timeout)
  }

  static func iso(_ seconds: Double) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: seconds))
  }

  @Test(
    "a prepared journal: bubbles grouped by author, initials, day separators across midnight, the new line at the read marker; then both ways"
  )
  func conversation() throws {
    // Midnight UTC (the browser's zone) that began yesterday: two lines
    // before it, two after, then two after cbtest1's read marker.
    let today = (Date().timeIntervalSince1970 / 86400).rounded(.down) * 86400
    let midnight = today - 86400
    func message(_ id: String, _ from: String, _ at: Double, _ text: String) -> [String: Any] {
      ["type": "message", "id": id, "to": "#lobby", "from": from, "at": Self.iso(at), "text": text]
    }
    let (broker, port) = try Self.door(journal: [
      ["type": "journal", "version": 1, "next_id": "100"],
      ["type": "room", "room": "#lobby", "at": Self.iso(midnight - 3600)],
      ["type": "member", "user": "cbtest1", "room": "#lobby", "time": Self.iso(midnight - 3600)],
      ["type": "member", "user": "cbtest2", "room": "#lobby", "time": Self.iso(midnight - 3600)],
      message("1", "cbtest2", midnight - 120, "good night"),
      message("2", "cbtest2", midnight - 60, "see you tomorrow"),
      message("3", "cbtest1", midnight + 60, "still up?"),
      message("4", "cbtest2", midnight + 120, "now I am"),
      message("5", "cbtest2", midnight + 36000, "morning @cbtest1"),
      message("6", "cbtest2", midnight + 36060, "the build is green"),
      [
        "type": "read", "user": "cbtest1", "target": "#lobby", "id": "4",
        "time": Self.iso(midnight + 200),
      ],
    ])
    let browser = try Self.page(broker, port: port)
    try browser.wait("return document.querySelectorAll('#messages .bubble').length === 6")
    let weekday = DateFormatter()
    weekday.locale = Locale(identifier: "en_GB")
    weekday.timeZone = TimeZone(identifier: "UTC")
    weekday.dateFormat = "EEEE"
    #expect(
      try Self.layout(browser) == [
        "day:" + weekday.string(from: Date(timeIntervalSince1970: midnight - 60)),
        "theirs:cbtest2:good night|see you tomorrow",
        "day:Yesterday",
        "mine:cbtest1:still up?",
        "theirs:cbtest2:now I am",
        "new",
        "theirs:cbtest2:morning @cbtest1|the build is green",
      ])
    // Others' groups have an avatar of initials in one colour per user;
    // yours none. Each bubble shows its time.
    let avatars =
      try browser.js(
        """
        return [...document.querySelectorAll('#messages .group')].map(g => {
          const a = g.querySelector('.avatar');
          return a ? a.textContent + ' ' + getComputedStyle(a).backgroundColor : 'none';
        })
        """) as? [String] ?? []
    #expect(avatars.count == 4 && avatars[1] == "none", "\(avatars)")
    #expect(avatars[0].hasPrefix("C2 rgb(") && avatars[0] == avatars[2] && avatars[0] == avatars[3])
    // In the browser's locale, en-US (the one Debian's chromium ships).
    let times = try browser.js(
      """
      return [...document.querySelectorAll('#messages .bubble time')]
        .map(t => t.textContent.replace(/\\s/g, ' '))
      """)
    #expect(
      times as? [String] == [
        "11:58 PM", "11:59 PM", "12:01 AM", "12:02 AM", "10:00 AM", "10:01 AM",
      ], "\(times ?? "")")
    #expect(
      try browser.js(
        "const a = document.querySelector('.group.mine'); return getComputedStyle(a).justifyContent"
      )
        as? String == "flex-end")
    try browser.screenshot("conversation")
    // Seen, so read: the page moved cbtest1's marker to the newest line.
    try waitUntil(timeout: 10, "the read marker at the newest line") {
      try broker.connect(as: "cbtest1").request("CONVERSATIONS").contains {
        $0.hasPrefix("CONV #lobby 6 ") && $0.hasSuffix(" 6 0 0")
      }
    }

    // Both ways: cbtest2 on the Unix socket, cbtest1 in the page.
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #lobby")
    _ = try bob.request("SAY #lobby :hello page")
    try Self.waitForBubble(browser, "hello page")
    try browser.type("#text", "hi bob", keys: ["ENTER"])
    #expect(try bob.expect("MSG #lobby ").hasSuffix(" cbtest1 :hi bob"))
    try Self.waitForBubble(browser, "hi bob")
    #expect(
      Array(try Self.layout(browser).suffix(4)) == [
        "day:Today", "notice:cbtest2 joined", "theirs:cbtest2:hello page", "mine:cbtest1:hi bob",
      ])

    // A text full of HTML and script is shown as it is.
    let hostile =
      #"<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><b>bold</b> https://example.com/a?b=1 javascript:alert(1)"#
    _ = try bob.request("SAY #lobby :" + hostile)
    try Self.waitForBubble(browser, hostile)
    #expect(
      try browser.js(
        "return document.querySelectorAll('#messages img, #messages script, #messages b').length")
        as? Int == 0)
    #expect(try browser.js("return typeof window.pwned") as? String == "undefined")
    #expect(
      try browser.js(
        "return [...document.querySelectorAll('#messages a')].map(a => a.href + ' ' + a.rel + ' ' + a.target)"
      )
        as? [String] == ["https://example.com/a?b=1 noopener noreferrer _blank"])
    try browser.screenshot("conversation-live")

    // A direct message while #lobby is open: its conversation is listed
    // with one unread line, counted as for you; opened, it is read.
    _ = try bob.request("SAY @cbtest1 :psst")
    let badge = "#conversations button[data-target=\"@cbtest2\"] .badge"
    try browser.wait(
      "return document.querySelector('\(badge).mention')?.textContent === '1'")
    try browser.click("#conversations button[data-target=\"@cbtest2\"]")
    try Self.waitForBubble(browser, "psst")
    try browser.wait("return !document.querySelector('\(badge)')")

    // On a phone the conversations slide away behind a menu button, which
    // brings them back; Esc hides them again.
    try browser.resize(width: 390, height: 760)
    let hidden =
      "document.getElementById('sidebar').getBoundingClientRect().right <= 0"
    try browser.wait(
      "return \(hidden) && getComputedStyle(document.getElementById('menu')).display !== 'none'")
    try browser.screenshot("phone")
    try browser.click("#menu")
    try browser.wait("return document.getElementById('sidebar').getBoundingClientRect().left >= 0")
    try browser.screenshot("phone-menu")
    try browser.type("#open-input", "", keys: ["ESCAPE"])
    try browser.wait("return \(hidden)")
  }

  @Test("a revoked link: the page shows why the broker refused it, and sending is off")
  func revoked() throws {
    let (broker, port) = try Self.door()
    let browser = try Self.page(broker, port: port)
    try Self.openConversation(browser, "#gone")
    #expect(
      try broker.connect(as: "cbtest1").request("WEB REVOKE").last?.hasPrefix("OK WEB REVOKED ")
        == true)
    try browser.wait(
      """
      return document.getElementById('status').textContent.includes('run chatsh web again for a new one')
        && document.getElementById('text').disabled
      """)
    try browser.screenshot("revoked")
  }

  @Test(
    "notifications: off until allowed; once allowed, for mentions and direct messages while the tab is hidden, not for other lines"
  )
  func notifications() throws {
    let (broker, port) = try Self.door()
    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #n")
    for allowed in [false, true] {
      let token = try broker.webToken(for: "cbtest1")
      let browser = try Browser(user: "cbtest1", notifications: allowed)
      try browser.open("http://localhost:\(port)/#k=\(token)")
      try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
      try Self.openConversation(browser, "#n")
      #expect(
        try browser.js("return document.getElementById('notify').textContent") as? String
          == (allowed ? "Notifications on" : "Notify me"))
      // The tab hidden, and each notification the page makes recorded.
      try browser.js(
        """
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
        window.shown = [];
        const Real = window.Notification;
        window.Notification = class extends Real {
          constructor(title, options) { super(title, options); window.shown.push(title + ': ' + options.body); }
        };
        """)
      for line in ["SAY #n :just chatting", "SAY #n :@cbtest1 look at this", "SAY @cbtest1 :psst"] {
        _ = try bob.request(line)
      }
      try browser.wait(
        "return document.querySelector('#conversations button[data-target=\"@cbtest2\"]')")
      try Self.waitForBubble(browser, "@cbtest1 look at this")
      #expect(
        try browser.js("return window.shown") as? [String]
          == (allowed ? ["cbtest2 in #n: @cbtest1 look at this", "cbtest2: psst"] : []))
      // Seen: no notification.
      try browser.js(
        "Object.defineProperty(document, 'hidden', { configurable: true, get: () => false })")
      _ = try bob.request("SAY #n :@cbtest1 and this")
      try Self.waitForBubble(browser, "@cbtest1 and this")
      #expect(try browser.js("return window.shown.length") as? Int == (allowed ? 2 : 0))
    }
  }

  @Test("dark when the system is dark")
  func dark() throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    let browser = try Browser(user: "cbtest1", dark: true)
    try browser.open("http://localhost:\(port)/#k=\(token)")
    try browser.wait("return document.getElementById('me').textContent === 'cbtest1'")
    try Self.openConversation(browser, "#dark")
    try browser.type("#text", "lights out", keys: ["ENTER"])
    try Self.waitForBubble(browser, "lights out")
    #expect(
      try browser.js("return getComputedStyle(document.body).backgroundColor") as? String
        == "rgb(21, 23, 27)")
    try browser.screenshot("dark")
  }

  @Test(
    "a line scheduled from the page arrives with nobody online; the scheduled list shows it and a series in words"
  )
  func sendLater() throws {
    let (broker, port) = try Self.door()
    let alice = try broker.connect(as: "cbtest1")
    _ = try alice.request("JOIN #later")
    #expect(
      try alice.request("SAYEVERY #later weekdays@09:00/UTC :stand-up").last?.hasPrefix(
        "OK SAYEVERY ") == true)
    let browser = try Self.page(broker, port: port)
    try Self.openConversation(browser, "#later")
    // The clock beside Send: a time in the browser's zone, five seconds on.
    try browser.click("#later")
    try browser.wait("return document.querySelector('dialog[open] input[type=datetime-local]')")
    let buttonsAlike = try browser.js(
      """
      const b = [...document.querySelectorAll('dialog[open] .dialog-buttons button')];
      return b.length === 2 && b[0].offsetHeight === b[1].offsetHeight
        && b[0].offsetHeight > 0 && !b[0].classList.contains('small');
      """)
    #expect(buttonsAlike as? Bool == true, "the dialog's Cancel is as large as its OK")
    try browser.js(
      """
      const due = new Date(Date.now() + 5000), p = n => String(n).padStart(2, '0');
      document.querySelector('dialog[open] input[type=datetime-local]').value =
        due.getFullYear() + '-' + p(due.getMonth() + 1) + '-' + p(due.getDate()) + 'T'
        + p(due.getHours()) + ':' + p(due.getMinutes()) + ':' + p(due.getSeconds());
      """)
    try browser.type("dialog[open] textarea", "sent while nobody was here")
    try browser.click("dialog[open] button[type=submit]")
    try browser.wait("return !document.querySelector('dialog[open]')")
    try browser.click("#scheduled-open")
    try browser.wait(
      "return document.querySelectorAll('dialog[open] .sched-list > li[data-id]').length === 2")
    let listed =
      try browser.js(
        """
        return [...document.querySelectorAll('dialog[open] .sched-list > li')].map(li =>
          li.querySelector('.sched-text').textContent + ' / ' + (li.querySelector('.rule') || {}).textContent
          + ' / ' + !!li.querySelector('time'))
        """) as? [String] ?? []
    #expect(
      listed == [
        "sent while nobody was here / undefined / true",
        "stand-up / every weekday at 09:00 (UTC) / true",
      ])
    try browser.screenshot("scheduled")
    // Nobody online: the browser gone, cbtest1's other session too.
    browser.quit()
    _ = try alice.request("QUIT")
    try waitUntil(timeout: 10, "cbtest1 to be offline") {
      try broker.connect(as: "cbtest2").request("WHO #later").last == "OK WHO #later 0"
    }
    let bob = try broker.connect(as: "cbtest2")
    try waitUntil(timeout: 15, "the scheduled line in the history") {
      try bob.request("HISTORY #later").contains {
        $0.hasSuffix(" cbtest1 :sent while nobody was here")
      }
    }
  }

  @Test("the page survives a broker restart: every line once, in order, and it sends again")
  func restart() throws {
    let (broker, port) = try Self.door()
    var bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #r")
    let browser = try Self.page(broker, port: port)
    try Self.openConversation(browser, "#r")
    for text in ["one", "two"] { _ = try bob.request("SAY #r :" + text) }
    try Self.waitForBubble(browser, "two")
    // Two lines written to the journal while the broker is down: the page
    // can only have them from HISTORY ... AFTER once it is back.
    try broker.stop()
    let missed = ["three", "four"].enumerated().map { index, text in
      let record: [String: Any] = [
        "type": "message", "id": "y0000000000\(index + 1)", "to": "#r", "from": "cbtest2",
        "at": Self.iso(Date().timeIntervalSince1970), "text": text,
      ]
      return String(
        decoding: try! JSONSerialization.data(withJSONObject: record, options: .sortedKeys),
        as: UTF8.self)
    }
    try (broker.journal + missed.joined(separator: "\n") + "\n").write(
      toFile: broker.journalPath, atomically: true, encoding: .utf8)
    try broker.start(["--no-sync", "--verbose", "--web-listen", "127.0.0.1:\(port)"])
    bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #r")
    try Self.waitForBubble(browser, "four", timeout: 20)
    _ = try bob.request("SAY #r :five")
    try Self.waitForBubble(browser, "five")
    try browser.type("#text", "six", keys: ["ENTER"])
    #expect(try bob.expect("MSG #r ").hasSuffix(" cbtest1 :six"))
    try Self.waitForBubble(browser, "six")
    #expect(try Self.bubbles(browser) == ["one", "two", "three", "four", "five", "six"])
    try browser.screenshot("after-restart")
  }

  @Test(
    "scroll-back to the first line, search, a topic, Shift-Enter for a message of two lines, Esc, and taking back your own line"
  )
  func scrollBackSearchAndTakeBack() throws {
    let start = Date().timeIntervalSince1970 - 3 * 3600
    let (broker, port) = try Self.door(
      journal: [
        ["type": "journal", "version": 1, "next_id": "1000"],
        ["type": "room", "room": "#old", "at": Self.iso(start - 60)],
        ["type": "member", "user": "cbtest1", "room": "#old", "time": Self.iso(start - 60)],
      ]
        + (1...130).map { number in
          [
            "type": "message", "id": String(number, radix: 36), "to": "#old", "from": "cbtest2",
            "at": Self.iso(start + Double(number) * 60), "text": "line \(number)",
          ]
        } + [
          [
            "type": "read", "user": "cbtest1", "target": "#old", "id": String(130, radix: 36),
            "time": Self.iso(start + 131 * 60),
          ]
        ])
    let browser = try Self.page(broker, port: port)
    try browser.wait("return document.querySelectorAll('#messages .bubble').length === 50")
    #expect(try Self.bubbles(browser).first == "line 81")
    // Up to the top, and on: every line once, in order, then no more to load.
    try browser.wait(
      """
      const box = document.getElementById('messages');
      box.scrollTop = 0;
      box.dispatchEvent(new Event('scroll'));
      return document.querySelectorAll('#messages .bubble').length === 130
        && !document.querySelector('#messages .older');
      """)
    #expect(try Self.bubbles(browser) == (1...130).map { "line \($0)" })

    try browser.type("#search-input", "7", keys: ["ENTER"])
    try browser.wait("return document.querySelector('dialog[open] .result-list li')")
    #expect(
      try browser.js(
        "return [...document.querySelectorAll('dialog[open] .result-list li .sched-text')].map(n => n.textContent)"
      ) as? [String] == ["line 7"])
    try browser.type("dialog[open] input", "", keys: ["ESCAPE"])
    try browser.wait("return !document.querySelector('dialog[open]')")

    let bob = try broker.connect(as: "cbtest2")
    _ = try bob.request("JOIN #old")
    _ = try bob.request("TOPIC #old :old lines")
    try browser.wait("return document.getElementById('topic').textContent === 'old lines'")

    try browser.type("#text", "first", keys: ["SHIFT", "ENTER", "NULL"])
    try browser.type("#text", "second", keys: ["ENTER"])
    // Two lines are one message (chatbroker(7), BLOCK).
    let second = try bob.expect("MSG #old ")
    #expect(second.hasSuffix(#" cbtest1 BLOCK :first\nsecond"#))
    try Self.waitForBubble(browser, "first\nsecond")
    try browser.js(
      "document.querySelector('#messages .mine .bubble:last-child .take-back').click()")
    try browser.wait("return document.querySelector('dialog[open] button[type=submit]')")
    try browser.click("dialog[open] button[type=submit]")
    let id = second.split(separator: " ")[2]
    #expect(try bob.expect("REDACT #old ") == "REDACT #old \(id) cbtest1")
    try browser.wait(
      "return document.querySelector('#messages .mine .bubble:last-child .text').textContent === 'you took this message back'"
    )
    try browser.screenshot("taken-back")
  }

  /// Clicks the button named `label` inside what `css` matches last.
  static func press(_ browser: Browser, _ label: String, in css: String) throws {
    try browser.wait(
      """
      const scopes = document.querySelectorAll(\(Browser.literal(css)));
      const scope = scopes[scopes.length - 1];
      const found = scope && [...scope.querySelectorAll('button')]
        .find(b => b.textContent === \(Browser.literal(label)));
      if (found) found.click();
      return !!found;
      """)
  }

  @Test(
    "the scheduled list edits, reschedules and cancels a message, and skips and replaces one occurrence of a series"
  )
  func scheduledList() throws {
    let (broker, port) = try Self.door()
    let alice = try broker.connect(as: "cbtest1")
    _ = try alice.request("JOIN #s")
    let draft = try alice.request("SAYAT #s +1h :draft").last?.split(separator: " ")[2] ?? ""
    let series =
      try alice.request("SAYEVERY #s daily@09:00/UTC :stand-up").last?.split(separator: " ")[2]
      ?? ""
    let next = try alice.request("SCHEDULED \(series) NEXT 2").compactMap {
      $0.hasPrefix("SCHED ") ? String($0.split(separator: " ")[3]) : nil
    }
    #expect(next.count == 2)
    let browser = try Self.page(broker, port: port)
    try browser.click("#scheduled-open")
    let draftItem = "dialog[open] li[data-id=\"\(draft)\"]"
    try browser.wait("return document.querySelector(\(Browser.literal(draftItem)))")

    try Self.press(browser, "Edit", in: draftItem)
    try browser.wait("return document.querySelectorAll('dialog[open]').length === 2")
    try browser.js("document.querySelector('dialog[open]:last-of-type textarea').value = ''")
    try browser.type("dialog[open]:last-of-type textarea", "final text")
    try browser.click("dialog[open]:last-of-type button[type=submit]")
    try browser.wait(
      "return document.querySelector(\(Browser.literal(draftItem + " .sched-text")))?.textContent === 'final text'"
    )

    try Self.press(browser, "Reschedule", in: draftItem)
    try browser.wait("return document.querySelectorAll('dialog[open]').length === 2")
    let day = Date(
      timeIntervalSince1970: ((Date().timeIntervalSince1970 / 86400).rounded(.down) + 2) * 86400)
    let moved = String(Self.iso(day.timeIntervalSince1970).prefix(10))
    try browser.js(
      "document.querySelector('dialog[open]:last-of-type input[type=datetime-local]').value = '\(moved)T12:00'"
    )
    try browser.click("dialog[open]:last-of-type button[type=submit]")
    try browser.wait("return document.querySelectorAll('dialog[open]').length === 1")
    #expect(
      try alice.request("SCHEDULED #s").contains {
        $0.hasPrefix("SCHED \(draft) #s \(moved)T12:00:00.000Z ") && $0.hasSuffix(" :final text")
      })

    let seriesItem = "dialog[open] li[data-id=\"\(series)\"]"
    #expect(
      try browser.js(
        "return document.querySelector(\(Browser.literal(seriesItem + " .rule"))).textContent")
        as? String == "every day at 09:00 (UTC)")
    try Self.press(browser, "Occurrences", in: seriesItem)
    try Self.press(browser, "Skip", in: seriesItem + " .occurrences li[data-due=\"\(next[1])\"]")
    try waitUntil(timeout: 10, "the occurrence left out") {
      try !alice.request("SCHEDULED \(series) NEXT 2").contains { $0.contains(" \(next[1]) ") }
    }
    try Self.press(browser, "Occurrences", in: seriesItem)
    try Self.press(browser, "Replace", in: seriesItem + " .occurrences li[data-due=\"\(next[0])\"]")
    try browser.wait("return document.querySelectorAll('dialog[open]').length === 2")
    try browser.js(
      "document.querySelector('dialog[open]:last-of-type textarea').value = 'stand-up, moved'")
    try browser.click("dialog[open]:last-of-type button[type=submit]")
    try waitUntil(timeout: 10, "the occurrence replaced") {
      try alice.request("SCHEDULED #s").contains {
        $0.contains(" #s \(next[0]) ") && $0.hasSuffix(" :stand-up, moved")
      }
    }

    try Self.press(browser, "Cancel", in: draftItem)
    try browser.wait("return !document.querySelector(\(Browser.literal(draftItem)))")
    #expect(try !alice.request("SCHEDULED #s").contains { $0.hasPrefix("SCHED \(draft) ") })
    try browser.screenshot("scheduled-series")
  }
}

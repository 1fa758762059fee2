import Broker
import Dispatch
import Foundation
import Glibc
import LineProtocol
import Posix
import ProtocolFuzz
import TestSupport
import Testing

/// The web door against the real binary, as real Unix users on loopback TCP
/// (chatbroker(8), THE WEB DOOR; chatbroker(7), "The web door"): the kernel
/// names each connection's owner, and only a token of that same user opens
/// a session; other sites' pages, rebound names, root and the broker's own
/// user are refused, and what the door sends is the same line protocol.
@Suite("The web door", .serialized, UnixUsers.required)
struct WebDoorTests {
  /// A broker with its web door on a free port of 127.0.0.1, logging
  /// every request it serves (`--verbose`: `msg=request ... verb=`).
  static func door(_ extra: [String] = []) throws -> (broker: BrokerProcess, port: UInt16) {
    try UnixUsers.ensure()
    let port = try LoopbackSocket.freePort()
    let broker = try BrokerProcess().start(
      ["--no-sync", "--verbose", "--web-listen", "127.0.0.1:\(port)"] + extra)
    try broker.waitForLog("web=127.0.0.1:\(port)")
    return (broker, port)
  }

  /// The requests of `user` the broker served but `WEB` (the token's, on
  /// the Unix socket), as `--verbose` logs them.
  static func requestsServed(_ broker: BrokerProcess, of user: String) -> [Substring] {
    broker.log.split(separator: "\n").filter {
      $0.contains("msg=request ") && $0.contains("user=\(user) ") && !$0.contains("verb=WEB")
    }
  }

  /// The fields every response has, and no CORS field.
  static func expectSecurityFields(_ response: WebDoorClient.Response) {
    #expect(
      response.field("content-security-policy") == "default-src 'self'; frame-ancestors 'none'",
      "\(response)")
    #expect(response.field("x-content-type-options") == "nosniff")
    #expect(response.field("referrer-policy") == "no-referrer")
    #expect(
      !response.fields.contains { $0.name.hasPrefix("access-control-") },
      "a CORS field: \(response)")
  }

  @Test("the page's four files are served from the binary, with the security fields and no CORS")
  func files() throws {
    let (broker, port) = try Self.door()
    defer { withExtendedLifetime(broker) {} }
    for (path, file, type) in [
      ("/", "index.html", "text/html; charset=utf-8"),
      ("/app.js", "app.js", "text/javascript; charset=utf-8"),
      ("/app.css", "app.css", "text/css; charset=utf-8"),
      ("/icon.svg", "icon.svg", "image/svg+xml"),
    ] {
      let response = try WebDoorClient(port: port, as: "cbtest1").get(path)
      #expect(response.status == 200, "\(path): \(response)")
      #expect(response.field("content-type") == type)
      let source = try String(
        contentsOfFile: Repository.path("Sources/WebPage/page/\(file)"), encoding: .utf8)
      #expect(response.body == source, "\(path) is not the file in the repository")
      Self.expectSecurityFields(response)
    }
    for path in ["/index.html", "/ws/", "/.git/config", "/app.js.map"] {
      let response = try WebDoorClient(port: port, as: "cbtest1").get(path)
      #expect(response.status == 404, "\(path): \(response)")
      Self.expectSecurityFields(response)
    }
  }

  @Test(
    "chatsh web prints the link; its token opens a session of its user, who chats with the Unix socket's"
  )
  func chatWithTheLink() throws {
    let (broker, port) = try Self.door()
    let result = try AsUser.run(
      "cbtest1", [BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "web"])
    #expect(result.status == 0, "\(result.errors)")
    let link = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(link.hasPrefix("http://localhost:\(port)/#k="), "\(link)")
    #expect(result.errors.contains("the link works for you only, until "), "\(result.errors)")
    let token = String(link.split(separator: "=").last ?? "")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try page.open(token: token).hasPrefix("HELLO \(chatbrokerVersion) cbtest1 :"))
    let bob = try broker.connect(as: "cbtest2")
    #expect(try bob.request("JOIN #web") == ["OK JOIN #web 1"])
    #expect(try page.request("JOIN #web") == ["OK JOIN #web 2"])
    _ = try bob.expect("JOIN #web cbtest1")
    let said = try page.request("SAY #web :<b>hi</b> from the browser")
    #expect(said.last?.hasPrefix("OK SAY ") == true, "\(said)")
    #expect(try bob.expect("MSG #web ").hasSuffix(" cbtest1 :<b>hi</b> from the browser"))
    #expect(try bob.request("SAY #web :hello page").last?.hasPrefix("OK SAY ") == true)
    #expect(try page.nextText().hasSuffix(" cbtest2 :hello page"))
    // Pipelined: every reply, in order.
    try page.send((1...20).flatMap { WebSocketFrames.text("PING \($0)") })
    for number in 1...20 { #expect(try page.nextText() == "OK PING \(number)") }
  }

  @Test(
    "a wrong, malformed or missing token, or a first frame that is no TOKEN: ERR - NOACCESS and close 1008",
    arguments: [
      "TOKEN " + String(repeating: "0", count: 64), "TOKEN nope", "TOKEN ", "PING 1",
      "JOIN #web", "HELP",
    ])
  func wrongToken(first: String) throws {
    let (broker, port) = try Self.door()
    _ = try broker.webToken(for: "cbtest1")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try page.upgrade().status == 101)
    try page.line(first)
    let (code, reason, texts) = try page.expectClose()
    #expect(texts.count == 1 && texts[0].hasPrefix("ERR - NOACCESS :"), "\(texts)")
    #expect(code == 1008)
    #expect(texts.first?.hasSuffix(":" + reason) == true, "the close names the same reason")
    #expect(Self.requestsServed(broker, of: "cbtest1").isEmpty)
  }

  @Test(
    "a page refused at its token still gets the ERR and the close frame when it sent more frames after the token"
  )
  func refusedWhilePipelining() throws {
    let (broker, port) = try Self.door()
    defer { withExtendedLifetime(broker) {} }
    for _ in 0..<5 {
      let page = try WebDoorClient(port: port, as: "cbtest1")
      #expect(try page.upgrade().status == 101)
      // The token and the page's first requests in one write, as a page
      // that does not wait for HELLO sends them; then it reads.
      try page.send(
        WebSocketFrames.text("TOKEN " + String(repeating: "1", count: 64))
          + (0..<20_000).flatMap { WebSocketFrames.text("PING \($0)") })
      let (code, _, texts) = try page.expectClose()
      #expect(code == 1008)
      #expect(texts.count == 1 && texts[0].hasPrefix("ERR - NOACCESS :"), "\(texts)")
    }
  }

  /// What a page sends past its QUIT: `frames`, again and again without
  /// waiting, every `pause` µs for `seconds`, on a thread of its own; then
  /// it shuts its sending side. The group ends with it.
  static func sendOn(
    _ frames: [UInt8], on fd: Int32, for seconds: Double, pausing pause: UInt32
  ) -> DispatchGroup {
    let sender = DispatchGroup()
    sender.enter()
    Thread.detachNewThread {
      let end = Date().addingTimeInterval(seconds)
      while Date() < end {
        let sent = frames.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if sent < 0 && errno != EAGAIN { break }
        usleep(pause)
      }
      shutdown(fd, Int32(SHUT_WR))
      sender.leave()
    }
    return sender
  }

  @Test(
    "a page that goes on sending past its QUIT, reading slowly, still gets every reply, BYE and the close frame"
  )
  func pipelinedPastQuit() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    // A small receive buffer, so that the broker's replies wait in its own
    // send queue while the page sends on and does not read.
    var small: Int32 = 4096
    setsockopt(page.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    let before = (0..<20).flatMap { _ in WebSocketFrames.text("HELP") }
    let after = (0..<1000).flatMap { WebSocketFrames.text("PING after \($0)") }
    try page.send(before + WebSocketFrames.text("QUIT"))
    // What a page still sends after its QUIT, for half a second.
    let sender = Self.sendOn(after, on: page.fd, for: 0.5, pausing: 1000)
    usleep(300_000)
    let (code, _, texts) = try page.expectClose()
    sender.wait()
    #expect(texts.filter { $0 == "OK HELP" }.count == 20)
    #expect(Array(texts.suffix(2)) == ["OK QUIT", "BYE :bye cbtest1"], "\(texts.suffix(3))")
    #expect(code == 1000)
  }

  /// The broker closes a socket it is done with once the page has taken
  /// all it was sent, not after a fixed while: a page that sends on after
  /// its QUIT would otherwise be reset, and lose what the kernel still
  /// held for it, while it was reading (chatfuzz found a flooder losing
  /// the end of a HISTORY and its BYE so).
  @Test(
    "a page that sends on past its QUIT for longer than the broker lingers, reading all the while, gets every reply (real time)"
  )
  func pipelinedPastQuitBeyondTheLingerRealTime() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1", timeout: 10)
    try page.open(token: try broker.webToken(for: "cbtest1"))
    let helps = 200
    try page.send(
      (0..<helps).flatMap { _ in WebSocketFrames.text("HELP") } + WebSocketFrames.text("QUIT"))
    let sender = Self.sendOn(
      WebSocketFrames.text("PING after"), on: page.fd,
      for: Double(Server.lingerMilliseconds) / 1000 + 1, pausing: 2000)
    // Read slowly, so that taking it all lasts longer than the sending.
    let started = Date()
    var texts: [String] = []
    var code: UInt16?
    reading: while let frame = try page.nextFrame() {
      switch frame.opcode {
      case WebSocketFrames.text:
        texts.append(frame.text)
        if texts.count % 25 == 0 { usleep(20_000) }
      case WebSocketFrames.close:
        code = frame.closeCode
        break reading
      default: continue
      }
    }
    let took = Date().timeIntervalSince(started)
    sender.wait()
    #expect(took > Double(Server.lingerMilliseconds) / 1000, "read too fast to test anything")
    #expect(texts.filter { $0 == "OK HELP" }.count == helps)
    #expect(Array(texts.suffix(2)) == ["OK QUIT", "BYE :bye cbtest1"], "\(texts.suffix(3))")
    #expect(code == 1000)
  }

  @Test(
    "a page that stops reading after its QUIT and sends on is closed once it has taken nothing for the linger's while (real time)"
  )
  func stalledPastQuitIsClosedRealTime() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    var small: Int32 = 4096
    setsockopt(page.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    try page.send(
      (0..<200).flatMap { _ in WebSocketFrames.text("HELP") } + WebSocketFrames.text("QUIT"))
    try broker.waitForLog("verb=QUIT")
    let quit = Date()
    let ping = WebSocketFrames.text("PING after")
    // It sends on, a frame every 10 ms, and never reads: the broker gives
    // up on it, however long it would go on.
    while !broker.log.contains("msg=\"connection closed\" conn=2 ") {
      let sent = ping.withUnsafeBytes {
        Glibc.send(page.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      }
      if sent < 0 && errno != EAGAIN { break }
      #expect(Date().timeIntervalSince(quit) < 10, "still open 10 s after its QUIT")
      if Date().timeIntervalSince(quit) >= 10 { break }
      usleep(10_000)
    }
    try broker.waitForLog("msg=\"connection closed\" conn=2 ")
    #expect(
      Date().timeIntervalSince(quit) >= Double(Server.lingerMilliseconds) / 1000,
      "closed before it stalled for the linger's while")
  }

  /// Closing connections are no sessions, so the sessions limit does
  /// not bound them: without a bound of their own, a user who quits and
  /// takes a byte now and then would hold the broker's descriptors.
  @Test(
    "a user has at most as many connections closing as sessions: one more is closed at once (real time)"
  )
  func closingBoundedPerUserRealTime() throws {
    let (broker, port) = try Self.door(["--sessions-per-user", "2"])
    let token = try broker.webToken(for: "cbtest1")
    func quits() -> Int { broker.log.components(separatedBy: "verb=QUIT").count - 1 }
    /// A page that asks for much, quits and never reads: its replies
    /// stay in the broker's send queue, and it lingers.
    func quittingPage() throws -> WebDoorClient {
      let page = try WebDoorClient(port: port, as: "cbtest1")
      try page.open(token: token)
      var small: Int32 = 4096
      setsockopt(page.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
      let before = quits()
      try page.send(
        (0..<200).flatMap { _ in WebSocketFrames.text("HELP") } + WebSocketFrames.text("QUIT"))
      try waitUntil("its QUIT") { quits() == before + 1 }
      return page
    }
    // As many as the sessions a user may have: they wait to be read.
    let closing = try (0..<2).map { _ in try quittingPage() }
    #expect(!broker.log.contains("limit=closing"), "two closing are within the limit")
    let quit = Date()
    let third = try quittingPage()
    try broker.waitForLog("limit=closing")
    #expect(
      Date().timeIntervalSince(quit) < Double(Server.lingerMilliseconds) / 1000,
      "the third waited as the others do")
    #expect(broker.log.contains("user=cbtest1 closing=2"))
    withExtendedLifetime((closing, third)) {}
  }

  @Test(
    "with the journal synced, pages that half-close get every reply that waited for the sync, then the close frame"
  )
  func heldRepliesBeforeTheCloseFrame() throws {
    try UnixUsers.ensure()
    let port = try LoopbackSocket.freePort()
    // Syncs on: replies wait for them, several pages' at once on the
    // group commit thread, while the pages' ends arrive.
    let broker = try BrokerProcess().start(["--web-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("web=127.0.0.1:\(port)")
    let token = try broker.webToken(for: "cbtest1")
    let pages = try (0..<8).map { _ in
      let page = try WebDoorClient(port: port, as: "cbtest1")
      try page.open(token: token)
      return page
    }
    for (number, page) in pages.enumerated() {
      try page.send(
        WebSocketFrames.text("JOIN #held\(number)")
          + (0..<50).flatMap { WebSocketFrames.text("SAY #held\(number) :line \($0)") })
      shutdown(page.fd, Int32(SHUT_WR))
    }
    for page in pages {
      let (code, _, texts) = try page.expectClose()
      #expect(texts.filter { $0.hasPrefix("OK SAY ") }.count == 50, "\(texts.suffix(3))")
      #expect(code == 1000)
    }
  }

  @Test("a request head of more than 8192 bytes is refused with 431 as it comes, and closed")
  func hugeHead() throws {
    let (broker, port) = try Self.door()
    defer { withExtendedLifetime(broker) {} }
    let page = try WebDoorClient(port: port, as: "cbtest1")
    let head =
      "GET / HTTP/1.1\r\nHost: localhost\r\n"
      + (0..<40).map { "X-Padding-\($0): \(String(repeating: "p", count: 250))\r\n" }.joined()
    let response = try page.http(head)
    #expect(response.status == 431, "\(response)")
    Self.expectSecurityFields(response)
    try page.waitForEnd()
  }

  @Test(
    "frames a browser never sends close the socket with the RFC's status",
    arguments: [
      ("a frame claiming 2 GiB", 1009), ("a length with its top bit set", 1002),
      ("a close frame between the fragments of a message", 1000),
      ("an unmasked frame", 1002), ("a continuation with no message", 1002),
    ])
  func hostileFrames(kind: String, code: Int) throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    let frame: [UInt8] =
      switch kind {
      case "a frame claiming 2 GiB":
        WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: [], claimedLength: 1 << 31)
      case "a length with its top bit set":
        WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: [], claimedLength: 1 << 63)
      case "a close frame between the fragments of a message":
        WebSocketFrames.encode(
          opcode: WebSocketFrames.text, payload: Array("SAY #a :half".utf8), fin: false)
          + WebSocketFrames.close()
      case "an unmasked frame":
        WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: Array("PING".utf8), mask: nil)
      default:
        WebSocketFrames.encode(opcode: WebSocketFrames.continuation, payload: Array("PING".utf8))
      }
    try page.send(WebSocketFrames.text("PING before") + frame + WebSocketFrames.text("PING after"))
    let (closeCode, _, texts) = try page.expectClose()
    #expect(texts == ["OK PING before"], "nothing after the broken frame is read")
    #expect(closeCode == UInt16(code))
    #expect(try broker.connect(as: "cbtest2").request("PING") == ["OK PING"])
  }

  @Test("another user's token is refused: cbtest2 showing cbtest1's token is told so and closed")
  func anotherUsersToken() throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    let intruder = try WebDoorClient(port: port, as: "cbtest2")
    #expect(try intruder.upgrade().status == 101)
    try intruder.line("TOKEN \(token)")
    let (code, _, texts) = try intruder.expectClose()
    #expect(code == 1008)
    #expect(
      texts == [
        "ERR - NOACCESS :this link is not valid for you: it was revoked or replaced, or made for another user; run chatsh web again for a new one"
      ])
    try broker.waitForLog(#"msg="web token refused""#)
    #expect(broker.log.contains(#"user=cbtest2 reason="no such token of this user""#))
    // And the token still works for its own user.
    #expect(try WebDoorClient(port: port, as: "cbtest1").open(token: token).contains("cbtest1"))
  }

  @Test(
    "a Host other than localhost, 127.0.0.1 or [::1] is refused on every request (DNS rebinding)",
    arguments: ["evil.example:8080", "localhost.evil.example", "127.0.0.2", "10.0.0.1:8080"])
  func rebinding(host: String) throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1").get("/", host: host)
    #expect(page.status == 403, "\(page)")
    #expect(page.body.contains("is not localhost, 127.0.0.1 or [::1]"))
    Self.expectSecurityFields(page)
    let socket = try WebDoorClient(port: port, as: "cbtest1").upgrade(
      host: host, origin: "http://" + host)
    #expect(socket.status == 403, "\(socket)")
    try broker.waitForLog(#"msg="web request refused""#)
  }

  @Test(
    "the upgrade with another site's Origin, a null one or none is refused with 403",
    arguments: [
      Optional("http://evil.example"), "null", "http://localhost", "https://localhost:PORT", nil,
    ] as [String?])
  func forgedOrigin(origin: String?) throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    let response = try page.upgrade(
      origin: .some(origin?.replacingOccurrences(of: "PORT", with: "\(port)")))
    #expect(response.status == 403, "\(response)")
    Self.expectSecurityFields(response)
    // The connection is closed: a token sent anyway opens nothing.
    try? page.line("TOKEN \(token)")
    try page.waitForEnd()
    try broker.waitForLog(#"msg="web request refused""#)
    #expect(Self.requestsServed(broker, of: "cbtest1").isEmpty)
  }

  @Test("no response carries a CORS field, not even to a preflight or another site's request")
  func noCORS() throws {
    let (broker, port) = try Self.door()
    defer { withExtendedLifetime(broker) {} }
    let requests = [
      "OPTIONS /ws HTTP/1.1\r\nHost: localhost:\(port)\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n",
      "OPTIONS / HTTP/1.1\r\nHost: localhost:\(port)\r\nOrigin: http://localhost:\(port)\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: localhost:\(port)\r\nOrigin: http://evil.example\r\n\r\n",
      "GET /app.js HTTP/1.1\r\nHost: localhost:\(port)\r\nOrigin: http://localhost:\(port)\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: localhost:\(port)\r\nOrigin: http://localhost:\(port)\r\nContent-Length: 2\r\n\r\nhi",
    ]
    for request in requests {
      let response = try WebDoorClient(port: port, as: "cbtest1").http(request)
      #expect(response.status != 200 || request.hasPrefix("GET /app.js"), "\(response)")
      Self.expectSecurityFields(response)
    }
    let upgrade = try WebDoorClient(port: port, as: "cbtest1").upgrade()
    #expect(upgrade.status == 101)
    Self.expectSecurityFields(upgrade)
  }

  @Test("root's connections are refused as they come, with a reason in the log and the answer")
  func rootRefused() throws {
    let (broker, port) = try Self.door()
    let response = try WebDoorClient(port: port, as: "root").get("/")
    #expect(response.status == 403, "\(response)")
    #expect(response.body.contains("the web door serves no connection of root"))
    try broker.waitForLog(
      #"msg="connection refused" user=root wire=web reason="the web door serves no connection of root""#
    )
  }

  @Test("the broker's own user's connections are refused; another user's are served")
  func brokersOwnUserRefused() throws {
    try UnixUsers.ensure()
    let directory = try makeShortTemporaryDirectory("cbw")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let home = directory + "/carol"
    #expect(mkdir(home, 0o755) == 0)
    try AsUser.give(home, to: "cbtest3", mode: 0o755)
    let port = try LoopbackSocket.freePort()
    let socket = home + "/chatbroker.sock"
    let broker = try UserBroker(
      user: "cbtest3",
      arguments: [
        "--socket", socket, "--state-dir", home + "/state", "--no-sync", "--web-listen",
        "127.0.0.1:\(port)",
      ], socket: socket)
    let own = try WebDoorClient(port: port, as: "cbtest3").get("/")
    #expect(own.status == 403, "\(own)")
    #expect(own.body.contains("the web door serves no connection of the broker's own user"))
    #expect(try WebDoorClient(port: port, as: "cbtest1").get("/").status == 200)
    withExtendedLifetime(broker) {}
  }

  @Test(
    "a frame over the line limit is TOOLONG, in fragments too, and the page goes on; a binary frame closes with 1003"
  )
  func oversizedAndBinaryFrames() throws {
    let (broker, port) = try Self.door(["--max-line-bytes", "512"])
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    let long = [UInt8](("SAY #web :" + String(repeating: "x", count: 600)).utf8)
    try page.send(WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: long))
    #expect(
      try page.nextText() == "ERR - TOOLONG :the line is longer than 512 bytes and was discarded")
    try page.send(
      WebSocketFrames.encode(opcode: WebSocketFrames.text, payload: long.prefix(300), fin: false)
        + WebSocketFrames.encode(opcode: WebSocketFrames.ping, payload: [7])
        + WebSocketFrames.encode(opcode: WebSocketFrames.continuation, payload: long.dropFirst(300))
    )
    let pong = try #require(try page.nextFrame())
    #expect(pong.opcode == WebSocketFrames.pong && pong.payload == [7])
    #expect(
      try page.nextText() == "ERR - TOOLONG :the line is longer than 512 bytes and was discarded")
    // A frame that claims 2 GiB: as much as comes is thrown away as it comes.
    try page.send(
      WebSocketFrames.encode(
        opcode: WebSocketFrames.text, payload: [UInt8](repeating: 65, count: 100_000),
        claimedLength: 100_000))
    #expect(try page.nextText().hasPrefix("ERR - TOOLONG "))
    #expect(try page.request("PING still") == ["OK PING still"])
    try page.send(WebSocketFrames.encode(opcode: WebSocketFrames.binary, payload: [1, 2, 3]))
    let (code, reason, _) = try page.expectClose()
    #expect(code == 1003)
    #expect(reason == "binary frames are not read; send lines as text frames")
  }

  @Test(
    "what the line protocol has no line for (an IRC client's TAGMSG) reaches a page as no frame, not an empty one"
  )
  func noEmptyFrames() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    #expect(try page.request("JOIN #tags") == ["OK JOIN #tags 1"])
    let irc = LineClient(fd: try connectUnixSocket(broker.ircSocketPath, as: "cbtest2"))
    try irc.send(
      "CAP REQ :message-tags\r\nNICK x\r\nUSER x 0 * :x\r\nCAP END\r\nJOIN #tags\r\n")
    _ = try irc.expect(":cbtest2!cbtest2@")
    #expect(try page.nextText() == "JOIN #tags cbtest2")
    try irc.send("@+typing=active TAGMSG #tags\r\nPRIVMSG #tags :after the tag\r\n")
    #expect(try page.nextText().hasSuffix(" cbtest2 :after the tag"))
  }

  @Test("WEB is refused over the web door; the page's other requests are the line protocol's")
  func webVerbRefused() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: try broker.webToken(for: "cbtest1"))
    #expect(
      try page.request("WEB") == [
        "ERR WEB NOACCESS :WEB is served on the Unix socket only: run chatsh web in a shell on the host"
      ])
    #expect(try page.request("web revoke").last?.hasPrefix("ERR WEB NOACCESS ") == true)
    #expect(try page.request("TOKEN again").last?.hasPrefix("ERR - UNKNOWN ") == true)
    #expect(try page.request("HELP").last == "OK HELP")
    // An empty frame gets no reply, as an empty line.
    try page.line("")
    #expect(try page.request("PING after") == ["OK PING after"])
  }

  @Test(
    "chatsh web --revoke ends the user's tokens: its pages get BYE and close 1000, the token opens nothing"
  )
  func revoke() throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    try page.open(token: token)
    let other = try WebDoorClient(port: port, as: "cbtest2")
    try other.open(token: try broker.webToken(for: "cbtest2"))
    let result = try AsUser.run(
      "cbtest1", [BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "web", "--revoke"])
    #expect(result.status == 0, "\(result.errors)")
    #expect(result.output == "revoked 1 links\n")
    let (code, _, texts) = try page.expectClose()
    #expect(
      texts == ["BYE :your web links were revoked (WEB REVOKE); run chatsh web for a new one"])
    #expect(code == 1000)
    let again = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try again.upgrade().status == 101)
    try again.line("TOKEN \(token)")
    #expect(try again.expectClose().code == 1008)
    #expect(try other.request("PING") == ["OK PING"], "another user's page stays")
  }

  @Test("tokens survive a restart, and the journal holds their hash, never the token")
  func restartAndHash() throws {
    let (broker, port) = try Self.door()
    let token = try broker.webToken(for: "cbtest1")
    try broker.restart()
    try broker.waitForLog("web=127.0.0.1:\(port)")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try page.open(token: token).contains(" cbtest1 :"))
    let journal = broker.journal
    #expect(!journal.contains(token), "the journal holds the token")
    #expect(journal.contains(WebToken.hash(token, user: "cbtest1")))
    #expect(!broker.log.contains(token), "the log holds the token")
  }

  @Test(
    "--web-listen takes a loopback address and port, at most twice; anything else exits 64",
    arguments: [
      ["--web-listen", "0.0.0.0:8080"], ["--web-listen", "[::]:8080"],
      ["--web-listen", "192.168.1.1:8080"], ["--web-listen", "localhost:8080"],
      ["--web-listen", "127.0.0.1"], ["--web-listen", "127.0.0.1:0"],
      ["--web-listen", "127.0.0.1:8080", "--web-listen", "127.0.0.1:8080"],
      ["--web-listen", "127.0.0.1:1", "--web-listen", "[::1]:1", "--web-listen", "127.0.0.2:1"],
    ])
  func refusedOption(arguments: [String]) throws {
    let broker = try BrokerProcess()
    let result = try broker.runToExit(["--state-dir", broker.stateDirectory] + arguments)
    #expect(result.status == 64, "\(result.errors)")
    #expect(result.errors.contains("--web-listen needs "), "\(result.errors)")
  }

  @Test("chatsh web on a broker without a web door says so and exits 1")
  func noDoor() throws {
    try UnixUsers.ensure()
    let broker = try BrokerProcess().start()
    let result = try AsUser.run(
      "cbtest1", [BuiltProducts.path("chatsh"), "--socket", broker.socketPath, "web"])
    #expect(result.status == 1)
    #expect(
      result.errors
        == "chatsh: NOACCESS: this broker has no web door; its administrator opens one with --web-listen (chatbroker(8))\n"
    )
    #expect(result.output.isEmpty)
  }

  @Test(
    "the door on [::1] serves as on 127.0.0.1",
    .enabled(if: hasIPv6Loopback(), "needs IPv6 loopback (::1)"))
  func ipv6() throws {
    try UnixUsers.ensure()
    let port = try LoopbackSocket.freePort()
    let broker = try BrokerProcess().start(
      ["--no-sync", "--web-listen", "[::1]:\(port)", "--web-listen", "127.0.0.1:\(port)"])
    try broker.waitForLog("web=[::1]:\(port)")
    let page = try WebDoorClient(port: port, as: "cbtest1", family: AF_INET6)
    #expect(try page.open(token: try broker.webToken(for: "cbtest1")).contains(" cbtest1 :"))
    #expect(try WebDoorClient(port: port, as: "cbtest1").get("/").status == 200)
  }

  @Test("pings before the token are answered; a close frame ends the connection politely")
  func controlFrames() throws {
    let (broker, port) = try Self.door()
    let page = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try page.upgrade().status == 101)
    try page.send(WebSocketFrames.encode(opcode: WebSocketFrames.ping, payload: Array("x".utf8)))
    let pong = try #require(try page.nextFrame())
    #expect(pong.opcode == WebSocketFrames.pong && pong.text == "x")
    try page.line("TOKEN \(try broker.webToken(for: "cbtest1"))")
    #expect(try page.nextText().hasPrefix("HELLO "))
    try page.send(WebSocketFrames.close(code: 1001, reason: "tab closed"))
    let (code, _, _) = try page.expectClose()
    #expect(code == 1001, "the close frame is echoed")
  }

  @Test(
    "at most 16 connections of one user wait for their token; the 17th is refused, others are served"
  )
  func waitingConnectionsBounded() throws {
    let (broker, port) = try Self.door()
    var waiting: [WebDoorClient] = []
    for _ in 0..<16 {
      let page = try WebDoorClient(port: port, as: "cbtest1")
      #expect(try page.upgrade().status == 101)
      waiting.append(page)
    }
    let refused = try WebDoorClient(port: port, as: "cbtest1").get("/")
    #expect(refused.status == 403, "\(refused)")
    #expect(refused.body.contains("has 16 web connections waiting for a token already"))
    #expect(try WebDoorClient(port: port, as: "cbtest2").get("/").status == 200)
    // One shows its token: a place is free again.
    try waiting[0].line("TOKEN \(try broker.webToken(for: "cbtest1"))")
    #expect(try waiting[0].nextText().hasPrefix("HELLO "))
    #expect(try WebDoorClient(port: port, as: "cbtest1").get("/").status == 200)
  }

  @Test(
    "socket activation: sockets systemd passes named web are the web door",
    .enabled(if: SystemdTests.socketActivate != nil))
  func socketActivation() throws {
    try UnixUsers.ensure()
    let run = try BrokerProcess(prefix: "cbsd")
    let port = try LoopbackSocket.freePort()
    let activator = try run.launchClean(
      SystemdTests.socketActivate!,
      ["-l", run.socketPath, "-l", "127.0.0.1:\(port)", "--fdname=chatbroker:web"]
        + [BuiltProducts.path("chatbroker"), "--state-dir", run.stateDirectory, "--no-sync"])
    defer { run.kill(activator) }
    try run.waitForListener(activator)
    // systemd-socket-activate's socket, for every user as chatbroker.socket's.
    #expect(chmod(run.directory, 0o755) == 0 && chmod(run.socketPath, 0o666) == 0)
    // The first connection starts the broker.
    let probe = try LineClient(path: run.socketPath, timeout: 30)
    _ = try probe.expect("HELLO ", timeout: 30)
    try run.waitForLog("web=127.0.0.1:\(port) fd=4")
    let page = try WebDoorClient(port: port, as: "cbtest1")
    #expect(try page.open(token: try run.webToken(for: "cbtest1")).contains(" cbtest1 :"))
  }
}

/// Whether this host has ::1.
private func hasIPv6Loopback() -> Bool {
  let any = LoopbackTCP.Endpoint(
    family: AF_INET6, address: Array(repeating: 0, count: 15) + [1], port: 0)
  guard let fd = try? LoopbackTCP.listen(on: any) else { return false }
  close(fd)
  return true
}

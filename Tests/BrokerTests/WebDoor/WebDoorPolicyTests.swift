import Testing

@testable import Broker

/// What the web door makes of a request head before anything else
/// (chatbroker(8), THE WEB DOOR): the head's parser, bounded and strict,
/// and the checks of `Host`, `Origin`, the method and the upgrade.
@Suite("The web door's request heads and their checks")
struct WebDoorPolicyTests {
  private static func head(_ text: String) -> HTTPRequestHead? {
    guard case .complete(let head, _) = HTTPRequestHead.read(Array(text.utf8)[...]) else {
      return nil
    }
    return head
  }

  private static func judge(_ text: String) -> WebDoorPolicy.Verdict? {
    head(text).map(WebDoorPolicy.judge)
  }

  private static let upgrade =
    "GET /ws HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    + "Sec-WebSocket-Protocol: chat, chatbroker\r\nOrigin: http://localhost:8080\r\n\r\n"

  @Test("a browser's upgrade is accepted with RFC 6455's accept value for its key")
  func upgradeAccepted() {
    #expect(Self.judge(Self.upgrade) == .upgrade(accept: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
  }

  @Test(
    "Host must be localhost, 127.0.0.1 or [::1], on any port: other names are refused (DNS rebinding)",
    arguments: [
      ("localhost:8080", true), ("LOCALHOST:9", true), ("127.0.0.1", true),
      ("127.0.0.1:65535", true), ("[::1]:8080", true), ("[::1]", true),
      ("evil.example:8080", false), ("localhost.evil.example:8080", false),
      ("127.0.0.1.nip.io:8080", false), ("127.0.0.2:8080", false), ("0.0.0.0:8080", false),
      ("[::ffff:127.0.0.1]:8080", false), ("localhost:", false), ("localhost:80a", false),
      ("localhost:123456", false), ("", false), ("localhost :8080", false),
    ])
  func host(host: String, served: Bool) {
    let verdict = Self.judge("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n")
    if served {
      #expect(verdict == .file(path: "/"), "\(host)")
    } else {
      guard case .refuse(let status, _, _)? = verdict else {
        Issue.record("\(host) was served: \(String(describing: verdict))")
        return
      }
      #expect(status == 403 || status == 400, "\(host)")
    }
  }

  @Test(
    "the upgrade needs Origin to be http:// and the Host: another site's, null or none is refused",
    arguments: [
      (
        "Origin: http://evil.example\r\n",
        "Origin \"http://evil.example\" is not http://localhost:8080"
      ),
      ("Origin: null\r\n", "Origin \"null\" is not http://localhost:8080"),
      ("Origin: https://localhost:8080\r\n", "is not http://localhost:8080"),
      ("Origin: http://localhost:8081\r\n", "is not http://localhost:8080"),
      ("Origin: http://127.0.0.1:8080\r\n", "is not http://localhost:8080"),
      ("", "the request has no Origin field"),
    ])
  func origin(field: String, reason: String) {
    let request = Self.upgrade.replacingOccurrences(
      of: "Origin: http://localhost:8080\r\n", with: field)
    guard case .refuse(let status, let text, _)? = Self.judge(request) else {
      Issue.record("accepted with \(field)")
      return
    }
    #expect(status == 403)
    #expect(text.contains(reason), "\(text)")
  }

  @Test("a file's GET needs no Origin, but another site's is refused there too")
  func originOnFiles() {
    #expect(
      Self.judge("GET /app.js HTTP/1.1\r\nHost: localhost:8080\r\n\r\n") == .file(path: "/app.js"))
    #expect(
      Self.judge(
        "GET /app.js HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://localhost:8080\r\n\r\n")
        == .file(path: "/app.js"))
    guard
      case .refuse(403, _, _)? = Self.judge(
        "GET /app.js HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://evil.example\r\n\r\n")
    else {
      Issue.record("another site's Origin was served a file")
      return
    }
  }

  @Test(
    "only GET, of the page's four files or /ws: other methods 405, other paths 404, a body 400 or 403",
    arguments: [
      (
        "POST / HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\nContent-Length: 1\r\n\r\n",
        405
      ),
      ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\n", 403),
      (
        "POST / HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\nContent-Length: 1\r\n\r\n",
        403
      ),
      ("OPTIONS /ws HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\r\n", 405),
      (
        "GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nOrigin: http://localhost\r\n\r\n",
        400
      ),
      ("GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n", 404),
      ("GET /../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n", 404),
      ("GET /app.js/ HTTP/1.1\r\nHost: localhost\r\n\r\n", 404),
      ("GET /ws HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\r\n", 400),
    ])
  func methodsAndPaths(request: String, status: Int) {
    guard case .refuse(let refused, _, _)? = Self.judge(request) else {
      Issue.record("served: \(request)")
      return
    }
    #expect(refused == status, "\(request)")
  }

  @Test("the page's four files are served, a query left aside")
  func files() {
    for path in ["/", "/app.js", "/app.css", "/icon.svg", "/?x=1"] {
      #expect(Self.judge("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n") != nil)
    }
    #expect(
      Self.judge("GET /?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n") == .file(path: "/"))
  }

  @Test(
    "the upgrade needs version 13 (else 426), a key of 16 bytes and the chatbroker subprotocol",
    arguments: [
      ("Sec-WebSocket-Version: 13", "Sec-WebSocket-Version: 8", 426),
      ("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Key: short", 400),
      (
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ!=", 400
      ),
      ("Sec-WebSocket-Protocol: chat, chatbroker", "Sec-WebSocket-Protocol: chat", 400),
      ("Upgrade: websocket", "Upgrade: h2c", 400),
      ("Connection: keep-alive, Upgrade", "Connection: keep-alive", 400),
    ])
  func upgradeChecks(field: String, replacement: String, status: Int) {
    let request = Self.upgrade.replacingOccurrences(of: field, with: replacement)
    guard case .refuse(let refused, _, let fields)? = Self.judge(request) else {
      Issue.record("accepted with \(replacement)")
      return
    }
    #expect(refused == status)
    if status == 426 {
      #expect(fields == [WebDoorPolicy.Field(name: "Sec-WebSocket-Version", value: "13")])
    }
  }

  @Test(
    "the head's parser is strict where two readers could disagree",
    arguments: [
      ("GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n", "more than one host"),
      ("GET / HTTP/1.1\r\nHost : localhost\r\n\r\n", "not <name>: <value>"),
      ("GET / HTTP/1.1\r\nHost: localhost\r\n folded\r\n\r\n", "not <name>: <value>"),
      ("GET / HTTP/1.1\r\nHost: local\nhost\r\n\r\n", "control character"),
      ("GET / HTTP/1.1\r\nHost: local\u{0}host\r\n\r\n", "control character"),
      ("GET /  HTTP/1.1\r\nHost: localhost\r\n\r\n", "request line"),
      ("GET / HTTP/2\r\nHost: localhost\r\n\r\n", "request line"),
      ("GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\n\r\n", "request line"),
      ("\r\nGET / HTTP/1.1\r\nHost: localhost\r\n\r\n", "request line"),
      (
        "GET / HTTP/1.1\r\nOrigin: http://localhost\r\nOrigin: http://localhost\r\n\r\n",
        "more than one origin"
      ),
    ])
  func strict(request: String, reason: String) {
    guard case .invalid(let status, let text) = HTTPRequestHead.read(Array(request.utf8)[...])
    else {
      Issue.record("read: \(request)")
      return
    }
    #expect(status == 400)
    #expect(text.contains(reason), "\(text)")
  }

  @Test("a head is bounded: 8192 bytes (431 before it ends) and 64 fields")
  func bounds() {
    let long = "GET / HTTP/1.1\r\nHost: localhost\r\nX: " + String(repeating: "a", count: 8200)
    #expect(
      HTTPRequestHead.read(Array(long.utf8)[...])
        == .invalid(status: 431, reason: "the request head is longer than 8192 bytes"))
    let fields = (0..<65).map { "X-\($0): 1\r\n" }.joined()
    guard
      case .invalid(431, _) = HTTPRequestHead.read(
        Array("GET / HTTP/1.1\r\n\(fields)\r\n".utf8)[...])
    else {
      Issue.record("65 fields were read")
      return
    }
  }

  @Test("a head trickling in byte by byte is searched once, and read whole at its end")
  func trickle() {
    let bytes = Array(Self.upgrade.utf8)
    var scanned = 0
    for end in 1..<bytes.count {
      guard case .incomplete(let next) = HTTPRequestHead.read(bytes[..<end], scannedFrom: scanned)
      else {
        Issue.record("read before its end, at \(end)")
        return
      }
      #expect(next == end)
      scanned = next
    }
    guard case .complete(_, let length) = HTTPRequestHead.read(bytes[...], scannedFrom: scanned)
    else {
      Issue.record("not read at its end")
      return
    }
    #expect(length == bytes.count)
  }
}

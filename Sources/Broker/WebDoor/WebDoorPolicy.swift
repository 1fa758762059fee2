import Foundation
import WebPage

/// What the browser door makes of a request head (chatbroker(8), "The web
/// door"), before anything else: the kernel has vouched for the
/// connection's owner, but a browser runs pages of every site the user
/// visits, and any of them may send requests to localhost.
///
/// - `Host` must name this machine's loopback (`localhost`, `127.0.0.1`
///   or `[::1]`, any port), so that a site whose name someone made to
///   resolve to 127.0.0.1 (DNS rebinding) is refused: its pages send
///   their own name.
/// - `Origin`, which browsers set and pages cannot, must be the page's
///   own, `http://` and the `Host`, on the upgrade to WebSocket and on any
///   request with a body; a missing or `null` one is refused there, and
///   a different one everywhere.
/// - Only `GET`, of the page's files or of `/ws` with an upgrade.
enum WebDoorPolicy {
  enum Verdict: Equatable {
    /// One of the page's files.
    case file(path: String)
    /// The WebSocket, answered with this `Sec-WebSocket-Accept`.
    case upgrade(accept: String)
    /// Refused with this status and reason (and fields, for 405 and 426).
    case refuse(status: Int, reason: String, fields: [Field] = [])
  }

  struct Field: Equatable {
    let name: String
    let value: String
  }

  /// The WebSocket's path.
  static let socketPath = "/ws"

  static func judge(_ head: HTTPRequestHead) -> Verdict {
    guard let host = head.field("host") else {
      return .refuse(status: 400, reason: "the request has no Host field")
    }
    guard isLoopbackHost(host) else {
      return .refuse(
        status: 403,
        reason: "Host \(printable(host)) is not localhost, 127.0.0.1 or [::1]: open the link "
          + "chatsh web prints, through your own SSH forward")
    }
    let origin = head.field("origin")
    let needsOrigin = head.path == socketPath || head.hasBody
    if let origin, !sameOrigin(origin, host: host) {
      return .refuse(
        status: 403,
        reason: "Origin \(printable(origin)) is not http://\(host): pages of other "
          + "sites may not use the chat")
    }
    if origin == nil && needsOrigin {
      return .refuse(status: 403, reason: "the request has no Origin field")
    }
    guard head.method == "GET" else {
      return .refuse(
        status: 405, reason: "only GET is served here",
        fields: [Field(name: "Allow", value: "GET")])
    }
    guard !head.hasBody else { return .refuse(status: 400, reason: "a GET has no body") }
    if head.path == socketPath { return upgrade(head) }
    guard WebPage.file(at: String(head.path)) != nil else {
      return .refuse(status: 404, reason: "no such file; the chat page is at /")
    }
    return .file(path: String(head.path))
  }

  /// The upgrade of `GET /ws` (RFC 6455, 4.2.1), asking for chatbroker(7).
  private static func upgrade(_ head: HTTPRequestHead) -> Verdict {
    guard head.field("upgrade")?.lowercased() == "websocket",
      let connection = head.field("connection"),
      words(connection).contains("upgrade")
    else {
      return .refuse(
        status: 400, reason: "/ws is the chat page's WebSocket: ask for Upgrade: websocket")
    }
    guard head.field("sec-websocket-version") == "13" else {
      return .refuse(
        status: 426, reason: "this WebSocket speaks version 13 (RFC 6455)",
        fields: [Field(name: "Sec-WebSocket-Version", value: "13")])
    }
    guard let key = head.field("sec-websocket-key"), WebSocketHandshake.isKey(key) else {
      return .refuse(status: 400, reason: "Sec-WebSocket-Key is not the base64 of 16 bytes")
    }
    let protocols = head.fields.filter { $0.name == "sec-websocket-protocol" }
      .flatMap { words($0.value) }
    guard protocols.contains(WebSocketHandshake.subprotocol) else {
      return .refuse(
        status: 400,
        reason: "ask for the subprotocol \(WebSocketHandshake.subprotocol) (chatbroker(7))")
    }
    return .upgrade(accept: WebSocketHandshake.accept(key: key))
  }

  /// `localhost`, `127.0.0.1` or `[::1]`, in any letter case, with or
  /// without a port.
  static func isLoopbackHost(_ host: String) -> Bool {
    var name = Substring(host.lowercased())
    if let colon = name.lastIndex(of: ":"), !name.hasSuffix("]") {
      let port = name[name.index(after: colon)...]
      guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigit) else { return false }
      name = name[..<colon]
    }
    return name == "localhost" || name == "127.0.0.1" || name == "[::1]"
  }

  /// Whether `origin` is `http://` and the `Host`, letter case aside.
  static func sameOrigin(_ origin: String, host: String) -> Bool {
    origin.lowercased() == "http://" + host.lowercased()
  }

  /// A comma-separated list of tokens, in lower case.
  private static func words(_ list: String) -> [String] {
    list.split(separator: ",").map {
      $0.trimmingCharacters(in: [" ", "\t"]).lowercased()
    }
  }

  /// A value as a reason quotes it: at most 100 bytes, in quotes.
  private static func printable(_ value: String) -> String {
    "\"" + String(decoding: value.utf8.prefix(100), as: UTF8.self) + "\""
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

import WebPage

/// The browser door's HTTP responses (chatbroker(8), "The web door"):
/// every one with the same security fields, no CORS field ever, and
/// `Connection: close` but for the switch to WebSocket. A page on another
/// site, which the browser lets send requests here, can read none of them.
enum HTTPResponse {
  /// On every response: the page loads only its own files and cannot be
  /// framed; a type is never guessed from the content; no link followed
  /// from the page tells the other site where it came from.
  static let securityFields = [
    ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
  ]

  /// `200 OK` with one of the page's files.
  static func file(_ file: WebPage.File) -> [UInt8] {
    response(
      status: 200, fields: [("Content-Type", file.contentType), ("Cache-Control", "no-cache")],
      body: file.bytes)
  }

  /// A refusal, with why as plain text: what a person who opened the
  /// address by hand reads.
  static func refusal(status: Int, reason: String, fields: [(String, String)] = []) -> [UInt8] {
    response(
      status: status,
      fields: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")]
        + fields,
      body: Array("chatbroker: \(reason)\n".utf8))
  }

  /// `101 Switching Protocols` to a WebSocket speaking chatbroker(7)
  /// (RFC 6455, 4.2.2), for the key's `accept` value.
  static func switching(accept: String) -> [UInt8] {
    var head = "HTTP/1.1 101 Switching Protocols\r\n"
    for (name, value) in [
      ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept),
      ("Sec-WebSocket-Protocol", WebSocketHandshake.subprotocol),
    ] + securityFields {
      head += "\(name): \(value)\r\n"
    }
    return Array((head + "\r\n").utf8)
  }

  private static func response(status: Int, fields: [(String, String)], body: [UInt8]) -> [UInt8] {
    var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
    for (name, value) in fields + securityFields + [
      ("Content-Length", String(body.count)), ("Connection", "close"),
    ] {
      head += "\(name): \(value)\r\n"
    }
    return Array((head + "\r\n").utf8) + body
  }

  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 426: "Upgrade Required"
    case 431: "Request Header Fields Too Large"
    default: "Error"
    }
  }
}

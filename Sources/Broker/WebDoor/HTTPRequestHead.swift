/// The head of one HTTP/1.1 request to the browser door (chatbroker(8),
/// `--web-listen`): the request line and its fields, read by a parser
/// small enough to check by eye rather than a library, since the door
/// takes only a `GET` of a few files and one WebSocket upgrade. It is
/// strict where leniency lets two readers of a request disagree (RFC
/// 9112, "request smuggling"): CR LF line ends, no space before a colon,
/// no folded lines, no control characters, one `Host`, `Origin` and key
/// at most; and bounded: ``maximumBytes`` and ``maximumFields``.
struct HTTPRequestHead: Equatable {
  let method: String
  /// As sent: the path and any query.
  let target: String
  let version: String
  /// Names in lower case, values without the white space around them.
  let fields: [Field]

  struct Field: Equatable {
    let name: String
    let value: String
  }

  /// A head longer than this is refused (431) before it ends.
  static let maximumBytes = 8192
  static let maximumFields = 64

  /// What the bytes so far make.
  enum Reading: Equatable {
    /// No blank line yet: the head has not ended. `scanned` is how far
    /// the next call may start looking.
    case incomplete(scanned: Int)
    /// The head, and how many bytes it took (its blank line included).
    case complete(HTTPRequestHead, length: Int)
    /// Not a request the door reads: the status to answer and why.
    case invalid(status: Int, reason: String)
  }

  /// The path without the query.
  var path: Substring { target.prefix { $0 != "?" } }

  /// The value of the field `name` (lower case) when it appears once;
  /// nil when it is missing. (A field the door reads twice is refused by
  /// ``read(_:scannedFrom:)``.)
  func field(_ name: String) -> String? {
    fields.first { $0.name == name }?.value
  }

  /// Whether a body follows the head.
  var hasBody: Bool {
    fields.contains { field in
      field.name == "transfer-encoding" || (field.name == "content-length" && field.value != "0")
    }
  }

  /// Fields that must not appear twice: the door decides by them.
  private static let single: Set<String> = [
    "host", "origin", "upgrade", "sec-websocket-key", "sec-websocket-version", "content-length",
    "transfer-encoding",
  ]

  /// Reads a head from the start of `bytes`; `scanned` is what an earlier
  /// call returned as `incomplete`, so that a head trickling in byte by
  /// byte is searched once, not once per byte.
  static func read(_ input: ArraySlice<UInt8>, scannedFrom scanned: Int = 0) -> Reading {
    let base = input.startIndex
    let limit = min(input.count, maximumBytes + 4)
    var end: Int?
    var index = max(0, scanned - 3)
    while index + 3 < limit {
      if input[base + index] == 13 && input[base + index + 1] == 10
        && input[base + index + 2] == 13 && input[base + index + 3] == 10
      {
        end = index
        break
      }
      index += 1
    }
    guard let end else {
      if input.count > maximumBytes {
        return .invalid(
          status: 431, reason: "the request head is longer than \(maximumBytes) bytes")
      }
      return .incomplete(scanned: input.count)
    }
    guard end <= maximumBytes else {
      return .invalid(status: 431, reason: "the request head is longer than \(maximumBytes) bytes")
    }
    let bytes = Array(input[base..<base + end])
    var lines = split(bytes[...])
    guard !lines.isEmpty else { return .invalid(status: 400, reason: "the request is empty") }
    let requestLine = lines.removeFirst()
    let parts = requestLine.split(separator: 32, omittingEmptySubsequences: false)
    guard parts.count == 3, let method = token(parts[0]),
      parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ $0 > 32 && $0 < 127 }),
      parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
    else {
      return .invalid(status: 400, reason: "the request line is not <method> /<path> HTTP/1.1")
    }
    guard lines.count <= maximumFields else {
      return .invalid(
        status: 431, reason: "the request has more than \(maximumFields) header fields")
    }
    var fields: [Field] = []
    for line in lines {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
        let name = token(line[line.startIndex..<colon])
      else {
        return .invalid(status: 400, reason: "a header line is not <name>: <value>")
      }
      let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
      let trimmed = value.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
      guard trimmed.allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }) else {
        return .invalid(status: 400, reason: "a header field holds a control character")
      }
      let field = Field(name: name.lowercased(), value: String(decoding: trimmed, as: UTF8.self))
      if single.contains(field.name) && fields.contains(where: { $0.name == field.name }) {
        return .invalid(status: 400, reason: "the request has more than one \(field.name) field")
      }
      fields.append(field)
    }
    let head = HTTPRequestHead(
      method: method, target: String(decoding: parts[1], as: UTF8.self),
      version: String(decoding: parts[2], as: UTF8.self), fields: fields)
    return .complete(head, length: end + 4)
  }

  /// The lines of the head, split at CR LF; a bare CR or LF is refused
  /// later as a control character.
  private static func split(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
    var lines: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var index = bytes.startIndex
    while index < bytes.endIndex {
      if bytes[index] == 13 && index + 1 < bytes.endIndex && bytes[index + 1] == 10 {
        lines.append(bytes[start..<index])
        index += 2
        start = index
      } else {
        index += 1
      }
    }
    lines.append(bytes[start..<bytes.endIndex])
    return lines
  }

  /// An RFC 9110 token (a method or a field name), or nil: a field line
  /// that starts with white space (folded) or has space before its colon
  /// is no token.
  private static func token(_ bytes: ArraySlice<UInt8>) -> String? {
    let allowed = Set("!#$%&'*+-.^_`|~".utf8)
    guard !bytes.isEmpty,
      bytes.allSatisfy({ byte in
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
          || allowed.contains(byte)
      })
    else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }
}

import Foundation
import Glibc
import Posix
import ProtocolFuzz

/// A browser's side of the web door (chatbroker(7), "The web door") for
/// tests: a loopback TCP connection made by a Unix user (so that the kernel
/// names that user as its owner, ``connectLoopback(port:family:as:)``), a
/// request head, then WebSocket frames, with a bounded wait on every read.
/// It writes what a browser would, and what none would.
public final class WebDoorClient: @unchecked Sendable {
  public let fd: Int32
  public let port: UInt16
  public let timeout: Double
  private var inbox: [UInt8] = []
  /// `HELLO`, once ``open(token:)`` read it.
  public var greeting = ""

  public init(fd: Int32, port: UInt16, timeout: Double = 10) {
    self.fd = fd
    self.port = port
    self.timeout = timeout
  }

  /// Connects to 127.0.0.1 (or ::1) on `port` as `user`.
  public convenience init(
    port: UInt16, as user: String, family: Int32 = AF_INET, timeout: Double = 10
  ) throws {
    self.init(fd: try connectLoopback(port: port, family: family, as: user), port: port)
  }

  deinit { close(fd) }

  /// What the page's own address sends as `Host` and `Origin`.
  public var host: String { "localhost:\(port)" }
  public var origin: String { "http://localhost:\(port)" }

  // MARK: - HTTP

  /// An HTTP response: status, fields (names in lower case) and body.
  public struct Response: CustomStringConvertible, Sendable {
    public let status: Int
    public let fields: [(name: String, value: String)]
    public let body: String

    public func field(_ name: String) -> String? {
      fields.first { $0.name == name.lowercased() }?.value
    }

    public var description: String {
      "\(status) \(fields.map { "\($0.name): \($0.value)" }) \(body)"
    }
  }

  /// Sends a request head (and `body`) as it is, and reads the response;
  /// its body to the end of the stream or of `Content-Length`, unless it
  /// is `101`.
  public func http(_ head: String, body: [UInt8] = []) throws -> Response {
    try send(Array(head.utf8) + body)
    return try readResponse()
  }

  /// `GET path` as a browser loads a file: `Host` the page's own, no
  /// `Origin`, unless given.
  public func get(_ path: String, host: String? = nil, origin: String? = nil) throws -> Response {
    var head = "GET \(path) HTTP/1.1\r\nHost: \(host ?? self.host)\r\n"
    if let origin { head += "Origin: \(origin)\r\n" }
    return try http(head + "Accept: */*\r\n\r\n")
  }

  /// The upgrade to the WebSocket, as the page's browser sends it, with
  /// the given `Host` and other fields, and `Origin`: the page's own when
  /// not given, none when given as `.some(nil)`.
  public func upgrade(
    host: String? = nil, origin: String?? = nil, protocols: String? = "chatbroker",
    fields: [(String, String)] = []
  ) throws -> Response {
    let sent: String?
    switch origin {
    case .none: sent = self.origin
    case .some(let given): sent = given
    }
    return try http(
      WebSocketFrames.upgradeRequest(
        host: host ?? self.host, origin: sent, protocols: protocols, fields: fields))
  }

  /// Upgrades, sends `TOKEN <token>` and reads the greeting, as the page
  /// does; throws with what came instead.
  @discardableResult
  public func open(token: String) throws -> String {
    let response = try upgrade()
    guard response.status == 101 else { throw TestFailure("no upgrade: \(response)") }
    try line("TOKEN \(token)")
    let first = try nextText()
    guard first.hasPrefix("HELLO ") else { throw TestFailure("not greeted: \(first)") }
    greeting = first
    return first
  }

  private func readResponse() throws -> Response {
    let deadline = Date().addingTimeInterval(timeout * testTimeScale)
    var headEnd: Int?
    while headEnd == nil {
      if let end = search(Array("\r\n\r\n".utf8)) {
        headEnd = end
        break
      }
      guard try fill(before: deadline) else {
        throw TestFailure("the stream ended inside the response head: \(text(inbox))")
      }
    }
    let head = text(inbox[..<headEnd!]).components(separatedBy: "\r\n")
    inbox.removeFirst(headEnd! + 4)
    let statusWords = head[0].split(separator: " ")
    guard statusWords.count >= 2, let status = Int(statusWords[1]) else {
      throw TestFailure("not an HTTP status line: \(head[0])")
    }
    let fields = head.dropFirst().compactMap { line -> (name: String, value: String)? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (
        line[..<colon].lowercased(),
        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      )
    }
    var response = Response(status: status, fields: fields, body: "")
    if status == 101 { return response }
    let length = response.field("content-length").flatMap { Int($0) }
    while length.map({ inbox.count < $0 }) ?? true {
      guard try fill(before: deadline) else { break }
    }
    let body = length.map { Array(inbox.prefix($0)) } ?? inbox
    inbox.removeFirst(body.count)
    response = Response(status: status, fields: fields, body: text(body[...]))
    return response
  }

  // MARK: - Frames

  /// Sends `line` as one text frame, as the page sends a request.
  public func line(_ line: String) throws {
    try send(WebSocketFrames.text(line))
  }

  public func send(_ bytes: [UInt8]) throws {
    try sendAll(fd, bytes)
  }

  /// The next frame from the broker; nil once the stream ended.
  public func nextFrame(timeout: Double? = nil) throws -> WebSocketFrames.Frame? {
    let deadline = Date().addingTimeInterval((timeout ?? self.timeout) * testTimeScale)
    while true {
      do {
        if let frame = try WebSocketFrames.decodeOne(&inbox) { return frame }
      } catch {
        throw TestFailure("the broker sent no WebSocket frame: \(error)")
      }
      guard try fill(before: deadline) else {
        if inbox.isEmpty { return nil }
        throw TestFailure("the stream ended inside a frame: \(inbox.prefix(32))")
      }
    }
  }

  /// The next text frame; a close frame or the end of the stream fails
  /// with what they said, pongs are skipped.
  public func nextText(timeout: Double? = nil) throws -> String {
    while true {
      guard let frame = try nextFrame(timeout: timeout) else {
        throw TestFailure("the stream ended before a text frame")
      }
      switch frame.opcode {
      case WebSocketFrames.text: return frame.text
      case WebSocketFrames.pong: continue
      case WebSocketFrames.close:
        throw TestFailure(
          "closed with \(frame.closeCode.map(String.init) ?? "no status"): \(frame.closeReason)")
      default: throw TestFailure("an unexpected frame, opcode \(frame.opcode)")
      }
    }
  }

  /// Sends a request line and returns every line up to and including its
  /// final `OK`/`ERR` reply, as ``LineClient/request(_:)-swift.method`` does.
  public func request(_ line: String) throws -> [String] {
    try self.line(line)
    var lines: [String] = []
    while true {
      let reply = try nextText()
      lines.append(reply)
      if reply.hasPrefix("OK ") || reply.hasPrefix("ERR ") { return lines }
    }
  }

  /// Reads until the broker's close frame and the end of the stream;
  /// returns the close frame's status and reason, and the text frames
  /// before it.
  public func expectClose(timeout: Double? = nil) throws -> (
    code: UInt16?, reason: String, texts: [String]
  ) {
    var texts: [String] = []
    while let frame = try nextFrame(timeout: timeout) {
      switch frame.opcode {
      case WebSocketFrames.text: texts.append(frame.text)
      case WebSocketFrames.close:
        // Then the broker closes the connection.
        while try nextFrame(timeout: timeout) != nil {}
        return (frame.closeCode, frame.closeReason, texts)
      default: continue
      }
    }
    throw TestFailure("the stream ended without a close frame, after \(texts)")
  }

  /// Whether the broker closed the connection within `timeout`, whatever
  /// it sent before.
  public func waitForEnd(timeout: Double? = nil) throws {
    let deadline = Date().addingTimeInterval((timeout ?? self.timeout) * testTimeScale)
    while try fill(before: deadline) {}
  }

  // MARK: - Bytes

  /// Reads once; false at the end of the stream (or a reset); throws when
  /// nothing came in time.
  private func fill(before deadline: Date) throws -> Bool {
    guard let bytes = try readSome(fd, before: deadline, failure: "nothing from the broker in time")
    else { return false }
    inbox.append(contentsOf: bytes)
    return true
  }

  private func search(_ needle: [UInt8]) -> Int? {
    guard inbox.count >= needle.count else { return nil }
    for index in 0...(inbox.count - needle.count)
    where inbox[index..<index + needle.count].elementsEqual(needle) {
      return index
    }
    return nil
  }

  private func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
  }
}

extension BrokerProcess {
  /// A token of the web door for `user`, as `chatsh web` gets it: `WEB` on
  /// the Unix socket, connected as that user.
  public func webToken(for user: String) throws -> String {
    let client = try connect(as: user)
    let reply = try client.request("WEB").last ?? ""
    let words = reply.split(separator: " ").map(String.init)
    guard words.count == 5, words[0] == "OK", words[1] == "WEB" else {
      throw TestFailure("WEB was answered \(reply)")
    }
    return words[2]
  }
}

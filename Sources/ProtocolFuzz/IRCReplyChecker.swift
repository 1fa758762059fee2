/// Follows the lines one IRC client gets, beside ``ReplyChecker`` for the
/// line protocol: each must be a well-formed IRC line (``IRCShape``); none
/// may claim, by its source, a user other than the one whose token it
/// carries, not even in a piece after a bare CR, where a client that ends
/// lines at CR would read a line of its own; nothing may follow `ERROR`;
/// and a client that reads and half-closes gets every answer before the
/// broker closes (chatbroker(7), "IRC").
///
/// IRC replies do not name their requests, so the client sends a
/// `PING :fence<n>` after each batch; the broker's `PONG` to it says that
/// everything before it was answered.
public struct IRCReplyChecker {
  /// The users the tokens name, by number (`fz0...` is `users[0]`).
  public let users: [String]
  /// Lines sent, fences included, and how many were answered as far as a
  /// fence's `PONG` shows.
  private var sentCount = 0
  private var answeredCount = 0
  /// The fences still waiting for their `PONG`: token and lines before it.
  private var fences: [(token: String, count: Int)] = []
  private var nextFence = 0
  /// The latest lines sent, without fences, in a ring from `recentStart`:
  /// the suspects of a violation.
  private var recent: [[UInt8]] = []
  private var recentStart = 0
  /// Whether a violation of this kind still needs its suspects (the first
  /// sighting of each kind does; copying them for every one is costly).
  public var wantsSuspects: (String) -> Bool = { _ in true }
  private var quitSent = false
  /// `001` came: registration completed.
  public private(set) var welcomed = false
  /// The broker refused the connection with `ERROR` before welcoming it.
  public private(set) var refused = false
  /// The text of the `ERROR` line, once one came after the welcome.
  public private(set) var bye: String?
  private var errorSeen = false
  /// Lines checked so far.
  public private(set) var repliesChecked = 0
  /// How many recent lines a violation names as suspects: a flood's lines
  /// are answered long after they were sent.
  public static let suspectCount = 4096

  public init(users: [String]) {
    self.users = users
  }

  /// The latest lines sent, oldest first.
  public var suspects: [[UInt8]] {
    Array(recent[recentStart...] + recent[..<recentStart])
  }

  /// Lines sent and not yet known to be answered.
  public var unanswered: Int { sentCount - answeredCount }

  /// Whether a `QUIT` was sent, after which the broker reads no further.
  public var quitWasAnswered: Bool { quitSent }

  public var oldestWaiting: [UInt8]? { nil }

  /// The next fence's line, to send after a batch.
  public mutating func fence() -> [UInt8]? {
    nextFence += 1
    return Array("PING :fence\(nextFence)".utf8)
  }

  /// Records a line (without its CR LF) as sent.
  public mutating func sent(_ line: [UInt8]) {
    if quitSent { return }
    sentCount += 1
    if line.starts(with: Array("PING :fence".utf8)) {
      fences.append((String(decoding: line.dropFirst(6), as: UTF8.self), sentCount))
      return
    }
    if recent.count < Self.suspectCount {
      recent.append(line)
    } else {
      recent[recentStart] = line
      recentStart = (recentStart + 1) % Self.suspectCount
    }
    if Self.isQuit(line) { quitSent = true }
  }

  /// `line` as the broker reads it, sent with or without `crlf`: its
  /// framer drops one CR before a line's end, an LF or the end of the
  /// stream, so that of a line sent without CR LF the line's own last CR
  /// goes (`QUIT<CR>` then the end is a QUIT; with CR LF it is the
  /// command `QUIT<CR>`).
  static func asRead(_ line: [UInt8], crlf: Bool) -> [UInt8] {
    !crlf && line.last == 0x0D ? Array(line.dropLast()) : line
  }

  /// Whether the broker reads `line` as a QUIT, as its IRC parser does:
  /// tags, then spaces, then an optional source, then the command in any
  /// case; a line past IRC's bounds (4096 bytes of tags with their `@` and
  /// the space after them, 512 of the rest with CR LF, chatbroker(7)
  /// "IRC") or invalid UTF-8 is refused, not read.
  static func isQuit(_ line: [UInt8]) -> Bool {
    guard line.count <= 512 + 4096, String(validating: line, as: UTF8.self) != nil else {
      return false
    }
    var rest = line[...]
    if rest.first == UInt8(ascii: "@") {
      let end = rest.firstIndex(of: 0x20) ?? rest.endIndex
      guard end - rest.startIndex + 1 <= 4096 else { return false }
      rest = rest[end...].drop { $0 == 0x20 }
    }
    guard rest.count + 2 <= IRCShape.maximumBytes else { return false }
    var body = line[...]
    if body.first != UInt8(ascii: "@") {
      body = body.drop { $0 == 0x20 }
      // Spaces before an `@` make it the command, not tags.
      if body.first == UInt8(ascii: "@") { return false }
    }
    return IRCShape.parse(body)?.command.uppercased() == "QUIT"
  }

  /// Checks one line from the broker (without its LF).
  public mutating func received(_ line: [UInt8]) -> [Violation] {
    var found: [Violation] = []
    let body = line.last == 0x0D ? line.dropLast() : line[...]
    let parsed = IRCShape.parse(body)
    let command = parsed?.command.prefix(12) ?? "?"
    let shown = String(decoding: line.prefix(300), as: UTF8.self).debugDescription
    func violation(_ kind: String, _ detail: String, category: String = "contract") {
      found.append(
        Violation(
          kind: "IRC: \(kind)", detail: detail, request: nil, category: category,
          suspects: wantsSuspects("IRC: \(kind)") ? suspects : [], evidence: line))
    }
    repliesChecked += 1
    if errorSeen {
      violation("a line after ERROR", shown)
      return found
    }
    if let problem = IRCShape.problem(line) {
      violation("\(problem) (\(command))", "\(line.count) bytes: \(shown)")
    }
    if let parsed, let forged = IRCShape.forgery(parsed, users: users) {
      violation(
        "a \(command) from one user shown as another's",
        "\(forged.real)'s words as \(forged.claimed)'s: \(shown)", category: "identity")
    }
    // What a client that ends lines at a bare CR reads after it.
    for piece in body.split(separator: 0x0D).dropFirst() {
      guard let inner = IRCShape.parse(piece), let forged = IRCShape.forgery(inner, users: users)
      else { continue }
      violation(
        "a line forged after a bare CR (\(command))",
        "\(forged.real)'s words as \(forged.claimed)'s \(inner.command): \(shown)",
        category: "identity")
    }
    guard let parsed else { return found }
    switch parsed.command {
    case "001":
      welcomed = true
    case "PONG":
      if let token = parsed.parameters.last,
        let index = fences.firstIndex(where: { $0.token == token })
      {
        answeredCount = max(answeredCount, fences[index].count)
        fences.removeFirst(index + 1)
      }
    case "ERROR":
      errorSeen = true
      if welcomed {
        bye = String(decoding: body, as: UTF8.self)
      } else {
        refused = true
      }
    default:
      break
    }
    return found
  }

  /// The broker closed the connection; `halfClosed` says whether this
  /// client had shut down its writing side.
  public func endOfStream(halfClosed: Bool) -> [Violation] {
    if refused || quitSent { return [] }
    func violation(_ kind: String, _ detail: String) -> Violation {
      Violation(kind: "IRC: \(kind)", detail: detail, request: nil, suspects: suspects)
    }
    if repliesChecked == 0 && !halfClosed {
      // Not even a NOTICE: refused at the door, or gone at once.
      return [
        violation(
          "connection closed before its first line", "\(unanswered) lines unanswered")
      ]
    }
    if !errorSeen && !halfClosed {
      return [violation("connection closed without ERROR", "\(unanswered) lines unanswered")]
    }
    if !errorSeen && unanswered > 0 && !fences.isEmpty {
      return [
        violation(
          "closed before answering every line after a half-close",
          "\(unanswered) lines unanswered")
      ]
    }
    return []
  }
}

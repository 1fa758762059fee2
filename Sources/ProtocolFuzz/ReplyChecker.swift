/// A broken promise of chatbroker(7), seen on one connection.
public struct Violation: Sendable {
  /// What kind of promise, short and without variable parts, so that many
  /// sightings of one bug count as one finding.
  public var kind: String
  /// The particulars of this sighting.
  public var detail: String
  /// The request line the broken reply belongs to, when there is one.
  public var request: [UInt8]?
  /// `contract`, or `identity` for a line that names the wrong author.
  public var category = "contract"
  /// When the reply names no request (IRC): the lines sent before it,
  /// oldest first, one of which is replayed alone to show it again.
  public var suspects: [[UInt8]] = []
  /// The broken line itself, when it is one.
  public var evidence: [UInt8]?
}

/// What a fuzzing connection's checker does, whichever protocol it speaks.
protocol ConnectionChecker {
  var unanswered: Int { get }
  var oldestWaiting: [UInt8]? { get }
  var repliesChecked: Int { get }
  var bye: String? { get }
  var quitWasAnswered: Bool { get }
  mutating func sent(_ line: [UInt8])
  mutating func fence() -> [UInt8]?
  mutating func received(_ line: [UInt8]) -> [Violation]
  func endOfStream(halfClosed: Bool) -> [Violation]
}

extension ConnectionChecker {
  /// A line to send after a batch whose answer says the batch was
  /// answered, for protocols whose replies name no request.
  mutating func fence() -> [UInt8]? { nil }
}

extension ReplyChecker: ConnectionChecker {}
extension IRCReplyChecker: ConnectionChecker {}

/// Follows the lines of one connection and checks them against the
/// requests it sent, as chatbroker(7) promises: `HELLO` first, exactly one
/// final `OK`/`ERR` per request and in order, the data lines of a
/// multi-line reply in one piece right before their final line, the count
/// in that line equal to the data lines, and nothing after `BYE`.
public struct ReplyChecker {
  public let maximumLineBytes: Int
  /// Requests still waiting for their final line: the verb it must name and
  /// the request line itself.
  private var waiting: [(verb: String, request: [UInt8])] = []
  private var waitingStart = 0
  private var greeted = false
  /// The connection was refused with `ERR - LIMIT` instead of `HELLO`.
  public private(set) var refused = false
  /// Inside a multi-line reply: its data keyword and how many lines so far.
  private var dataKeyword: String?
  private var dataLines = 0
  private var quitAnswered = false
  /// A `QUIT` was sent: the broker reads no further.
  private var quitSent = false
  /// Whether the broker said `OK QUIT`, after which its `BYE` is due.
  public var quitWasAnswered: Bool { quitAnswered }
  /// The text of the `BYE` line, once one came.
  public private(set) var bye: String?
  /// Final replies checked so far.
  public private(set) var repliesChecked = 0

  public init(maximumLineBytes: Int = 4096) {
    self.maximumLineBytes = maximumLineBytes
  }

  /// Requests sent and not yet answered.
  public var unanswered: Int { waiting.count - waitingStart }

  /// The request line that waits longest, if any.
  public var oldestWaiting: [UInt8]? {
    waitingStart < waiting.count ? waiting[waitingStart].request : nil
  }

  /// Records a request line (without its LF) as sent. Lines after `QUIT`
  /// are never answered, and are not recorded.
  public mutating func sent(_ line: [UInt8]) {
    guard let verb = ProtocolModel.replyVerb(for: line, maximumLineBytes: maximumLineBytes)
    else { return }
    if quitSent { return }
    waiting.append((verb, line))
    if verb == "QUIT", ProtocolModel.isQuit(line) { quitSent = true }
  }

  /// Checks one line from the broker (without its LF).
  public mutating func received(_ line: [UInt8]) -> [Violation] {
    var found: [Violation] = []
    func violation(_ kind: String, _ detail: String, _ request: [UInt8]? = nil) {
      found.append(Violation(kind: kind, detail: detail, request: request))
    }
    let shown = String(decoding: line.prefix(200), as: UTF8.self)
    if let problem = LineShape.problem(line) {
      violation("malformed line", "\(problem): \(shown)", oldestWaiting)
    }
    let text = String(decoding: line, as: UTF8.self)
    let words = ProtocolModel.words(line, maxSplits: 3)
    let keyword = words.first ?? ""
    if bye != nil || refused {
      violation("line after BYE or refusal", shown)
      return found
    }
    if !greeted {
      if keyword == "HELLO" {
        greeted = true
      } else if text.hasPrefix("ERR - LIMIT ") {
        refused = true
      } else {
        violation("first line is not HELLO", shown)
        greeted = true
      }
      return found
    }
    switch keyword {
    case "OK", "ERR":
      guard let expected = popWaiting() else {
        violation("final reply to no request", shown)
        return found
      }
      repliesChecked += 1
      let named = words.count > 1 ? words[1] : ""
      if named != expected.verb {
        violation(
          "final reply names another request's verb",
          "expected \(keyword) \(expected.verb), got: \(shown)", expected.request)
      }
      if let dataKeyword {
        // SCHED lines before an ERR were another session's change (below).
        if keyword == "ERR" && dataKeyword != "SCHED" {
          violation("data lines before an ERR", "\(dataLines) \(dataKeyword) then: \(shown)")
        } else if let count = ProtocolModel.replyCount(words), count != dataLines,
          // Another session's change may come right before (see below).
          dataKeyword != "SCHED" || count > dataLines
        {
          violation(
            "count differs from the data lines",
            "\(dataLines) \(dataKeyword) lines, then: \(shown)", expected.request)
        }
      } else if keyword == "OK", ProtocolModel.dataKeywords[named] != nil,
        let count = ProtocolModel.replyCount(words), count != 0, named != "HELP"
      {
        violation("count differs from the data lines", "no data lines, then: \(shown)")
      }
      dataKeyword = nil
      dataLines = 0
      if text == "OK QUIT" { quitAnswered = true }
    case "HIST", "SCHED", "ROOM", "MEMBER", "INFO", "CONV", "BAN":
      let front = waitingStart < waiting.count ? waiting[waitingStart] : nil
      if keyword == "SCHED", dataKeyword == nil,
        ProtocolModel.dataKeywords[front?.verb ?? ""] != keyword
      {
        // The user's other session changed a pending message: its new
        // state comes to every session (chatbroker(7), "Changing a
        // pending message"), between replies.
        break
      }
      if ProtocolModel.dataKeywords[front?.verb ?? ""] != keyword {
        violation(
          "data line outside its reply",
          "\(shown) while waiting for \(front?.verb ?? "nothing")", front?.request)
      } else if let dataKeyword, dataKeyword != keyword {
        violation("data lines of two kinds in one reply", shown, front?.request)
      }
      dataKeyword = keyword
      dataLines += 1
    case "MSG", "JOIN", "PART", "MARKREAD", "TOPIC", "REDACT", "AMEND", "AWAY", "MODE", "KICK",
      "INVITE", "REACT", "UNREACT":
      if dataKeyword == "SCHED" {
        // The SCHED lines so far were another session's change, which
        // comes between replies as events do (see above), not a reply.
        dataKeyword = nil
        dataLines = 0
      } else if dataKeyword != nil {
        violation("event inside a multi-line reply", shown, oldestWaiting)
      }
    case "BYE":
      if dataKeyword != nil {
        violation("BYE inside a multi-line reply", shown, oldestWaiting)
      }
      bye = text
    default:
      break  // reported as malformed above
    }
    return found
  }

  /// The broker closed the connection. `halfClosed` says whether this
  /// client had shut down its writing side, after which the broker answers
  /// everything and closes without `BYE`.
  public func endOfStream(halfClosed: Bool) -> [Violation] {
    var found: [Violation] = []
    if dataKeyword != nil {
      found.append(
        Violation(
          kind: "stream ended inside a multi-line reply", detail: "\(dataLines) lines",
          request: oldestWaiting))
    }
    if refused { return found }
    if bye == nil && !halfClosed {
      found.append(
        Violation(
          kind: "connection closed without BYE",
          detail: "\(unanswered) requests unanswered", request: oldestWaiting))
    } else if bye == nil && unanswered > 0 {
      found.append(
        Violation(
          kind: "closed before answering every request after a half-close",
          detail: "\(unanswered) unanswered", request: oldestWaiting))
    }
    return found
  }

  private mutating func popWaiting() -> (verb: String, request: [UInt8])? {
    guard waitingStart < waiting.count else { return nil }
    let front = waiting[waitingStart]
    waitingStart += 1
    if waitingStart > 4096 && waitingStart * 2 > waiting.count {
      waiting.removeFirst(waitingStart)
      waitingStart = 0
    }
    return front
  }
}

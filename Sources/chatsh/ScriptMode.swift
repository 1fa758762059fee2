import ChatClient
import Foundation
import LineProtocol

#if canImport(Glibc)
  import Glibc
#endif

/// Why a script command stopped early.
enum ScriptFailure: Error {
  case unavailable(String)
  case refused(code: String, text: String)
  case usage(String)
}

/// The subcommands: connect, send, await every reply, print, exit.
struct ScriptMode {
  let socketPath: String
  let trust: BrokerTrust
  let color: Bool
  /// How long to wait for a reply before giving up on the broker.
  let replyTimeout = 30
  var out = StandardOutput()

  init(socketPath: String, trust: BrokerTrust, color: Bool) {
    self.socketPath = socketPath
    self.trust = trust
    self.color = color
  }

  mutating func run(_ command: Command) -> ExitStatus {
    do {
      switch command {
      case .say(let target, let at, let text?):
        try say(target: target, at: at, text: text)
      case .say(let target, _, nil):
        return try sayStandardInput(target: target)
      case .sayEvery(let target, let rule, let text):
        try sayEvery(target: target, rule: rule, text: text)
      case .history(let target, let count, let json):
        try history(target: target, count: count, json: json)
      case .tail(let targets, let count, let json):
        return try tail(targets: targets, count: count, json: json)
      case .scheduled(let json):
        var items: [ScheduledMessage] = []
        let finals = try simple(["SCHEDULED"]) { line in
          if case .sched(let item) = line { items.append(item) }
        }
        // The reply is the last COUNT lines: a change made in another
        // session may come just before it (chatbroker(7)).
        var count = items.count
        if case .ok(_, let words)? = finals.last, let number = words.first.flatMap({ Int($0) }) {
          count = number
        }
        for item in items.suffix(count) {
          out.line(json ? OutputFormat.json(item) : OutputFormat.plain(item))
        }
      case .cancel(let id):
        try simple(["CANCEL " + id]) { _ in }
      case .rooms(let json):
        try simple(["ROOMS"]) { line in
          if case .room(let name, let members) = line {
            out.line(
              json
                ? OutputFormat.rawObject([
                  ("room", OutputFormat.jsonString(name)), ("members", String(members)),
                ])
                : "\(name)\t\(members)")
          }
        }
      case .who(let room, let json):
        try simple(["WHO " + room]) { line in
          if case .member(let room, let user) = line {
            out.line(json ? OutputFormat.object([("room", room), ("user", user)]) : user)
          }
        }
      case .interactive, .help, .version:
        return .usage
      }
      out.flush()
      return .success
    } catch {
      out.flush()
      switch error {
      case .unavailable(let message):
        complain(message)
        return .unavailable
      case .refused(let code, let text):
        complain("\(code): \(text)")
        return .refused
      case .usage(let message):
        complain(message)
        return .usage
      }
    }
  }

  // MARK: - Connection

  private func connect() throws(ScriptFailure) -> BrokerConnection {
    do {
      let connection = try BrokerConnection(path: socketPath, trust: trust)
      guard let first = try connection.nextLine(timeoutSeconds: replyTimeout) else {
        throw ConnectionError.closed(path: socketPath, detail: "before saying HELLO")
      }
      switch first {
      case .hello:
        return connection
      case .err(_, let code, let text):
        throw ScriptFailure.refused(code: code, text: text)
      default:
        throw ConnectionError.closed(path: socketPath, detail: "it did not say HELLO")
      }
    } catch let error as ConnectionError {
      throw .unavailable(error.description)
    } catch let error as ScriptFailure {
      throw error
    } catch {
      throw .unavailable("\(error)")
    }
  }

  /// Reads until `expected` final replies arrived, handing every other line
  /// (data lines of replies, events) to `data`; the first ERR is thrown
  /// after all replies are in.
  private func awaitReplies(
    _ connection: BrokerConnection, replies expected: Int, data: (ServerLine) -> Void
  ) throws(ScriptFailure) -> [ServerLine] {
    var finals: [ServerLine] = []
    var firstError: ScriptFailure?
    while finals.count < expected {
      let next: ServerLine?
      do {
        next = try connection.nextLine(timeoutSeconds: replyTimeout)
      } catch {
        throw .unavailable(error.description)
      }
      guard let line = next else {
        throw .unavailable(
          ConnectionError.closed(path: socketPath, detail: "before answering everything")
            .description)
      }
      switch line {
      case .ok:
        finals.append(line)
      case .err(_, let code, let text):
        finals.append(line)
        if firstError == nil { firstError = .refused(code: code, text: text) }
      case .bye(let text):
        throw .unavailable(ConnectionError.closed(path: socketPath, detail: text).description)
      default:
        data(line)  // data lines of replies, and events (callers pick)
      }
    }
    if let firstError { throw firstError }
    return finals
  }

  /// Sends `requests`, half-closes, and awaits every reply.
  @discardableResult
  private func simple(_ requests: [String], data: (ServerLine) -> Void) throws(ScriptFailure)
    -> [ServerLine]
  {
    let connection = try connect()
    for request in requests { connection.send(request) }
    connection.shutdownWriteWhenFlushed()
    return try awaitReplies(connection, replies: requests.count, data: data)
  }

  // MARK: - Commands

  private mutating func say(target: String, at: String?, text: [String]) throws(ScriptFailure) {
    let lines = text.joined(separator: " ").split(whereSeparator: \.isNewline)
      .map { String($0) }.filter { !$0.isEmpty }
    guard !lines.isEmpty else { throw .usage("say: the TEXT is empty") }
    var verb = "SAY " + target
    if let at {
      let now = Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
      do {
        let due = try WhenParser.resolve(at, now: now, timeZone: TimeZone.current)
        verb = "SAYAT \(target) \(due)"
      } catch {
        throw .usage("--at \(at): \(error.text)")
      }
    }
    let connection = try connect()
    for line in lines { connection.send("\(verb) :\(line)") }
    connection.shutdownWriteWhenFlushed()
    let finals = try awaitReplies(connection, replies: lines.count) { _ in }
    if at != nil {
      for case .ok(_, let words) in finals where words.count >= 2 {
        out.line(words[0] + "\t" + words[1])
      }
    }
  }

  /// `say --every`: one series per line of the text. The rule is read here,
  /// in the user's zone (TZ), and sent in full, so the broker's own zone
  /// never applies; the reply's ID, first due time and rule are printed.
  private mutating func sayEvery(target: String, rule: String, text: [String])
    throws(ScriptFailure)
  {
    let lines = text.joined(separator: " ").split(whereSeparator: \.isNewline)
      .map { String($0) }.filter { !$0.isEmpty }
    guard !lines.isEmpty else { throw .usage("say: the TEXT is empty") }
    let full: String
    do {
      full = try Recurrence.parse(rule, defaultZone: TimeZone.current, verb: .sayEvery)
        .description
    } catch {
      throw .usage("--every \(rule): \(error.text)")
    }
    let connection = try connect()
    for line in lines { connection.send("SAYEVERY \(target) \(full) :\(line)") }
    connection.shutdownWriteWhenFlushed()
    let finals = try awaitReplies(connection, replies: lines.count) { _ in }
    for case .ok(_, let words) in finals where words.count >= 3 {
      out.line(words[0...2].joined(separator: "\t"))
    }
  }

  /// Each line of standard input is one message; requests are pipelined
  /// while reading, and every reply is awaited before exiting.
  private func sayStandardInput(target: String) throws(ScriptFailure) -> ExitStatus {
    let connection = try connect()
    var pendingInput: [UInt8] = []
    var inputOpen = true
    var sent = 0
    var answered = 0
    var refused = 0
    var buffer = [UInt8](repeating: 0, count: 65536)

    func queue(_ bytes: ArraySlice<UInt8>) {
      var text = String(decoding: bytes, as: UTF8.self)
      if text.hasSuffix("\r") { text.removeLast() }
      let clean = stripTerminalEscapes(text)
      guard !clean.allSatisfy({ $0 == " " || $0 == "\t" }) else { return }
      connection.send("SAY \(target) :\(clean)")
      sent += 1
    }

    while inputOpen || answered < sent {
      while let line = connection.bufferedLine() {
        switch line {
        case .ok:
          answered += 1
        case .err(_, let code, let text):
          answered += 1
          refused += 1
          complain("\(code): \(text)")
        case .bye(let text):
          throw .unavailable(ConnectionError.closed(path: socketPath, detail: text).description)
        default:
          break
        }
      }
      if !inputOpen && answered >= sent { break }
      if connection.readClosed {
        throw .unavailable(
          ConnectionError.closed(
            path: socketPath, detail: "\(sent - answered) messages were not acknowledged"
          ).description)
      }
      // Read standard input only while the broker keeps up with us.
      let readInput = inputOpen && connection.pendingOutput < 1 << 20
      let timeout: Int32 = inputOpen ? -1 : Int32(replyTimeout * 1000)
      let events: [Int16]
      let progressed: Bool
      do {
        (events, progressed) = try connection.wait(
          extra: readInput ? [0] : [], timeoutMilliseconds: timeout)
      } catch {
        throw .unavailable(error.description)
      }
      if !progressed && !inputOpen {
        throw .unavailable(
          ConnectionError.timeout(path: socketPath, seconds: replyTimeout).description)
      }
      if readInput, let revents = events.first, revents != 0 {
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count > 0 {
          pendingInput.append(contentsOf: buffer[..<count])
          var start = 0
          while let newline = pendingInput[start...].firstIndex(of: UInt8(ascii: "\n")) {
            queue(pendingInput[start..<newline])
            start = newline + 1
          }
          pendingInput.removeFirst(start)
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
          if !pendingInput.isEmpty { queue(pendingInput[...]) }
          pendingInput = []
          inputOpen = false
          connection.shutdownWriteWhenFlushed()
        }
        connection.flushIfPossible()
      }
    }
    return refused > 0 ? .refused : .success
  }

  private mutating func history(target: String, count: Int?, json: Bool) throws(ScriptFailure) {
    let request = count.map { "HISTORY \(target) \($0)" } ?? "HISTORY \(target)"
    var printed: [String] = []
    try simple([request]) { line in
      if case .hist(let message) = line {
        printed.append(
          json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
      }
    }
    for line in printed { out.line(line) }
  }

  /// Joins the rooms, optionally prints recent history, then follows.
  private mutating func tail(targets: [String], count: Int, json: Bool) throws(ScriptFailure)
    -> ExitStatus
  {
    let connection = try connect()
    let wanted = Set(targets.map { Target($0)?.description ?? $0 })
    let rooms = wanted.filter { $0.hasPrefix("#") }.sorted()
    for room in rooms { connection.send("JOIN " + room) }
    let histories = count > 0 ? wanted.sorted() : []
    for target in histories { connection.send("HISTORY \(target) \(min(count, 1000))") }
    var held: [ChatMessage] = []
    var history: [ChatMessage] = []
    // Messages arriving before the history replies are held back, so that
    // nothing is printed twice or out of order.
    _ = try awaitReplies(connection, replies: rooms.count + histories.count) { line in
      switch line {
      case .hist(let message): history.append(message)
      case .msg(let message): held.append(message)
      default: break
      }
    }
    var seen = Set<String>()
    for message in history + held {
      emit(message, json: json, wanted: wanted, seen: &seen)
    }
    out.flush()
    while true {
      let next: ServerLine?
      do {
        next = try connection.nextLine(timeoutSeconds: nil)
      } catch {
        throw .unavailable(error.description)
      }
      switch next {
      case .msg(let message)?:
        emit(message, json: json, wanted: wanted, seen: &seen)
        out.flush()
      case .bye(let text)?:
        throw .unavailable(ConnectionError.closed(path: socketPath, detail: text).description)
      case nil:
        throw .unavailable(ConnectionError.closed(path: socketPath, detail: "").description)
      default:
        break
      }
    }
  }

  /// Prints a message of one of the `wanted` conversations, once.
  private mutating func emit(
    _ message: ChatMessage, json: Bool, wanted: Set<String>, seen: inout Set<String>
  ) {
    guard wanted.contains(message.target), seen.insert(message.id).inserted else { return }
    out.line(json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
  }
}

/// Drops ANSI escape sequences (coloured compiler output) and replaces other
/// control characters but TAB, which the broker would refuse (`BADCHAR`).
func stripTerminalEscapes(_ text: String) -> String {
  var result = String.UnicodeScalarView()
  var scalars = text.unicodeScalars.makeIterator()
  while let scalar = scalars.next() {
    if scalar == "\u{1B}" {
      // CSI: ESC [ parameters final-byte; other escapes: ESC and one more.
      guard let next = scalars.next() else { break }
      if next == "[" {
        while let byte = scalars.next(), !(0x40...0x7E).contains(byte.value) {}
      }
      continue
    }
    if scalar == "\t" || !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) {
      result.append(scalar)
    } else {
      result.append("\u{FFFD}")
    }
  }
  return String(result)
}

import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// Why a script command stopped early.
enum ScriptFailure: Error {
  case unavailable(String)
  /// The socket answers, but not as a broker chatsh may talk to (run by a
  /// user it does not trust, or not ours to connect to): waiting for it
  /// would not help. Exit status 69 too.
  case untrusted(String)
  case refused(code: String, text: String)
  case usage(String)
}

/// The subcommands: connect, send, await every reply, print, exit.
struct ScriptMode {
  let socketPath: String
  /// Where chatsh looked for the socket, said when no broker answers.
  let searchNote: String?
  let trust: BrokerTrust
  let color: Bool
  /// `say --wait`: seconds to wait for the broker (chatsh(1)).
  var wait = Invocation.defaultWait
  /// `say --notice`: each message is a `NOTICE` (chatsh(1)).
  var notice = false
  /// `say --block`: the text is one message of several lines (chatsh(1)).
  var block = false
  /// `say --reply ID`: each message answers message ID (chatsh(1)).
  var replyTo: MessageID?
  /// How long to wait for a reply before giving up on the broker.
  let replyTimeout = 30
  var out = StandardOutput()

  init(socket: SocketPath, trust: BrokerTrust, color: Bool) {
    self.socketPath = socket.path
    self.searchNote = socket.searchNote
    self.trust = trust
    self.color = color
  }

  mutating func run(_ command: Command) -> ExitCode {
    do throws(ScriptFailure) {
      switch command {
      case .say(let target, nil, let text) where block:
        return try sayBlock(target: target, words: text)
      case .say(let target, nil, let text?):
        let lines = text.joined(separator: " ").split(whereSeparator: \.isNewline).map(String.init)
        guard lines.contains(where: { !BuildOutput.clean($0).isEmpty }) else {
          throw ScriptFailure.usage("say: the TEXT is empty")
        }
        return try sayLines(target: target, lines: lines, wait: wait)
      case .say(let target, let at, let text?):
        try say(target: target, at: at, text: text)
      case .say(let target, _, nil):
        return try sayLines(target: target, lines: nil, wait: wait)
      case .sayEvery(let target, let rule, let text):
        try sayEvery(target: target, rule: rule, text: text)
      case .history(let target, let count, let json):
        return try history(target: target, count: count, json: json)
      case .search(let target, let count, let json, let words):
        return try search(target: target, count: count ?? 20, json: json, words: words)
      case .tail(let targets, let count, let json, let mentions):
        return try tail(targets: targets, count: count, json: json, mentions: mentions)
      case .scheduled(let json):
        var items: [ScheduledMessage] = []
        let finals = try simple([.scheduled(nil)]) { line in
          if let item = line.scheduledMessage { items.append(item) }
        }
        // The reply is the last COUNT lines: a change made in another
        // session may come just before it (chatbroker(7)).
        var count = items.count
        if let number = finals.last?.okFields?.first.flatMap({ Int($0) }) {
          count = number
        }
        for item in items.suffix(count) {
          out.line(json ? OutputFormat.json(item) : OutputFormat.plain(item))
        }
      case .cancel(let id):
        try simple([.cancel(checked(id, MessageID.init))]) { _ in }
      case .react(let target, let id, let reaction, let removed):
        try simple([
          .react(
            checked(target, Target.init), checked(id, MessageID.init), reaction: reaction,
            removed: removed)
        ]) { _ in }
      case .amend(let target, let id, let words):
        // Cleaned as say's text is; AMEND carries one line (chatsh(1)).
        let text = BuildOutput.clean(
          words.joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " "))
        guard !text.isEmpty else { throw .usage("amend: the TEXT is empty") }
        try simple([
          .amend(checked(target, Target.init), checked(id, MessageID.init), text: text)
        ]) { _ in }
      case .thread(let target, let id, let count, let json):
        return try thread(
          target: target, id: id, count: count ?? Request.defaultThreadReplies, json: json)
      case .rooms(let json):
        try simple([.rooms(after: nil)]) { line in
          if case .event(.room(let name, let members, _, let topic, _)) = line {
            out.line(
              json
                ? OutputFormat.rawObject(
                  [
                    ("room", OutputFormat.jsonString(name.description)),
                    ("members", String(members)),
                  ] + (topic.map { [("topic", OutputFormat.jsonString($0))] } ?? []))
                : "\(name)\t\(members)" + (topic.map { "\t" + sanitized($0) } ?? ""))
          }
        }
      case .who(let room, let json):
        try simple([.who(checked(room, RoomName.init))]) { line in
          if case .event(.member(let room, let user, _)) = line {
            out.line(
              json ? OutputFormat.object([("room", room.description), ("user", user)]) : user)
          }
        }
      case .web(let revoke):
        let finals = try simple([.web(revoke: revoke)]) { _ in }
        let fields = finals.last?.okFields ?? []
        if revoke {
          out.line("revoked \(fields.dropFirst().first ?? "0") links")
        } else if fields.count >= 3 {
          out.line(fields[2])
          out.flush()
          complain("the link works for you only, until \(fields[1]); keep it to yourself")
        }
      case .interactive, .help, .version:
        return .usage
      }
      out.flush()
      return .success
    } catch {
      out.flush()
      switch error {
      case .unavailable(let message), .untrusted(let message):
        complain(message)
        return .unavailable
      case .refused(let code, let text):
        complain("\(code): \(text)")
        return .failure
      case .usage(let message):
        complain(message)
        return .usage
      }
    }
  }

  // MARK: - Connection

  private func connect() throws(ScriptFailure) -> BrokerConnection {
    try connectSayingHello().connection
  }

  /// Connects and reads HELLO: the connection and the user it names.
  func connectSayingHello() throws(ScriptFailure) -> (connection: BrokerConnection, user: String) {
    do {
      let connection = try BrokerConnection(path: socketPath, trust: trust)
      let first = try connection.greeting(timeoutSeconds: replyTimeout)
      if case .event(.hello(_, let user, _)) = first { return (connection, user) }
      switch first.refusal {
      case (let code, let text)?:
        throw ScriptFailure.refused(code: code, text: text)
      case nil:
        throw ConnectionError.closed(path: socketPath, detail: "it did not say HELLO")
      }
    } catch let error as ConnectionError {
      switch error {
      // Waiting would not help: not ours to reach, or not a broker's socket.
      case .untrusted, .cannotConnect(_, EACCES), .notASocket, .notLineProtocol:
        throw .untrusted(error.description)
      case .cannotConnect:
        // Nobody there: say where else chatsh looked.
        throw .unavailable(error.description + (searchNote.map { "\n" + $0 } ?? ""))
      default: throw .unavailable(error.description)
      }
    } catch let error as ScriptFailure {
      throw error
    } catch {
      throw .unavailable("\(error)")
    }
  }

  /// Reads until `expected` final replies arrived, handing every other line
  /// (data lines of replies, events) to `data`; the first ERR is thrown
  /// after all replies are in.
  func awaitReplies(
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
      if line.isFinalReply {
        finals.append(line)
        if firstError == nil, let (code, text) = line.refusal {
          firstError = .refused(code: code, text: text)
        }
      } else if case .event(.bye(let text)) = line {
        throw .unavailable(ConnectionError.closed(path: socketPath, detail: text).description)
      } else {
        data(line)  // data lines of replies, and events (callers pick)
      }
    }
    if let firstError { throw firstError }
    return finals
  }

  /// `text` as the value `read` makes of it. OptionParser has checked
  /// every name and id of the command line already; this only keeps a
  /// wrong one from being sent if it had not.
  func checked<Value>(_ text: String, _ read: (String) -> Value?) throws(ScriptFailure) -> Value {
    guard let value = read(text) else { throw .usage("'\(text)' is not a valid name or id") }
    return value
  }

  /// Sends `requests`, half-closes, and awaits every reply.
  @discardableResult
  private func simple(_ requests: [Request], data: (ServerLine) -> Void) throws(ScriptFailure)
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
    let target = try checked(target, Target.init)
    var due: Timestamp?
    if let at {
      let now = Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
      do {
        due = try WhenParser.resolve(at, now: now, timeZone: LocalZone.current.timeZone)
      } catch {
        throw .usage("--at \(at): \(error.text)")
      }
    }
    var announced = false
    let connection = try connectWaiting(
      until: Date().addingTimeInterval(Double(wait)), announced: &announced
    ).connection
    for line in lines {
      connection.send(
        due.map { .sayAt(target, when: $0.description, text: line) } ?? .say(target, text: line))
    }
    connection.shutdownWriteWhenFlushed()
    let finals = try awaitReplies(connection, replies: lines.count) { _ in }
    if at != nil {
      for case .event(.accepted(_, let id, let due)) in finals {
        out.line("\(id)\t\(due)")
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
    let target = try checked(target, Target.init)
    let full: String
    do {
      let zone = LocalZone.current
      full = try Recurrence.parse(
        rule, defaultZone: zone.timeZone, defaultZoneName: zone.name, verb: .sayEvery
      ).description
    } catch {
      throw .usage("--every \(rule): \(error.text)")
    }
    var announced = false
    let connection = try connectWaiting(
      until: Date().addingTimeInterval(Double(wait)), announced: &announced
    ).connection
    for line in lines { connection.send(.sayEvery(target, rule: full, text: line)) }
    connection.shutdownWriteWhenFlushed()
    let finals = try awaitReplies(connection, replies: lines.count) { _ in }
    for words in finals.compactMap(\.okFields) where words.count >= 3 {
      out.line(words[0...2].joined(separator: "\t"))
    }
  }

  /// `history`: the latest messages. None, for a room, asks `MODE room`
  /// whether the room is there at all: `NOACCESS` is the one answer for a
  /// room that does not exist and for one you may not read (chatbroker(7),
  /// "Private rooms"), and exits 1, so that a script tells a typo from a
  /// quiet room (chatsh(1), history).
  private mutating func history(target: String, count: Int?, json: Bool) throws(ScriptFailure)
    -> ExitCode
  {
    let named = try checked(target, Target.init)
    let connection = try connect()
    connection.send(.history(named, count: count ?? 50, anchor: nil))
    var printed = 0
    _ = try awaitReplies(connection, replies: 1) { line in
      guard let message = line.historyMessage else { return }
      out.line(json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
      printed += 1
    }
    out.flush()
    // Nothing printed and nothing said would look like a failure to
    // connect, or a typo that went unnoticed (chatsh(1), history).
    guard printed == 0 && count != 0 else { return .success }
    guard case .room(let room) = named else {
      complain("no messages in \(target) (nobody has written there yet, or no such user)")
      return .success
    }
    connection.send(.mode(room))
    connection.shutdownWriteWhenFlushed()
    do {
      _ = try awaitReplies(connection, replies: 1) { _ in }
    } catch {
      if case .refused(ErrorCode.noAccess.rawValue, _) = error {
        complain("no such room \(target), or you may not read it")
        return .failure
      }
      // A broker before MODE, or a shared room (no modes): it is there.
      guard case .refused = error else { throw error }
    }
    complain("no messages in \(target) (nobody has written there yet)")
    return .success
  }

  /// `thread`: the message and its first `count` replies, oldest first;
  /// a note on standard error when there are none, or more than shown
  /// (chatbroker(7), `THREAD`). A message not kept, or in a room you may
  /// not read, is the broker's `NOSUCHMSG`: exit 1.
  private mutating func thread(target: String, id: String, count: Int, json: Bool)
    throws(ScriptFailure) -> ExitCode
  {
    let request = Request.thread(
      try checked(target, Target.init), try checked(id, MessageID.init),
      count: count)
    let finals = try simple([request]) { line in
      guard let message = line.historyMessage else { return }
      out.line(json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
    }
    out.flush()
    // OK THREAD <target> <id> <count> [MORE]
    let fields = finals.last?.okFields ?? []
    if fields.count >= 3, fields[2] == "0" {
      complain("no replies to \(id) yet")
    } else if fields.count >= 4, fields[3] == "MORE" {
      complain("more replies follow: chatsh thread -n N shows up to N (at most 1000)")
    }
    return .success
  }

  /// `search`: pages of `SEARCH` on one connection, each going on from
  /// the last one's `MORE` id (chatbroker(7), `SEARCH`), until `count`
  /// messages are printed or nothing older matches. Exit 1 when none did,
  /// as grep(1) does.
  private mutating func search(target: String?, count: Int, json: Bool, words: [String])
    throws(ScriptFailure) -> ExitCode
  {
    let target = try target.map { text throws(ScriptFailure) in try checked(text, Target.init) }
    let connection = try connect()
    var printed = 0
    var before: MessageID?
    repeat {
      let page = min(count - printed, Request.maximumSearchResults)
      connection.send(
        .search(target, count: page, before: before, words: words.joined(separator: " ")))
      let finals = try awaitReplies(connection, replies: 1) { line in
        guard let message = line.historyMessage else { return }
        out.line(json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
        printed += 1
      }
      let fields = finals.last?.okFields ?? []
      before = fields.count >= 4 && fields[2] == "MORE" ? MessageID(fields[3]) : nil
    } while before != nil && printed < count
    connection.shutdownWriteWhenFlushed()
    out.flush()
    guard printed == 0 else { return .success }
    complain("no message you can read holds all of: \(words.joined(separator: " "))")
    return .failure
  }

}

/// Checks every line a user gets against the ``PrivacyModel``: a room or a
/// token the user could not read at any moment between the earliest the
/// broker could have decided the line and its arrival is a finding of
/// category `privacy`, printed with the line, the request that led to it
/// and the model's facts. Shared by the scenario's sessions and the
/// fuzzer's other clients (each thread calls in; one lock keeps the model).
///
/// The earliest moment a line can have been decided: when its session
/// opened; for a reply line, when its request was sent; for a line holding
/// a token, when that token's text was sent. Event lines (`MSG`, `JOIN`,
/// IRC's PRIVMSG) may sit in the broker's buffers for a while, so a way out
/// (a KICK, a ban) counts only against lines decided after it.
public final class PrivacyOracle: @unchecked Sendable {
  public let names: PrivacyNames
  let findings: FindingLog
  /// How to run the same again, for findings.
  let rerun: String
  private let state: Locked<State>

  /// One session the scenario opened.
  struct Session {
    var user: String
    var irc: Bool
    var openedAt: Double
    /// The request it waits for the answer to.
    var waiting: Waiting?
  }

  /// A request waiting for its answer: its line, its verb (`CHATHISTORY`
  /// with its subcommand) and when it was sent, when known.
  struct Waiting {
    var line: String
    var verb: String
    var sentAt: Double?
  }

  struct State {
    var model: PrivacyModel
    var sessions: [Int: Session] = [:]
  }

  public init(
    names: PrivacyNames, origin: Double, findings: FindingLog = FindingLog(), rerun: String
  ) {
    self.names = names
    self.findings = findings
    self.rerun = rerun
    state = Locked(State(model: PrivacyModel(origin: origin)))
  }

  /// Every finding so far (this oracle's and whatever else shares its log).
  public var all: [Finding] { findings.all.filter { $0.category == "privacy" } }

  /// Reads or changes the model.
  @discardableResult
  public func model<Result>(_ body: (inout PrivacyModel) -> Result) -> Result {
    state.withLock { body(&$0.model) }
  }

  /// Records a finding that the scenario itself made out (IRC LUSERS).
  func record(_ finding: Finding) {
    findings.record(finding)
  }

  // MARK: - The scenario's sessions

  public func opened(_ session: PrivacySession, at time: Double) {
    state.withLock {
      $0.sessions[session.id] = Session(
        user: session.user, irc: session.wire == .irc, openedAt: time)
    }
  }

  public func sent(_ line: String, on session: PrivacySession, at time: Double) {
    state.withLock { state in
      let words = line.split(separator: " ", maxSplits: 2)
      var verb = words.first.map { String($0).asciiUppercased } ?? ""
      if verb == "CHATHISTORY", words.count > 1 { verb += " " + words[1].uppercased() }
      state.sessions[session.id]?.waiting = Waiting(line: line, verb: verb, sentAt: time)
    }
  }

  public func answered(_ session: PrivacySession) {
    state.withLock { $0.sessions[session.id]?.waiting = nil }
  }

  public func closed(_ session: PrivacySession) {
    _ = state.withLock { $0.sessions.removeValue(forKey: session.id) }
  }

  /// A line `session` got at `time` (without its LF).
  public func received(_ line: [UInt8], on session: PrivacySession, at time: Double) {
    guard names.mentions(line) else { return }
    let found = state.withLock { state -> [Finding] in
      guard let known = state.sessions[session.id] else { return [] }
      return check(
        line, user: known.user, irc: known.irc, opened: known.openedAt, at: time,
        waiting: known.waiting, client: "its \(known.irc ? "IRC" : "line") session",
        model: state.model)
    }
    for finding in found { findings.record(finding) }
  }

  // MARK: - The fuzzer's other clients

  /// A line one of the fuzzer's other connections got: as `user`, opened
  /// at `opened`; `request` is the one it waits on, if known.
  func received(
    _ line: [UInt8], user: String, irc: Bool, opened: Double, at time: Double,
    request: [UInt8]?, client: String
  ) {
    guard names.mentions(line) else { return }
    // Its data lines and final line answer the request it waits on, sent
    // some time after it connected.
    let waiting = request.map { request in
      let line = String(decoding: request, as: UTF8.self)
      return Waiting(line: line, verb: String(line.prefix { $0 != " " }).asciiUppercased)
    }
    let found = state.withLock { state in
      check(
        line, user: user, irc: irc, opened: opened, at: time, waiting: waiting,
        client: client, model: state.model)
    }
    for finding in found { findings.record(finding) }
  }

  // MARK: - The check

  private func check(
    _ line: [UInt8], user: String, irc: Bool, opened: Double, at time: Double,
    waiting: Waiting?, client: String, model: PrivacyModel
  ) -> [Finding] {
    var line = line
    if irc && line.last == 0x0D { line.removeLast() }
    let text = String(decoding: line, as: UTF8.self)
    let isReply =
      waiting.map { waiting in
        !waiting.verb.isEmpty
          && (irc
            ? PrivacyLines.isReply(irc: line, to: waiting.verb, user: user)
            : PrivacyLines.isReply(line: text, to: waiting.verb))
      } ?? false
    let tokens = names.tokens(in: line).filter { model.tokens[$0] != nil }
    var earliest = max(opened, isReply ? (waiting?.sentAt ?? opened) : opened)
    for token in tokens { earliest = max(earliest, model.tokens[token]!.sentAt) }
    // One finding per promise and verb (or kind of event line): one bug.
    let shownBy = isReply ? (irc ? "IRC " : "") + waiting!.verb : lineKind(text, irc: irc)
    var denials: [(PrivacyDenial, token: String?)] = []

    for token in tokens {
      let posted = model.tokens[token]!
      if let redacted = posted.redactedAt, earliest > redacted {
        denials.append(
          (
            PrivacyDenial(
              rule: .redacted,
              facts: "its REDACT was acknowledged at \(model.relative(redacted))"),
            token
          ))
      }
      switch posted.conversation {
      case .room(let room):
        if let denial = model.denial(
          of: room, to: user, session: opened, from: earliest, to: time)
        {
          denials.append((denial, token))
        }
      case .direct(let one, let other):
        if !model.isParty(user, of: posted.conversation) {
          denials.append(
            (
              PrivacyDenial(
                rule: .notParty, facts: "a direct message between \(one) and \(other)"),
              token
            ))
        }
      }
    }
    let sightings =
      irc
      ? PrivacyLines.sightings(irc: line, user: user, names: names)
      : PrivacyLines.sightings(line: text, names: names)
    for sighting in sightings where model.knows(room: sighting.room) {
      if let denial = model.denial(
        of: sighting.room, to: user, session: opened, from: earliest, to: time,
        joining: sighting.joining)
      {
        denials.append((denial, nil))
      }
    }

    var findings: [Finding] = []
    var seen: Set<String> = []
    for (denial, token) in denials {
      let summary = "\(denial.rule.rawValue): \(shownBy)"
      guard seen.insert(summary).inserted else { continue }
      var detail =
        "\(user) got `\(text.prefix(300))` at \(model.relative(time)) on \(client)"
        + " opened at \(model.relative(opened)); \(denial.facts)"
      if let token, let posted = model.tokens[token] {
        detail +=
          "; \(token) was sent by \(posted.poster) at \(model.relative(posted.sentAt)) in `\(posted.request)`"
      }
      if let waiting {
        detail += "; the request: `\(waiting.line)`"
        if let sent = waiting.sentAt { detail += " sent at \(model.relative(sent))" }
      }
      findings.append(
        Finding(category: "privacy", summary: summary, detail: detail, reproducer: rerun))
    }
    return findings
  }

  /// The kind of a line, for a finding: `a MSG line`, `OK JOIN`, `IRC PRIVMSG`.
  private func lineKind(_ text: String, irc: Bool) -> String {
    guard irc else {
      let words = text.split(separator: " ", maxSplits: 2)
      if words.count > 1 && (words[0] == "OK" || words[0] == "ERR") {
        return "\(words[0]) \(words[1])"
      }
      return "a \(words.first ?? "") line"
    }
    guard let message = IRCShape.parse(Array(text.utf8)) else { return "an IRC line" }
    return "IRC \(message.command)"
  }
}

extension PrivacyOracle {
  /// A line one of the fuzzer's other clients got: checked as its user's,
  /// from when it connected.
  func received(_ line: [UInt8], on connection: FuzzConnection) {
    guard names.mentions(line) else { return }
    received(
      line, user: connection.user ?? Self.ownUser, irc: connection.wire.isIRC,
      opened: connection.openedAt, at: monotonicSeconds(),
      request: connection.checker.oldestWaiting, client: "a \(connection.kind) client")
  }

  static let ownUser = ownUserName()
}

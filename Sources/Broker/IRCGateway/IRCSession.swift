import Foundation
import IRCProtocol
import LineProtocol

/// One IRC client's side of the broker (chatbroker(7), "IRC"): its
/// registration and capabilities, the requests its commands become, and
/// how the engine's events read as IRC lines. No sockets: the shell feeds
/// it lines and sends what it returns, so tests drive it with strings.
///
/// Identity is the Unix user, as on the line protocol: the nick is always
/// the login name, whatever NICK asked for.
final class IRCSession {
  /// What one line of input asks of the shell, in order.
  enum Action: Equatable {
    /// Bytes for this connection that need nothing from the engine.
    case reply([UInt8])
    /// A request for the engine, answered in order with events.
    case request(Request)
    /// Registration is complete: the welcome burst was sent.
    case registered
    /// Flush, then close.
    case close
  }

  /// What the shell tells the session of the engine's state: counts for
  /// the welcome burst (LUSERS), a room's creation time for `MODE` (329),
  /// a user's active conversations for `CHATHISTORY TARGETS`.
  struct Counts {
    var connections = 0
    var rooms = 0
    var roomCreated: (RoomName) -> Timestamp? = { _ in nil }
    var activeConversations:
      (_ user: String, _ after: Timestamp, _ before: Timestamp, _ limit: Int) ->
        [ConversationActivity] = { _, _, _, _ in [] }
  }

  /// The service nick for scheduling: `|` can be in an IRC nick but never
  /// in a login name, so no user can take it (chatbroker(7), "IRC").
  static let serviceNick = "sched|bot"

  let user: String
  let serverName: String
  let timeZone: TimeZone
  /// How many lines of a room a client without chathistory gets on JOIN.
  let backlog: Int
  private(set) var capabilities = CapabilitySet()
  private(set) var registered = false
  private var negotiating = false
  private var gotNick = false
  private var gotUser = false

  /// What the next replies of each verb answer, oldest first: the engine
  /// answers each connection's requests in order.
  private enum WhoPurpose { case names, who }
  private enum HistoryPurpose {
    case backlog
    case chathistory(batch: String)
  }
  private var whoPurposes: [WhoPurpose] = []
  private var historyPurposes: [HistoryPurpose] = []
  private var pendingSays: [(command: String, target: String, text: String)] = []
  private var scheduleFromService: [Bool] = []
  private var members: [String] = []
  /// Rooms whose JOIN failed: the names and backlog asked with it are not shown.
  private var failedJoins: Set<RoomName> = []
  private var nextBatch = 1
  /// The room a `LIST` showed last, where its next page starts.
  private var lastListed: RoomName?
  /// What is left of a line that names several targets (or of a `LIST`
  /// longer than a page): one step per target, each served as one request
  /// of the connection's turn, so a long line waits between its targets
  /// like any other requests (chatbroker(7), "IRC", `TARGMAX`).
  private var pendingSteps: [Step] = []

  /// One step of ``pendingSteps``: actions ready to be carried out, or the
  /// next page of a CHATHISTORY answer, encoded only when its turn comes.
  private enum Step {
    case actions([Action])
    case historyPage
  }

  /// The lines of a CHATHISTORY answer that showed only synced messages,
  /// not yet encoded (with the batch each belongs to): a thousand long
  /// lines are encoded ``historyLinesPerStep`` a step, in the order the
  /// engine sent them, then the batch ends (`batchEnd`).
  private var deferredHistory: [(event: BrokerEvent, batch: String?)] = []
  private var deferredStart = 0
  private var deferredBatchEnd: [UInt8] = []

  /// Lines of a CHATHISTORY answer encoded in one step.
  static let historyLinesPerStep = 50

  /// The most targets one `JOIN`, `PART`, `NAMES`, `PRIVMSG` or `NOTICE`
  /// may name (ISUPPORT `TARGMAX` and `MAXTARGETS`); the rest are refused
  /// with 407.
  static let maximumTargets = 20

  /// Whether a login name exists, for WHOIS.
  let userExists: (String) -> Bool

  init(
    user: String, serverName: String, timeZone: TimeZone, backlog: Int,
    userExists: @escaping (String) -> Bool = { _ in true }
  ) {
    self.userExists = userExists
    self.user = user
    self.serverName = serverName
    self.timeZone = timeZone
    self.backlog = backlog
  }

  var nick: String { user }
  var mask: String { "\(user)!\(user)@\(serverName)" }

  /// The variant of the shared encodings this client reads: clients with
  /// the same capabilities get the same bytes for a room's events.
  var encodingVariant: Int { 1 + Int(capabilities.bits) }

  // MARK: - Input

  /// Whether steps of an earlier line wait (``nextStep()``).
  var hasPendingSteps: Bool { !pendingSteps.isEmpty }

  /// The next step of a line that named several targets, to be served as
  /// one more request of the connection's turn; nil when none is left.
  func nextStep() -> [Action]? {
    guard !pendingSteps.isEmpty else { return nil }
    switch pendingSteps.removeFirst() {
    case .actions(let actions): return actions
    case .historyPage: return [.reply(nextHistoryPage())]
    }
  }

  /// The next ``historyLinesPerStep`` deferred CHATHISTORY lines, and
  /// the batch's end after the last; the page after it waits for a step
  /// of its own.
  private func nextHistoryPage() -> [UInt8] {
    let end = min(deferredStart + Self.historyLinesPerStep, deferredHistory.count)
    var bytes: [UInt8] = []
    for index in deferredStart..<end {
      bytes += historyLine(
        deferredHistory[index].event, batch: deferredHistory[index].batch, backlog: false)
    }
    deferredStart = end
    if deferredStart < deferredHistory.count {
      pendingSteps.insert(.historyPage, at: 0)
    } else {
      bytes += deferredBatchEnd
      deferredHistory.removeAll()
      deferredStart = 0
      deferredBatchEnd = []
    }
    return bytes
  }

  /// One line from the client, already framed and valid UTF-8: what its
  /// first step asks (a line naming several targets leaves the others to
  /// ``nextStep()``).
  func receive(_ line: String, counts: () -> Counts) -> [Action] {
    if let tooLong = Self.overLimit(line) {
      return [numeric(.inputTooLong, [tooLong])]
    }
    guard let message = IRCMessage(parsing: line) else { return [] }
    var steps = handle(message, counts: counts)
    guard !steps.isEmpty else { return [] }
    let first = steps.removeFirst()
    pendingSteps += steps.map(Step.actions)
    return first
  }

  /// IRC's limits on what a client sends (modern.ircdocs.horse, "Message
  /// format"): 512 bytes without the tags, CR LF included, and 4096 of
  /// tags, `@` and the space after them included. The reason when `line`
  /// breaks one, else nil.
  static func overLimit(_ line: String) -> String? {
    var rest = line.utf8[...]
    if rest.first == UInt8(ascii: "@") {
      let end = rest.firstIndex(of: UInt8(ascii: " ")) ?? rest.endIndex
      if rest.distance(from: rest.startIndex, to: end) + 1 > IRCMessage.maximumClientTagBytes {
        return "Input line was too long: at most 4096 bytes of tags"
      }
      rest = rest[end...].drop { $0 == UInt8(ascii: " ") }
    }
    if rest.count + 2 > IRCMessage.maximumBytes {
      return "Input line was too long: at most 512 bytes with CR LF, tags apart"
    }
    return nil
  }

  /// A message as steps (one per target where it names several).
  private func handle(_ message: IRCMessage, counts: () -> Counts) -> [[Action]] {
    switch message.command {
    case "JOIN", "PART", "NAMES", "PRIVMSG", "NOTICE":
      guard registered else { return [[numeric(.notRegistered, ["You have not registered"])]] }
      return multiTarget(message)
    default:
      return [receive(message, counts: counts)]
    }
  }

  /// JOIN, PART, NAMES, PRIVMSG and NOTICE: one step per target, at most
  /// ``maximumTargets`` of them; the rest are answered 407 at once.
  private func multiTarget(_ message: IRCMessage) -> [[Action]] {
    let parameters = message.parameters
    let command = message.command
    let needed = command == "PRIVMSG" || command == "NOTICE" ? 2 : 1
    guard parameters.count >= needed else {
      if command == "PRIVMSG" || command == "NOTICE" {
        if parameters.isEmpty {
          return [[numeric(.noRecipient, ["No recipient given (\(command))"])]]
        }
        return [[numeric(.noTextToSend, ["No text to send"])]]
      }
      return [[numeric(.needMoreParameters, [command, "Not enough parameters"])]]
    }
    let targets = parameters[0].split(separator: ",").map(String.init)
    var steps: [[Action]] = targets.prefix(Self.maximumTargets).map { name in
      switch command {
      case "JOIN": join(name)
      case "PART": part(name)
      case "NAMES": names(name)
      default: privmsg(command, to: name, text: parameters[1])
      }
    }
    if targets.count > Self.maximumTargets {
      steps.append([
        numeric(
          .tooManyTargets,
          [
            targets[Self.maximumTargets],
            "Too many targets: at most \(Self.maximumTargets) in one \(command); "
              + "the rest of the line was not sent",
          ])
      ])
    }
    if steps.isEmpty && command == "NAMES" {
      steps.append([numeric(.endOfNames, ["*", "End of /NAMES list"])])
    }
    return steps
  }

  /// A command that names at most one target: one step.
  private func receive(_ message: IRCMessage, counts: () -> Counts) -> [Action] {
    let parameters = message.parameters
    switch message.command {
    case "CAP": return capability(parameters, counts: counts)
    case "NICK":
      guard let wanted = parameters.first, !wanted.isEmpty else {
        return [numeric(.noNicknameGiven, ["No nickname given"])]
      }
      if registered {
        if wanted == nick { return [] }
        return [
          numeric(
            .nicknameInUse,
            [wanted, "Your nick is your login name, \(nick), and cannot be changed"])
        ]
      }
      gotNick = true
      return completeRegistration(counts: counts)
    case "USER":
      if registered { return [numeric(.alreadyRegistered, ["You may not reregister"])] }
      gotUser = true
      return completeRegistration(counts: counts)
    case "PASS": return []
    case "PING":
      return [reply(source: serverName, "PONG", [serverName, parameters.first ?? ""])]
    case "PONG": return []
    case "QUIT": return registered ? [.request(.quit)] : [.close]
    default:
      guard registered else { return [numeric(.notRegistered, ["You have not registered"])] }
      return command(message, counts: counts)
    }
  }

  /// A line that is not valid UTF-8 or too long: told, not disconnected.
  func refuse(_ frame: Frame) -> [Action] {
    if frame == .tooLong {
      return [numeric(.inputTooLong, ["Input line was too long and was discarded"])]
    }
    let text = "Your line was not valid UTF-8 and was discarded; set your client to UTF-8"
    return [reply(source: serverName, "NOTICE", [registered ? nick : "*", text])]
  }

  private func capability(_ parameters: [String], counts: () -> Counts) -> [Action] {
    let sub = parameters.first?.uppercased() ?? ""
    let target = registered ? nick : "*"
    switch sub {
    case "LS":
      if !registered { negotiating = true }
      let offered = Capability.allCases.map(\.rawValue)
      return capabilityLines(
        target, "LS", offered, continued: (Int(parameters.dropFirst().first ?? "") ?? 0) >= 302)
    case "LIST":
      let active = Capability.allCases.filter(capabilities.contains).map(\.rawValue)
      return capabilityLines(target, "LIST", active, continued: true)
    case "REQ":
      if !registered { negotiating = true }
      let request = parameters.dropFirst().first ?? ""
      let asked = request.split(separator: " ")
      var changed = capabilities
      var known = true
      for name in asked {
        let removing = name.hasPrefix("-")
        guard let capability = Capability(rawValue: String(removing ? name.dropFirst() : name))
        else {
          known = false
          break
        }
        if removing { changed.remove(capability) } else { changed.insert(capability) }
      }
      // The answer names the request as sent; one that cannot fit a line
      // is no list of capabilities a client would send, and is refused.
      let answer = IRCMessage(
        source: serverName, "CAP", [target, known ? "ACK" : "NAK", request])
      guard known, answer.encoded(trailing: true).count <= IRCMessage.maximumBytes else {
        return [reply(source: serverName, "CAP", [target, "NAK", request])]
      }
      capabilities = changed
      return [reply(source: serverName, "CAP", [target, "ACK", request])]
    case "END":
      negotiating = false
      return completeRegistration(counts: counts)
    default:
      return [numeric(.invalidCapCommand, [sub, "Unknown CAP subcommand"])]
    }
  }

  /// `CAP * LS` or `CAP * LIST` with `names`, in as many lines as 512
  /// bytes need: each but the last marked `*` when the client speaks CAP
  /// 302, which allows that (IRCv3 capability negotiation, "Multiline
  /// replies").
  private func capabilityLines(
    _ target: String, _ sub: String, _ names: [String], continued: Bool
  ) -> [Action] {
    let room = IRCMessage.maximumBytes - 64 - serverName.utf8.count - target.utf8.count
    var lines: [[String]] = [[]]
    var length = 0
    for name in names {
      if length + name.utf8.count + 1 > room && !lines[lines.count - 1].isEmpty {
        lines.append([])
        length = 0
      }
      lines[lines.count - 1].append(name)
      length += name.utf8.count + 1
    }
    if !continued { lines = [Array(lines.joined())] }
    return lines.enumerated().map { index, line in
      let more = index < lines.count - 1 ? ["*"] : []
      return reply(
        source: serverName, "CAP", [target, sub] + more + [line.joined(separator: " ")],
        trailing: true)
    }
  }

  /// 001 to 005, LUSERS and the MOTD once NICK, USER and (when CAP was
  /// used) CAP END have come.
  private func completeRegistration(counts: () -> Counts) -> [Action] {
    guard !registered, gotNick, gotUser, !negotiating else { return [] }
    registered = true
    let counts = counts()
    var tokens = [
      "CHANTYPES=#", "CASEMAPPING=ascii", "NETWORK=\(serverName)", "PREFIX=", "CHANMODES=,,,",
      "CHANNELLEN=\(RoomName.maximumLength + 1)", "NICKLEN=\(UserName.maximumLength)",
      "SAFELIST",
    ]
    tokens.append("CHATHISTORY=\(Self.maximumHistory)")
    let most = Self.maximumTargets
    tokens.append("TARGMAX=JOIN:\(most),PART:\(most),NAMES:\(most),PRIVMSG:\(most),NOTICE:\(most)")
    tokens.append("MAXTARGETS=\(most)")
    var actions: [Action] = [
      numeric(.welcome, ["Welcome to chatbroker on \(serverName), \(nick)"]),
      numeric(.yourHost, ["Your host is \(serverName), running chatbroker \(chatbrokerVersion)"]),
      numeric(.created, ["This server speaks chatbroker(7) and IRC"]),
      numeric(.myInfo, [serverName, "chatbroker-\(chatbrokerVersion)", "i", "nt"]),
    ]
    // At most 13 tokens a line, so that with the nick and the closing
    // text a 005 has no more than the 15 parameters IRC allows.
    for start in stride(from: 0, to: tokens.count, by: 13) {
      let line = Array(tokens[start..<min(start + 13, tokens.count)])
      actions.append(numeric(.iSupport, line + ["are supported by this server"]))
    }
    actions += [
      numeric(
        .luserClient,
        ["There are \(counts.connections) connections and 0 invisible on 1 server"]),
      numeric(.luserChannels, [String(counts.rooms), "rooms formed"]),
      numeric(.luserMe, ["I have \(counts.connections) clients and 0 servers"]),
      numeric(.noMotd, ["MOTD File is missing"]),
    ]
    actions.append(.registered)
    return actions
  }

  // MARK: - Commands after registration

  private func command(_ message: IRCMessage, counts: () -> Counts) -> [Action] {
    let parameters = message.parameters
    func need(_ count: Int) -> [Action]? {
      parameters.count < count
        ? [numeric(.needMoreParameters, [message.command, "Not enough parameters"])] : nil
    }
    switch message.command {
    case "WHO":
      if let missing = need(1) { return missing }
      guard let room = room(parameters[0]) else {
        // WHO <nick>: only oneself is known without asking the engine.
        var actions: [Action] = []
        if parameters[0] == nick { actions.append(whoLine(room: "*", member: nick)) }
        actions.append(numeric(.endOfWho, [parameters[0], "End of /WHO list"]))
        return actions
      }
      whoPurposes.append(.who)
      return [.request(.who(room))]
    case "WHOIS":
      if let missing = need(1) { return missing }
      let who = parameters.last!
      guard who == nick || (UserName.isValid(who) && userExists(who)) else {
        return [
          numeric(.noSuchNick, [who, "No such nick"]),
          numeric(.endOfWhois, [who, "End of /WHOIS list"]),
        ]
      }
      return [
        numeric(.whoisUser, [who, who, serverName, "*", who]),
        numeric(.whoisServer, [who, serverName, "chatbroker"]),
        numeric(.endOfWhois, [who, "End of /WHOIS list"]),
      ]
    case "LIST":
      return [numeric(.listStart, ["Channel", "Users  Name"]), .request(.rooms(after: nil))]
    case "TOPIC":
      if let missing = need(1) { return missing }
      if parameters.count > 1 {
        return [
          numeric(.chanOPrivsNeeded, [parameters[0], "Rooms have no topics on chatbroker"])
        ]
      }
      return [numeric(.noTopic, [parameters[0], "No topic is set"])]
    case "MODE":
      if let missing = need(1) { return missing }
      let target = parameters[0]
      guard target.hasPrefix("#") else {
        if target == nick { return [numeric(.userModeIs, ["+i"])] }
        return [numeric(.usersDontMatch, ["Cannot view modes of other users"])]
      }
      if parameters.count > 1 {
        if parameters[1].contains("b") {
          return [numeric(.endOfBanList, [target, "End of channel ban list"])]
        }
        return [numeric(.chanOPrivsNeeded, [target, "Rooms have no modes on chatbroker"])]
      }
      let created = room(target).flatMap { counts().roomCreated($0) }?.milliseconds ?? 0
      return [
        numeric(.channelModeIs, [target, "+nt"], trailing: false),
        numeric(.creationTime, [target, String(created / 1000)], trailing: false),
      ]
    case "SAYAT":
      if let missing = need(3) { return missing }
      return schedule(target: parameters[0], when: parameters[1], text: parameters[2])
    case "MARKREAD":
      return markRead(parameters)
    case "CHATHISTORY":
      if parameters.first?.uppercased() == "TARGETS" && capabilities.contains(.chathistory) {
        return chathistoryTargets(parameters, counts: counts)
      }
      return chathistory(parameters)
    case "USERHOST", "ISON", "AWAY", "LUSERS", "MOTD":
      if message.command == "MOTD" { return [numeric(.noMotd, ["MOTD File is missing"])] }
      return []
    default:
      return [numeric(.unknownCommand, [message.command, "Unknown command"])]
    }
  }

  private func join(_ name: String) -> [Action] {
    guard let room = room(name) else { return [noSuchChannel(name)] }
    var actions: [Action] = [.request(.join(room))]
    // draft/read-marker: the room's marker before the end of its names.
    if capabilities.contains(.readMarker) { actions.append(.request(.readMarker(.room(room)))) }
    actions.append(.request(.who(room)))
    whoPurposes.append(.names)
    if !capabilities.contains(.chathistory) && backlog > 0 {
      historyPurposes.append(.backlog)
      actions.append(.request(.history(.room(room), count: backlog, anchor: nil)))
    }
    return actions
  }

  private func part(_ name: String) -> [Action] {
    guard let room = room(name) else { return [noSuchChannel(name)] }
    return [.request(.part(room))]
  }

  /// `NAMES <room>`: its members (353) and 366; a name that is no room
  /// gets 366 alone, as RFC 2812 says of channels that cannot be seen.
  private func names(_ name: String) -> [Action] {
    guard let room = room(name) else {
      return [numeric(.endOfNames, [name, "End of /NAMES list"])]
    }
    whoPurposes.append(.names)
    return [.request(.who(room))]
  }

  private func privmsg(_ command: String, to target: String, text raw: String) -> [Action] {
    if target.caseInsensitiveCompare(Self.serviceNick) == .orderedSame {
      return service(raw)
    }
    let text = Self.plainText(raw)
    guard !text.allSatisfy({ $0 == " " }) else {
      return [numeric(.noTextToSend, ["No text to send"])]
    }
    if containsControlCharacter(text) {
      return [
        reply(
          source: serverName, "NOTICE",
          [nick, "\(target): the text contains a control character and was not sent"])
      ]
    }
    let brokerTarget: Target
    if target.hasPrefix("#") {
      guard let room = room(target) else { return [noSuchChannel(target)] }
      brokerTarget = .room(room)
    } else {
      guard let user = Target("@" + target) else {
        return [numeric(.noSuchNick, [target, "No such nick"])]
      }
      brokerTarget = user
    }
    pendingSays.append((command, target, text))
    return [.request(.say(brokerTarget, text: text))]
  }

  /// What the service nick understands: `at <when> <target> <text>`,
  /// `list`, `cancel <id>`, `help`.
  private func service(_ text: String) -> [Action] {
    let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
    switch words.first?.lowercased() {
    case "at" where words.count == 4:
      return schedule(target: String(words[2]), when: String(words[1]), text: String(words[3]))
    case "list":
      scheduleFromService.append(true)
      return [.request(.scheduled(nil))]
    case "cancel" where words.count == 2:
      guard let id = MessageID(words[1]) else {
        return [serviceNotice("\(words[1]) is not a message id")]
      }
      return [.request(.cancel(id))]
    default:
      return [
        "at <when> <#room|nick> <text>  send text later; <when> is 18:00, +10m, "
          + "@1798131600 or 2026-12-24T18:00Z",
        "list  your pending scheduled messages",
        "cancel <id>  cancel one of them",
        "help  this list",
      ].map(serviceNotice)
    }
  }

  private func schedule(target: String, when: String, text raw: String) -> [Action] {
    let text = Self.plainText(raw)
    let brokerTarget = target.hasPrefix("#") ? room(target).map(Target.room) : Target("@" + target)
    guard let brokerTarget else { return [serviceNotice("\(target) is not a room or a nick")] }
    guard !text.isEmpty, !containsControlCharacter(text) else {
      return [serviceNotice("the text is empty or holds a control character")]
    }
    return [.request(.sayAt(brokerTarget, when: when, text: text))]
  }

  /// `MARKREAD <target> [timestamp=<time>]` of IRCv3 `draft/read-marker`:
  /// moves the user's read marker (chatbroker(7), "Your rooms and read markers") to the
  /// newest message delivered at or before the time, or asks where it
  /// stands; answered with `MARKREAD <target> timestamp=<time>|*`.
  private func markRead(_ parameters: [String]) -> [Action] {
    func fail(_ code: String, _ text: String) -> [Action] {
      [reply(source: serverName, "FAIL", ["MARKREAD", code] + parameters.prefix(1) + [text])]
    }
    guard capabilities.contains(.readMarker) else {
      return [numeric(.unknownCommand, ["MARKREAD", "Negotiate draft/read-marker first"])]
    }
    guard let name = parameters.first else { return fail("NEED_MORE_PARAMS", "Missing parameters") }
    let target = name.hasPrefix("#") ? room(name).map(Target.room) : Target("@" + name)
    guard let target else { return fail("INVALID_PARAMS", "No such room or nick") }
    guard parameters.count > 1 else { return [.request(.readMarker(target))] }
    guard case .time(let time) = Self.historyPoint(parameters[1]) else {
      return fail(
        "INVALID_PARAMS",
        "\(parameters[1]) is not a time: use timestamp=<YYYY-MM-DDThh:mm:ss.sssZ>")
    }
    return [.request(.markReadAt(target, time))]
  }

  /// `CHATHISTORY LATEST|BEFORE|AFTER|AROUND <target> <reference> <limit>`
  /// and `CHATHISTORY BETWEEN <target> <reference> <reference> <limit>`; a
  /// reference is `msgid=<id>` or `timestamp=<server-time>`, and LATEST
  /// also takes `*` (chatbroker(7), "IRC").
  private func chathistory(_ parameters: [String]) -> [Action] {
    func fail(_ code: String, _ text: String) -> [Action] {
      [reply(source: serverName, "FAIL", ["CHATHISTORY", code] + parameters.prefix(2) + [text])]
    }
    guard capabilities.contains(.chathistory) else {
      return [numeric(.unknownCommand, ["CHATHISTORY", "Negotiate draft/chathistory first"])]
    }
    let subcommand = parameters.first?.uppercased() ?? ""
    let needed = subcommand == "BETWEEN" ? 5 : 4
    guard ["LATEST", "BEFORE", "AFTER", "AROUND", "BETWEEN"].contains(subcommand) else {
      return fail("INVALID_PARAMS", "Supported: LATEST, BEFORE, AFTER, AROUND, BETWEEN, TARGETS")
    }
    guard parameters.count >= needed else {
      return fail("NEED_MORE_PARAMS", "Missing parameters")
    }
    let name = parameters[1]
    let target = name.hasPrefix("#") ? room(name).map(Target.room) : Target("@" + name)
    guard let target else { return fail("INVALID_TARGET", "No such room or nick") }
    guard let limit = Self.historyLimit(parameters[needed - 1]) else {
      return fail("INVALID_PARAMS", "The limit must be a number from 1 to 1000")
    }
    var points: [HistoryPoint] = []
    for reference in parameters[2..<(needed - 1)] {
      if reference == "*" && subcommand == "LATEST" { continue }
      guard let point = Self.historyPoint(reference) else {
        return fail(
          "INVALID_PARAMS",
          "\(reference) is not a reference: use msgid=<id> or timestamp=<YYYY-MM-DDThh:mm:ss.sssZ>"
            + (subcommand == "LATEST" ? " or *" : ""))
      }
      points.append(point)
    }
    let anchor: HistoryAnchor?
    switch (subcommand, points.first) {
    case ("LATEST", nil): anchor = nil
    case ("LATEST", let point?): anchor = .latestAfter(point)
    case ("BEFORE", let point?): anchor = .beforePoint(point)
    case ("AFTER", let point?): anchor = .afterPoint(point)
    case ("AROUND", let point?): anchor = .around(point)
    case (_, let point?): anchor = .between(point, points[1])
    default: anchor = nil
    }
    let batch = "h\(nextBatch)"
    nextBatch += 1
    historyPurposes.append(.chathistory(batch: batch))
    return [
      .reply(batchLine(["+\(batch)", "chathistory", name])),
      .request(.history(target, count: limit, anchor: anchor)),
    ]
  }

  /// The most lines one CHATHISTORY answers (ISUPPORT `CHATHISTORY`).
  static let maximumHistory = 1000

  /// A CHATHISTORY limit: digits, at least 1; more than
  /// ``maximumHistory`` (however many digits) means that many.
  static func historyLimit(_ text: String) -> Int? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    guard let value = Int(text) else { return maximumHistory }
    return value >= 1 ? min(value, maximumHistory) : nil
  }

  /// `CHATHISTORY TARGETS <timestamp=time> <timestamp=time> <limit>`: the
  /// conversations with a message between the two times, each with its
  /// newest one's time, in a `draft/chathistory-targets` batch.
  private func chathistoryTargets(_ parameters: [String], counts: () -> Counts) -> [Action] {
    func fail(_ code: String, _ text: String) -> [Action] {
      [reply(source: serverName, "FAIL", ["CHATHISTORY", code] + parameters.prefix(2) + [text])]
    }
    guard parameters.count >= 4 else { return fail("NEED_MORE_PARAMS", "Missing parameters") }
    var times: [Timestamp] = []
    for reference in parameters[1...2] {
      guard case .time(let time) = Self.historyPoint(reference) else {
        return fail(
          "INVALID_PARAMS",
          "\(reference) is not a time: use timestamp=<YYYY-MM-DDThh:mm:ss.sssZ>")
      }
      times.append(time)
    }
    guard let limit = Self.historyLimit(parameters[3]) else {
      return fail("INVALID_PARAMS", "The limit must be a number from 1 to 1000")
    }
    let active = counts().activeConversations(user, times.min()!, times.max()!, limit)
    let batch = "h\(nextBatch)"
    nextBatch += 1
    let tags = capabilities.contains(.batch) ? [IRCTag("batch", batch)] : []
    var bytes = batchLine(["+\(batch)", "draft/chathistory-targets"])
    for conversation in active {
      bytes += IRCMessage(
        tags: tags, source: serverName, "CHATHISTORY",
        ["TARGETS", shown(conversation.target, author: nick), conversation.latest.description]
      ).encoded()
    }
    bytes += batchLine(["-\(batch)"])
    return [.reply(bytes)]
  }

  /// A `BATCH` start or end, for a client that negotiated `batch` only.
  private func batchLine(_ parameters: [String]) -> [UInt8] {
    guard capabilities.contains(.batch) else { return [] }
    return IRCMessage(source: serverName, "BATCH", parameters).encoded()
  }

  /// `msgid=<id>` or `timestamp=<time>` in server-time's form.
  private static func historyPoint(_ reference: String) -> HistoryPoint? {
    if reference.hasPrefix("msgid=") {
      return MessageID(reference.dropFirst(6)).map(HistoryPoint.message)
    }
    if reference.hasPrefix("timestamp=") {
      return Timestamp(rfc3339: reference.dropFirst(10)).map(HistoryPoint.time)
    }
    return nil
  }

  // MARK: - Output

  /// The event as this client's IRC lines (possibly none). Room events are
  /// encoded once per capability set and shared; the rest are for this
  /// client alone.
  ///
  /// `mayDefer`: the line shows nothing unsynced (its kind is neutral), so
  /// a CHATHISTORY line may be encoded in a later step (``nextStep()``)
  /// instead of now; it still leaves in the engine's order.
  func encode(_ outgoing: Outgoing, mayDefer: Bool = false) -> [UInt8] {
    switch outgoing.event {
    case .message(.room, _, _, _, _), .joined, .parted:
      return outgoing.encoded(variant: encodingVariant) { encode($0) }
    case .history(let target, _, _, _, _):
      guard case .chathistory(let batch) = historyPurposes.first ?? .backlog else { break }
      if case .room(let room) = target, failedJoins.contains(room) { return [] }
      if mayDefer || !deferredHistory.isEmpty {
        deferredHistory.append((outgoing.event, capabilities.contains(.batch) ? batch : nil))
        return []
      }
    case .ok(.history, _):
      if !deferredHistory.isEmpty, case .chathistory = historyPurposes.first {
        deferredBatchEnd = encode(outgoing.event)
        pendingSteps.insert(.historyPage, at: 0)
        return []
      }
    default:
      break
    }
    return encode(outgoing.event)
  }

  func encode(_ event: BrokerEvent) -> [UInt8] {
    switch event {
    case .hello: return []
    case .message(let target, let id, let time, let author, let text):
      return privmsgLines(
        from: author, to: shown(target, author: author), text: text, id: id, time: time)
    case .joined(let room, let who):
      return IRCMessage(source: "\(who)!\(who)@\(serverName)", "JOIN", [room.description])
        .encoded()
    case .parted(let room, let who):
      return IRCMessage(source: "\(who)!\(who)@\(serverName)", "PART", [room.description])
        .encoded()
    case .accepted(.say, let id, let time):
      guard !pendingSays.isEmpty else { return [] }
      let said = pendingSays.removeFirst()
      guard capabilities.contains(.echoMessage) else { return [] }
      return privmsgLines(
        from: nick, to: said.target, text: said.text, id: id, time: time,
        command: said.command)
    case .accepted(let verb, let id, let time):
      return serviceNotice("\(verb.rawValue) accepted: \(id) is due at \(time)").bytes
    case .ok(let verb, let fields):
      return ok(verb, fields)
    case .error(let verb, let code, let text):
      return error(verb, code, text)
    case .history(let target, _, _, _, _):
      if case .room(let room) = target, failedJoins.contains(room) { return [] }
      switch historyPurposes.first ?? .backlog {
      case .backlog: return historyLine(event, batch: nil, backlog: true)
      case .chathistory(let batch):
        return historyLine(
          event, batch: capabilities.contains(.batch) ? batch : nil, backlog: false)
      }
    case .scheduled(let id, let target, let due, _, let rule, let text):
      let when = rule.map { "\(due) (\($0))" } ?? due.description
      return serviceNotice("\(id) to \(shown(target, author: nick)) at \(when): \(text)").bytes
    case .room(let room, let count, _):
      lastListed = room
      return numeric(.list, [room.description, String(count), ""]).bytes
    case .member(_, let who):
      members.append(who)
      return []
    case .conversation, .markRead:
      return []
    case .readMarker(let target, _, let time):
      guard capabilities.contains(.readMarker) else { return [] }
      if case .room(let room) = target, failedJoins.contains(room) { return [] }
      return IRCMessage(
        source: serverName, "MARKREAD",
        [shown(target, author: nick), time.map { "timestamp=\($0)" } ?? "*"]
      ).encoded()
    case .info(let text):
      return reply(source: serverName, "NOTICE", [nick, text]).bytes
    case .bye(let text):
      return IRCMessage("ERROR", ["Closing link: \(text)"]).encoded(trailing: true)
    }
  }

  /// A `HIST` event as PRIVMSG lines, in a CHATHISTORY `batch` if any; in
  /// a JOIN's `backlog` the time starts the text for a client without
  /// server-time.
  private func historyLine(_ event: BrokerEvent, batch: String?, backlog: Bool) -> [UInt8] {
    guard case .history(let target, let id, let time, let author, let text) = event else {
      return []
    }
    var shownText = text
    if backlog && !capabilities.contains(.serverTime) {
      shownText = "[\(clock(time))] " + text
    }
    return privmsgLines(
      from: author, to: shown(target, author: author), text: shownText, id: id, time: time,
      batch: batch)
  }

  private func ok(_ verb: Verb, _ fields: [String]) -> [UInt8] {
    switch verb {
    case .join:
      return IRCMessage(source: mask, "JOIN", [fields.first ?? ""]).encoded()
    case .part:
      return IRCMessage(source: mask, "PART", [fields.first ?? ""]).encoded()
    case .who:
      let room = fields.first ?? "*"
      let listed = members
      members = []
      let purpose = whoPurposes.isEmpty ? .who : whoPurposes.removeFirst()
      if let name = RoomName(room), failedJoins.contains(name) {
        if capabilities.contains(.chathistory) || backlog == 0 { failedJoins.remove(name) }
        return []
      }
      switch purpose {
      case .names:
        var bytes: [UInt8] = []
        var line: [String] = []
        for member in listed {
          line.append(member)
          if line.joined(separator: " ").utf8.count > 400 {
            bytes += numeric(.namesReply, ["=", room, line.joined(separator: " ")]).bytes
            line = []
          }
        }
        if !line.isEmpty {
          bytes += numeric(.namesReply, ["=", room, line.joined(separator: " ")]).bytes
        }
        return bytes + numeric(.endOfNames, [room, "End of /NAMES list"]).bytes
      case .who:
        return listed.flatMap { whoLine(room: room, member: $0).bytes }
          + numeric(.endOfWho, [room, "End of /WHO list"]).bytes
      }
    case .history:
      let purpose = historyPurposes.isEmpty ? .backlog : historyPurposes.removeFirst()
      if let name = fields.first.flatMap(RoomName.init), failedJoins.contains(name) {
        failedJoins.remove(name)
        return []
      }
      if case .chathistory(let batch) = purpose {
        return batchLine(["-\(batch)"])
      }
      return []
    case .rooms:
      // A page of ROOMS is 1000 rooms: LIST goes on with the next page
      // as a step of its own, and ends after the last.
      if fields.contains("MORE"), let lastListed {
        pendingSteps.insert(.actions([.request(.rooms(after: lastListed))]), at: 0)
        return []
      }
      lastListed = nil
      return numeric(.listEnd, ["End of /LIST"]).bytes
    case .scheduled:
      let count = fields.first ?? "0"
      return serviceNotice("\(count) pending").bytes
    case .cancel:
      return serviceNotice("cancelled \(fields.first ?? "")").bytes
    default:
      return []
    }
  }

  private func error(_ verb: String, _ code: ErrorCode, _ text: String) -> [UInt8] {
    switch Verb(rawValue: verb) {
    case .join:
      if let room = text.split(separator: " ").compactMap({ RoomName($0) }).first {
        failedJoins.insert(room)
      } else if !whoPurposes.isEmpty {
        // The names asked with this JOIN are not shown: there is no room.
      }
      return reply(source: serverName, "NOTICE", [nick, "JOIN refused: \(text)"]).bytes
    case .part:
      return reply(source: serverName, "NOTICE", [nick, "PART refused: \(text)"]).bytes
    case .say:
      let said = pendingSays.isEmpty ? nil : pendingSays.removeFirst()
      let target = said?.target ?? "*"
      if code == .noSuchUser { return numeric(.noSuchNick, [target, text]).bytes }
      return numeric(.cannotSendToChannel, [target, text]).bytes
    case .history:
      let purpose = historyPurposes.isEmpty ? .backlog : historyPurposes.removeFirst()
      if case .chathistory(let batch) = purpose {
        return batchLine(["-\(batch)"])
          + reply(source: serverName, "FAIL", ["CHATHISTORY", "MESSAGE_ERROR", text]).bytes
      }
      return []
    case .who:
      if !whoPurposes.isEmpty { whoPurposes.removeFirst() }
      members = []
      return reply(source: serverName, "NOTICE", [nick, text]).bytes
    case .markRead:
      let code = code == .storage ? "INTERNAL_ERROR" : "INVALID_PARAMS"
      return reply(source: serverName, "FAIL", ["MARKREAD", code, text]).bytes
    case .sayAt, .scheduled, .cancel:
      return serviceNotice("\(verb) \(code.rawValue): \(text)").bytes
    default:
      if verb == "-" && code == .limit {
        return IRCMessage("ERROR", ["Closing link: \(text)"]).encoded(trailing: true)
      }
      return reply(source: serverName, "NOTICE", [nick, "\(verb) \(code.rawValue): \(text)"])
        .bytes
    }
  }

  // MARK: - Helpers

  /// Room names are case-insensitive on IRC (CASEMAPPING=ascii) and
  /// lower-case on chatbroker.
  private func room(_ name: String) -> RoomName? {
    RoomName(name.lowercased())
  }

  private func noSuchChannel(_ name: String) -> Action {
    numeric(
      .noSuchChannel,
      [name, "Not a room name: use # then 1 to 32 of a-z 0-9 . _ - (chatbroker(7))"])
  }

  /// The IRC target of a broker target: the room, or for a direct message
  /// the recipient (this client, when someone else wrote it).
  private func shown(_ target: Target, author: String) -> String {
    switch target {
    case .room(let room): room.description
    case .user(let other): author == nick ? other : nick
    }
  }

  /// A message's tags as this client reads them (`@batch=...;time=...;msgid=... `,
  /// each only when negotiated), written as bytes, with where the msgid
  /// begins: the further pieces of a long text carry the tags before it.
  /// Every line of a history has them; nothing in them needs escaping.
  private func tagBytes(batch: String?, time: Timestamp, id: MessageID)
    -> (bytes: [UInt8], msgidAt: Int)
  {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    func start(_ key: StaticString) {
      bytes.append(bytes.isEmpty ? UInt8(ascii: "@") : UInt8(ascii: ";"))
      bytes.append(
        contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
      bytes.append(UInt8(ascii: "="))
    }
    if let batch {
      start("batch")
      bytes.append(contentsOf: batch.utf8)
    }
    if capabilities.sendsTime {
      start("time")
      time.appendRFC3339(to: &bytes)
    }
    let msgidAt = bytes.count
    if capabilities.sendsMsgid {
      start("msgid")
      id.appendDescription(to: &bytes)
    }
    if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
    return (bytes, msgidAt)
  }

  /// `PRIVMSG` lines, the text split to fit 512 bytes; only the first
  /// piece carries the msgid, as each line is one message to a client.
  private func privmsgLines(
    from author: String, to target: String, text: String, id: MessageID, time: Timestamp,
    batch: String? = nil, command: String = "PRIVMSG"
  ) -> [UInt8] {
    let tags = tagBytes(batch: batch, time: time, id: id)
    let source = Self.source(author, serverName: serverName)
    var later: [UInt8] = []
    if text.utf8.count > IRCText.room(source: source, command: command, target: target) {
      later = Array(tags.bytes[..<tags.msgidAt])
      if !later.isEmpty { later.append(UInt8(ascii: " ")) }
    }
    return IRCMessage.textLines(
      tags: tags.bytes, laterTags: later, source: source, command: command, target: target,
      text: text)
  }

  /// The source of a line by `author`: `alice!alice@host`; a user of
  /// another host, `alice@h2` on the line protocol, is `alice|h2!alice@h2`,
  /// since a nick cannot hold `@` (chatbroker(8), "FEDERATION").
  static func source(_ author: String, serverName: String) -> String {
    guard let at = author.lastIndex(of: "@") else { return "\(author)!\(author)@\(serverName)" }
    let user = author[..<at]
    let node = author[author.index(after: at)...]
    return "\(user)|\(node)!\(user)@\(node)"
  }

  private func whoLine(room: String, member: String) -> Action {
    numeric(.whoReply, [room, member, serverName, serverName, member, "H", "0 \(member)"])
  }

  private func numeric(_ numeric: Numeric, _ parameters: [String], trailing: Bool = true)
    -> Action
  {
    reply(
      source: serverName, numeric.rawValue, [registered ? nick : "*"] + parameters,
      trailing: trailing)
  }

  private func reply(
    source: String, _ command: String, _ parameters: [String], trailing: Bool = true
  ) -> Action {
    .reply(IRCMessage(source: source, command, parameters).cleaned().encoded(trailing: trailing))
  }

  /// A NOTICE from the service nick, split into lines that fit 512 bytes
  /// (a pending message's text can be 4 KB).
  private func serviceNotice(_ text: String) -> Action {
    let source = "\(Self.serviceNick)!service@\(serverName)"
    let room = IRCText.room(source: source, command: "NOTICE", target: nick)
    return .reply(
      IRCText.split(text, maximumBytes: room).flatMap {
        reply(source: source, "NOTICE", [nick, $0]).bytes
      })
  }

  private func clock(_ time: Timestamp) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
    let parts = calendar.dateComponents([.hour, .minute], from: date)
    return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
  }

  /// IRC formatting (bold, colours, reset...) taken out, and a CTCP ACTION
  /// written as `/me`: chatbroker texts hold no control characters.
  static func plainText(_ text: String) -> String {
    var text = Substring(text)
    var action = false
    if text.hasPrefix("\u{01}ACTION ") {
      action = true
      text = text.dropFirst(8)
      if text.hasSuffix("\u{01}") { text = text.dropLast() }
    }
    var result = ""
    var scalars = text.unicodeScalars[...]
    while let scalar = scalars.popFirst() {
      switch scalar.value {
      case 0x02, 0x0F, 0x11, 0x16, 0x1D, 0x1E, 0x1F: continue
      case 0x03:
        // ^C, then up to two digits, optionally a comma and two more.
        var digits = 0
        while digits < 2, let next = scalars.first, ("0"..."9").contains(next) {
          scalars.removeFirst()
          digits += 1
        }
        if digits > 0, scalars.first == ",",
          scalars.dropFirst().first.map({ ("0"..."9").contains($0) }) == true
        {
          scalars.removeFirst()
          var more = 0
          while more < 2, let next = scalars.first, ("0"..."9").contains(next) {
            scalars.removeFirst()
            more += 1
          }
        }
      default: result.unicodeScalars.append(scalar)
      }
    }
    return action ? "/me " + result : result
  }
}

extension IRCSession.Action {
  /// The bytes of a reply, for building longer answers out of several.
  var bytes: [UInt8] {
    if case .reply(let bytes) = self { return bytes }
    return []
  }
}

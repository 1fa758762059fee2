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
final class IRCSession: WireCodec {
  /// What one line of input asks of the shell, in order.
  typealias Action = WireAction

  /// The service nick for scheduling: `|` can be in an IRC nick but never
  /// in a login name, so no user can take it (chatbroker(7), "IRC").
  static let serviceNick = "sched|bot"

  /// IRC lines are 512 bytes, plus up to 4096 of tags from the client.
  let maximumLineBytes = 512 + 4096

  let user: String
  let serverName: String
  let timeZone: TimeZone
  /// How many lines of a room a client without chathistory gets on JOIN.
  let backlog: Int
  var capabilities = CapabilitySet()
  var registered = false {
    didSet { if registered && !oldValue { gateway.unregistered -= 1 } }
  }
  /// What this server's IRC sessions share: the count of unregistered
  /// clients this session is in until it registers (LUSERS, 253), and the
  /// directory of real names and idle times.
  let gateway: IRCGateway
  /// What the session may read of the engine, as its user.
  let reader: EngineReader
  var directory: IRCDirectory { gateway.directory }
  var negotiating = false
  var gotNick = false
  var gotUser = false
  var nextBatch = 1
  /// What is left of a line that names several targets (or of a `LIST`
  /// longer than a page, or of a long CHATHISTORY answer): one step per
  /// target or page, each served as one request of the connection's turn,
  /// so a long line waits between its targets like any other requests
  /// (chatbroker(7), "IRC", `TARGMAX`).
  var pendingSteps: [Step] = []
  /// The rooms this client joined, each with its JOIN's reply context: a
  /// JOIN the engine refused is marked there, a PART removes it. A JOIN
  /// of a room the client is in is not answered again (its client, set up
  /// to join its channels, sends them after being joined to its rooms).
  var joins: [RoomName: IRCReplyContext] = [:]

  /// One step of ``pendingSteps``: actions ready to be carried out, or the
  /// next page of a CHATHISTORY answer, encoded only when its turn comes.
  enum Step {
    case actions([Action])
    case historyPage(IRCReplyContext)
  }

  /// Lines of a CHATHISTORY answer encoded in one step.
  static let historyLinesPerStep = 50

  /// The most targets one `JOIN`, `PART`, `NAMES`, `PRIVMSG` or `NOTICE`
  /// may name (ISUPPORT `TARGMAX` and `MAXTARGETS`); the rest are refused
  /// with 407.
  static let maximumTargets = 20

  /// The draft/multiline batch the client has opened and not yet closed
  /// (``multilineLine(_:)``); its size is bounded as the capability says.
  var multiline: IRCMultilineBatch?

  /// The real name `USER` gave, kept in ``directory`` once registered.
  var realName = ""

  init(user: String, gateway: IRCGateway, reader: EngineReader) {
    self.user = user
    self.gateway = gateway
    self.reader = reader
    serverName = gateway.serverName
    timeZone = gateway.timeZone
    backlog = gateway.backlog
    gateway.unregistered += 1
  }

  deinit {
    if !registered { gateway.unregistered -= 1 } else { directory.closed(user) }
  }

  var nick: String { user }
  var mask: String { "\(user)!\(user)@\(serverName)" }

  /// The variant of the shared encodings this client reads: clients with
  /// the same capabilities get the same bytes for a room's events.
  var encodingVariant: Int { 1 + Int(capabilities.bits) }

  // MARK: - Input

  func receive(_ frame: Frame, _ perform: (WireAction) -> Void) {
    // Every action is decided before the first is carried out: carrying
    // one out encodes replies, which reads this session's state.
    let actions =
      if case .line(let line) = frame { receive(line) } else { refuse(frame) }
    for action in actions { perform(action) }
  }

  func nextStep(_ perform: (WireAction) -> Void) -> Bool {
    guard let actions = nextStep() else { return false }
    for action in actions { perform(action) }
    return true
  }

  /// Whether steps of an earlier line wait (``nextStep()``).
  var hasPendingSteps: Bool { !pendingSteps.isEmpty }

  /// The next step of a line that named several targets, to be served as
  /// one more request of the connection's turn; nil when none is left.
  func nextStep() -> [Action]? {
    guard !pendingSteps.isEmpty else { return nil }
    switch pendingSteps.removeFirst() {
    case .actions(let actions): return actions
    case .historyPage(let context): return [.reply(nextHistoryPage(of: context))]
    }
  }

  /// An event is encoded when it is written: what it reads as depends on
  /// its reply context and on the capabilities at that time.
  func queued(_ outgoing: Outgoing, answering: ReplyContext?) -> QueuedLine {
    .event(outgoing, answering: answering)
  }

  /// What the replies just encoded for `context` call for: the next page
  /// of a LIST, the pages of a CHATHISTORY answer, or the JOINs of the
  /// user's rooms on registration, each a step of its own before any
  /// later line.
  func answered(_ context: ReplyContext) {
    guard let context = context as? IRCReplyContext else { return }
    if context.morePages, let last = context.lastListed {
      context.morePages = false
      pendingSteps.insert(.actions([.request(.rooms(after: last), answering: context)]), at: 0)
    }
    if context.roomsComplete {
      context.roomsComplete = false
      pendingSteps.insert(contentsOf: context.roomsToJoin.map { .actions(join($0)) }, at: 0)
    }
    if context.batchEnd != nil, !context.pageQueued {
      context.pageQueued = true
      pendingSteps.insert(.historyPage(context), at: 0)
    }
  }

  /// The next ``historyLinesPerStep`` deferred CHATHISTORY lines of
  /// `context`, and the batch's end after the last; the page after it
  /// waits for a step of its own.
  func nextHistoryPage(of context: IRCReplyContext) -> [UInt8] {
    let end = min(context.deferredStart + Self.historyLinesPerStep, context.deferred.count)
    let batch = capabilities.contains(.batch) ? context.batchName : nil
    var bytes: [UInt8] = []
    for index in context.deferredStart..<end {
      bytes += historyLine(context.deferred[index], batch: batch, backlog: false)
    }
    context.deferredStart = end
    if context.isDeferring {
      pendingSteps.insert(.historyPage(context), at: 0)
      return context.label?.add(bytes, final: false) ?? bytes
    }
    bytes += context.batchEnd ?? []
    context.deferred.removeAll()
    context.deferredStart = 0
    context.batchEnd = nil
    context.pageQueued = false
    guard let response = context.label else { return bytes }
    return labelFinished(bytes, of: context, response)
  }

  /// One line from the client, already framed and valid UTF-8: what its
  /// first step asks (a line naming several targets leaves the others to
  /// ``nextStep()``).
  func receive(_ line: String) -> [Action] {
    if let tooLong = Self.overLimit(line) {
      return [numeric(.inputTooLong, [tooLong])]
    }
    guard let message = IRCMessage(parsing: line) else { return [] }
    if let answer = multilineLine(message) { return answer }
    let label = label(of: message)
    var steps = handle(message)
    if let label { steps = labeled(steps, label: label) }
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
  func handle(_ message: IRCMessage) -> [[Action]] {
    switch message.command {
    case "JOIN", "PART", "NAMES", "PRIVMSG", "NOTICE":
      guard registered else { return [[numeric(.notRegistered, ["You have not registered"])]] }
      return multiTarget(message)
    case "KICK":
      guard registered else { return [[numeric(.notRegistered, ["You have not registered"])]] }
      return kickSteps(message.parameters)
    default:
      return [receive(message)]
    }
  }

  /// JOIN, PART, NAMES, PRIVMSG and NOTICE: one step per target, at most
  /// ``maximumTargets`` of them; the rest are answered 407 at once.
  func multiTarget(_ message: IRCMessage) -> [[Action]] {
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
    // JOIN's keys: `group=<group>` or `invite` creates the room private
    // (chatbroker(7), "Moderation").
    let keys = command == "JOIN" && parameters.count > 1 ? parameters[1].split(separator: ",") : []
    var steps: [[Action]] = targets.prefix(Self.maximumTargets).enumerated().map { index, name in
      switch command {
      case "JOIN": join(name, key: index < keys.count ? String(keys[index]) : nil)
      case "PART": part(name, reason: parameters.count > 1 ? parameters[1] : nil)
      case "NAMES":
        targets.count == 1
          ? names(name)
          : names(
            name, end: index == min(targets.count, Self.maximumTargets) - 1 ? parameters[0] : "")
      default:
        privmsg(
          command, to: name, text: parameters[1], tags: Self.clientTags(message.tags))
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
  func receive(_ message: IRCMessage) -> [Action] {
    let parameters = message.parameters
    switch message.command {
    case "CAP": return capability(parameters)
    case "NICK":
      guard let wanted = parameters.first, !wanted.isEmpty else {
        return [numeric(.noNicknameGiven, ["No nickname given"])]
      }
      guard Self.isNickname(wanted) else {
        return [numeric(.erroneousNickname, [wanted, "Erroneous nickname"])]
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
      return completeRegistration()
    case "USER":
      if registered { return [numeric(.alreadyRegistered, ["You may not reregister"])] }
      // `USER <username> <mode> <unused> :<realname>`: the username is
      // not used (the user field is the login name) but, as the real
      // name, must not be empty (modern.ircdocs.horse, USER).
      guard parameters.count >= 4, !parameters[0].isEmpty, !parameters[3].isEmpty else {
        return [numeric(.needMoreParameters, ["USER", "Not enough parameters"])]
      }
      realName = Self.realNameText(parameters[3])
      gotUser = true
      return completeRegistration()
    case "PASS": return []
    case "PING":
      guard let token = parameters.first, !token.isEmpty else {
        return [numeric(.noOrigin, ["No origin specified"])]
      }
      // The one reply that shows no state: it never waits for a sync, so
      // a client's lag check measures the broker, not the disk.
      return [
        .reply(reply(source: serverName, "PONG", [serverName, token]).bytes, stateless: true)
      ]
    case "PONG": return []
    case "QUIT":
      guard registered else { return [.close] }
      if let reason = parameters.first, !reason.isEmpty {
        return [.request(.quit(reason: Self.reasonText(reason)), answering: nil)]
      }
      return [.request(.quit(), answering: nil)]
    default:
      guard registered else { return [numeric(.notRegistered, ["You have not registered"])] }
      return command(message)
    }
  }

  /// Whether `word` may be a nick at all (modern.ircdocs.horse, "Clients"):
  /// none of space , * ? ! @, and no `$`, `:`, channel type or membership
  /// prefix first. A NICK for one that may not is refused with 432 even
  /// though its word is not used, so that a client learns its mistake.
  static func isNickname(_ word: String) -> Bool {
    guard let first = word.first, !"$:#&@+%~".contains(first) else { return false }
    return !word.contains { " ,*?!@".contains($0) }
  }

  /// A line that is not valid UTF-8 or too long: told, not disconnected.
  /// Bad UTF-8 is answered as IRCv3 UTF8ONLY says, `FAIL * INVALID_UTF8`
  /// (the command is not known: the line was not read), then a NOTICE for
  /// clients that do not show standard replies.
  func refuse(_ frame: Frame) -> [Action] {
    if frame == .tooLong {
      return [numeric(.inputTooLong, ["Input line was too long and was discarded"])]
    }
    let text = "Your line was not valid UTF-8 and was discarded; set your client to UTF-8"
    return [
      reply(source: serverName, "FAIL", ["*", "INVALID_UTF8", text]),
      reply(source: serverName, "NOTICE", [registered ? nick : "*", text]),
    ]
  }
}

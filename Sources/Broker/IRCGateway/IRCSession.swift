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
  var capabilities = CapabilitySet()
  var registered = false
  var negotiating = false
  var gotNick = false
  var gotUser = false

  /// What the next replies of each verb answer, oldest first: the engine
  /// answers each connection's requests in order.
  enum WhoPurpose { case names, who }
  enum HistoryPurpose {
    case backlog
    case chathistory(batch: String)
  }
  var whoPurposes: [WhoPurpose] = []
  var historyPurposes: [HistoryPurpose] = []
  var pendingSays: [(command: String, target: String, text: String)] = []
  var scheduleFromService: [Bool] = []
  var members: [String] = []
  /// Rooms whose JOIN failed: the names and backlog asked with it are not shown.
  var failedJoins: Set<RoomName> = []
  var nextBatch = 1
  /// The room a `LIST` showed last, where its next page starts.
  var lastListed: RoomName?
  /// What is left of a line that names several targets (or of a `LIST`
  /// longer than a page): one step per target, each served as one request
  /// of the connection's turn, so a long line waits between its targets
  /// like any other requests (chatbroker(7), "IRC", `TARGMAX`).
  var pendingSteps: [Step] = []

  /// One step of ``pendingSteps``: actions ready to be carried out, or the
  /// next page of a CHATHISTORY answer, encoded only when its turn comes.
  enum Step {
    case actions([Action])
    case historyPage
  }

  /// The lines of a CHATHISTORY answer that showed only synced messages,
  /// not yet encoded (with the batch each belongs to): a thousand long
  /// lines are encoded ``historyLinesPerStep`` a step, in the order the
  /// engine sent them, then the batch ends (`batchEnd`).
  var deferredHistory: [(event: BrokerEvent, batch: String?)] = []
  var deferredStart = 0
  var deferredBatchEnd: [UInt8] = []

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
  func nextHistoryPage() -> [UInt8] {
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
  func handle(_ message: IRCMessage, counts: () -> Counts) -> [[Action]] {
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
  func receive(_ message: IRCMessage, counts: () -> Counts) -> [Action] {
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
}

import LineProtocol

/// When to colour script output.
public enum ColorMode: String, Equatable, Sendable {
  case auto
  case always
  case never
}

/// What the command line asks for.
public enum Command: Equatable, Sendable {
  /// The full-screen chat, joining these rooms (or last time's).
  case interactive(targets: [String])
  /// `text == nil`: each line of standard input is one message.
  case say(target: String, at: String?, text: [String]?)
  /// `say --every RULE`: a series; `rule` as typed, read in the user's zone.
  case sayEvery(target: String, rule: String, text: [String])
  case history(target: String, count: Int?, json: Bool)
  /// `search [--room TARGET] WORDS...`: newest first; `target == nil`
  /// searches everything the user may read.
  case search(target: String?, count: Int?, json: Bool, words: [String])
  /// `mentions`: only what is for the user (direct messages, mentions).
  case tail(targets: [String], count: Int, json: Bool, mentions: Bool = false)
  case scheduled(json: Bool)
  case cancel(id: String)
  /// `react` and `unreact` (`removed`): a reaction on message `id` of
  /// `target`, or mine taken off it (chatbroker(7), `REACT`).
  case react(target: String, id: String, reaction: String, removed: Bool)
  /// `amend`: message `id` of `target`, one of mine, gets `text` instead
  /// (chatbroker(7), `AMEND`).
  case amend(target: String, id: String, text: [String])
  /// `thread`: message `id` of `target` and the first `count` replies to
  /// it, oldest first (chatbroker(7), `THREAD`).
  case thread(target: String, id: String, count: Int?, json: Bool)
  case rooms(json: Bool)
  case who(room: String, json: Bool)
  /// `web`: a link that opens the chat in a browser; `--revoke` ends them.
  case web(revoke: Bool)
  case help(command: String?)
  case version
}

/// A parsed command line.
public struct Invocation: Equatable, Sendable {
  public var socket: String?
  /// `--trust-user`, each time it is given (see ``BrokerTrust``).
  public var trustUsers: [String] = []
  public var color: ColorMode = .auto
  /// `say --wait SECONDS`: how long to wait for the broker to answer, at
  /// the start and after it went away.
  public var wait: Int = Invocation.defaultWait
  /// `say --notice`: each message goes as a `NOTICE` (chatbroker(7)),
  /// which no program answers automatically.
  public var notice = false
  /// `say --block`: all the text is one message of several lines
  /// (chatbroker(7), `BLOCK`), or as few as it needs.
  public var block = false
  /// `say --reply ID`: each message answers message ID of the target
  /// (chatbroker(7), `REPLY`).
  public var replyTo: String?
  public var command: Command

  public static let defaultWait = 60
}

/// A command line that cannot be run; exit status 64.
public struct UsageError: Error, Equatable, CustomStringConvertible {
  public var message: String
  /// The command whose usage to show after the message.
  public var command: String?

  public init(_ message: String, command: String? = nil) {
    self.message = message
    self.command = command
  }

  public var description: String { message }
}

/// Parses chatsh's arguments (without the program name).
public enum OptionParser {
  public static let commands = [
    "say", "history", "search", "thread", "tail", "scheduled", "cancel", "react", "unreact",
    "amend", "rooms", "who", "web",
  ]

  public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
    var invocation = Invocation(socket: nil, command: .interactive(targets: []))
    var scanner = ArgumentScanner(arguments)
    var command: String?
    var positional: [String] = []
    var json = false
    var count: Int?
    var at: String?
    var every: String?
    var help = false
    var mentions = false
    var room: String?
    var revoke = false

    while let argument = scanner.next() {
      // Options are read until the first positional word of `say`, or the
      // third of `amend` (their text may start with "-"), or after "--".
      if scanner.optionsEnded || (command == "say" && !positional.isEmpty)
        || (command == "amend" && positional.count >= 2)
      {
        positional.append(argument)
        continue
      }
      switch argument {
      case "--":
        scanner.optionsEnded = true
      case "-h", "--help":
        help = true
      case "-V", "--version":
        guard command == nil else {
          throw UsageError("--version goes before the command", command: command)
        }
        invocation.command = .version
        return invocation
      case "--json":
        json = true
      case "--mentions":
        guard command == "tail" else {
          throw UsageError("--mentions applies to tail only", command: command)
        }
        mentions = true
      case "--room":
        guard command == "search" else {
          throw UsageError("--room applies to search only", command: command)
        }
        room = try scanner.value(for: argument)
      case "--revoke":
        guard command == "web" else {
          throw UsageError("--revoke applies to web only", command: command)
        }
        revoke = true
      case "-s", "--socket":
        invocation.socket = try scanner.value(for: argument)
      case "--trust-user":
        let value = try scanner.value(for: argument)
        guard !value.isEmpty else {
          throw UsageError("--trust-user needs a login name or uid", command: command)
        }
        invocation.trustUsers.append(value)
      case "-n", "--count":
        let value = try scanner.value(for: argument)
        guard let number = Int(value), number >= 0 else {
          throw UsageError("\(argument) needs a whole number, not '\(value)'", command: command)
        }
        count = number
      case "--at":
        at = try scanner.value(for: argument)
      case "--wait":
        let value = try scanner.value(for: argument)
        guard let seconds = Int(value), seconds >= 0, seconds <= 86400 else {
          throw UsageError(
            "--wait needs a number of seconds from 0 to 86400, not '\(value)'", command: command)
        }
        guard command == "say" else {
          throw UsageError("--wait applies to say only", command: command)
        }
        invocation.wait = seconds
      case "--every":
        every = try scanner.value(for: argument)
      case "--notice":
        guard command == "say" else {
          throw UsageError("--notice applies to say only", command: command)
        }
        invocation.notice = true
      case "--block":
        guard command == "say" else {
          throw UsageError("--block applies to say only", command: command)
        }
        invocation.block = true
      case "--reply":
        guard command == "say" else {
          throw UsageError("--reply applies to say only", command: command)
        }
        let value = try scanner.value(for: argument)
        guard MessageID(value) != nil else {
          throw UsageError(
            "--reply needs a message id (see chatsh history --json), not '\(value)'",
            command: command)
        }
        invocation.replyTo = value
      case "--color", "--colour":
        let value = try scanner.value(for: argument)
        guard let mode = ColorMode(rawValue: value) else {
          throw UsageError("--color takes auto, always or never, not '\(value)'")
        }
        invocation.color = mode
      default:
        if let (name, value) = splitLongOption(argument) {
          scanner.pushBack([name, value])
          continue
        }
        if argument.hasPrefix("-n"), argument.count > 2 {
          scanner.pushBack(["-n", String(argument.dropFirst(2))])
          continue
        }
        if argument.hasPrefix("-"), argument.count > 1 {
          throw UsageError("unknown option '\(argument)'", command: command)
        }
        if command == nil && positional.isEmpty && commands.contains(argument) {
          command = argument
        } else if command == nil && positional.isEmpty && argument == "help" {
          command = "help"
        } else {
          positional.append(argument)
        }
      }
    }

    if help || command == "help" {
      let topic = command == "help" ? positional.first : command
      if let topic, !commands.contains(topic) {
        throw UsageError("no such command '\(topic)'")
      }
      invocation.command = .help(command: topic)
      return invocation
    }
    if invocation.notice && (at != nil || every != nil) {
      // SAYAT and SAYEVERY have no notice form (chatbroker(7)).
      throw UsageError("say takes --notice or --at/--every, not both", command: command)
    }
    if invocation.block && (invocation.notice || at != nil || every != nil) {
      // A block is a message; NOTICE, SAYAT and SAYEVERY carry one line
      // (chatbroker(7), BLOCK).
      throw UsageError("say --block cannot go with --notice, --at or --every", command: command)
    }
    if invocation.replyTo != nil
      && (invocation.block || invocation.notice || at != nil || every != nil)
    {
      // REPLY carries one line sent now (chatbroker(7), REPLY).
      throw UsageError(
        "say --reply cannot go with --block, --notice, --at or --every", command: command)
    }
    if let every {
      guard command == "say" else {
        throw UsageError("--every does not apply here", command: command)
      }
      guard at == nil else {
        throw UsageError("say takes --at or --every, not both", command: command)
      }
      // Everything else is checked as for --at: a target, the text present.
      let checked = try build(
        command: command, positional: positional, json: json, count: count, at: every)
      guard case .say(let target, _, let text?) = checked else {
        throw UsageError("say --every needs the TEXT on the command line", command: command)
      }
      invocation.command = .sayEvery(target: target, rule: every, text: text)
      return invocation
    }
    if command == "web" {
      guard positional.isEmpty else {
        throw UsageError("unexpected argument '\(positional[0])'", command: command)
      }
      guard !json, count == nil, at == nil else {
        throw UsageError("web takes --revoke only", command: command)
      }
      invocation.command = .web(revoke: revoke)
      return invocation
    }
    invocation.command = try build(
      command: command, positional: positional, json: json, count: count, at: at,
      mentions: mentions, room: room)
    return invocation
  }

  private static func build(
    command: String?, positional: [String], json: Bool, count: Int?, at: String?,
    mentions: Bool = false, room: String? = nil
  ) throws(UsageError) -> Command {
    func reject(_ flag: Bool, _ name: String) throws(UsageError) {
      if flag { throw UsageError("\(name) does not apply here", command: command) }
    }
    func arguments(_ range: ClosedRange<Int>, _ what: String) throws(UsageError) {
      if positional.count < range.lowerBound {
        throw UsageError("missing \(what)", command: command)
      }
      if positional.count > range.upperBound {
        let extra = positional[range.upperBound]
        throw UsageError("unexpected argument '\(extra)'", command: command)
      }
    }
    if command != nil && command != "say" { try reject(at != nil, "--at") }
    switch command {
    case nil:
      try reject(json, "--json")
      try reject(count != nil, "-n")
      try reject(at != nil, "--at")
      for target in positional { _ = try checkedTarget(target, command: nil) }
      return .interactive(targets: positional)
    case "say":
      try reject(json, "--json")
      try reject(count != nil, "-n")
      guard let target = positional.first else {
        throw UsageError("missing TARGET (a #room or @user)", command: command)
      }
      _ = try checkedTarget(target, command: command)
      let text = positional.count > 1 ? Array(positional.dropFirst()) : nil
      if at != nil && text == nil {
        throw UsageError("say --at needs the TEXT on the command line", command: command)
      }
      return .say(target: target, at: at, text: text)
    case "history":
      try arguments(1...1, "TARGET (a #room or @user)")
      _ = try checkedTarget(positional[0], command: command)
      if let count, count < 1 { throw UsageError("-n must be at least 1", command: command) }
      return .history(target: positional[0], count: count, json: json)
    case "search":
      guard !positional.isEmpty else { throw UsageError("missing WORDS", command: command) }
      if let room { _ = try checkedTarget(room, command: command) }
      if let count, count < 1 { throw UsageError("-n must be at least 1", command: command) }
      return .search(target: room, count: count, json: json, words: positional)
    case "thread":
      try arguments(
        2...2, ["TARGET", "ID"].dropFirst(positional.count).joined(separator: " "))
      _ = try checkedTarget(positional[0], command: command)
      try checkedMessageID(positional[1], command: command)
      if let count, count < 1 { throw UsageError("-n must be at least 1", command: command) }
      return .thread(target: positional[0], id: positional[1], count: count, json: json)
    case "tail":
      guard !positional.isEmpty || mentions else {
        throw UsageError("missing TARGET (one or more #rooms or @users)", command: command)
      }
      for target in positional { _ = try checkedTarget(target, command: command) }
      return .tail(targets: positional, count: count ?? 0, json: json, mentions: mentions)
    case "scheduled":
      try reject(count != nil, "-n")
      try arguments(0...0, "")
      return .scheduled(json: json)
    case "cancel":
      try reject(json, "--json")
      try reject(count != nil, "-n")
      try arguments(1...1, "ID (see chatsh scheduled)")
      guard MessageID(positional[0]) != nil else {
        throw UsageError(
          "'\(positional[0])' is not a message id (1 to 32 letters and digits)", command: command)
      }
      return .cancel(id: positional[0])
    case "react", "unreact":
      try reject(json, "--json")
      try reject(count != nil, "-n")
      try arguments(
        3...3, ["TARGET", "ID", "REACTION"].dropFirst(positional.count).joined(separator: " "))
      _ = try checkedTarget(positional[0], command: command)
      try checkedMessageID(positional[1], command: command)
      guard Reaction.isValid(positional[2]) else {
        throw UsageError(
          "'\(positional[2])' is not a reaction: an emoji or a word of 1 to "
            + "\(Reaction.maximumBytes) bytes, without spaces, commas or =, not starting with :",
          command: command)
      }
      return .react(
        target: positional[0], id: positional[1], reaction: positional[2],
        removed: command == "unreact")
    case "amend":
      try reject(json, "--json")
      try reject(count != nil, "-n")
      guard positional.count >= 3 else {
        throw UsageError(
          "missing " + ["TARGET", "ID", "TEXT"].dropFirst(positional.count).joined(separator: " "),
          command: command)
      }
      _ = try checkedTarget(positional[0], command: command)
      try checkedMessageID(positional[1], command: command)
      return .amend(target: positional[0], id: positional[1], text: Array(positional.dropFirst(2)))
    case "rooms":
      try reject(count != nil, "-n")
      try arguments(0...0, "")
      return .rooms(json: json)
    case "who":
      try reject(count != nil, "-n")
      try arguments(1...1, "ROOM")
      guard RoomName(positional[0]) != nil else {
        throw UsageError(
          "'\(positional[0])' is not a room: use # then 1 to 32 of a-z 0-9 . _ -",
          command: command)
      }
      return .who(room: positional[0], json: json)
    default:
      throw UsageError("unknown command '\(command ?? "")'")
    }
  }

  private static func checkedMessageID(_ text: String, command: String?) throws(UsageError) {
    guard MessageID(text) == nil else { return }
    throw UsageError(
      "'\(text)' is not a message id (see chatsh history --json)", command: command)
  }

  private static func checkedTarget(_ text: String, command: String?) throws(UsageError)
    -> Target
  {
    guard let target = Target(text) else {
      if command == nil && !text.hasPrefix("#") && !text.hasPrefix("@") {
        throw UsageError("unknown command '\(text)'")
      }
      throw UsageError(
        "'\(text)' is not a target: use #room (1 to 32 of a-z 0-9 . _ -) or @user",
        command: command)
    }
    return target
  }

  /// `--name=value` → (`--name`, `value`).
  private static func splitLongOption(_ argument: String) -> (String, String)? {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return nil }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }
}

private struct ArgumentScanner {
  private var pending: [String]
  var optionsEnded = false

  init(_ arguments: [String]) {
    pending = arguments.reversed()
  }

  mutating func next() -> String? {
    pending.popLast()
  }

  mutating func pushBack(_ arguments: [String]) {
    pending.append(contentsOf: arguments.reversed())
  }

  mutating func value(for option: String) throws(UsageError) -> String {
    guard let value = next() else { throw UsageError("\(option) needs a value") }
    return value
  }
}

import Foundation
import IRCProtocol
import LineProtocol

/// Channel operators, modes and KICK over IRC (chatbroker(7),
/// "Moderation"): the line protocol's `MODE` and `KICK`, the engine's
/// answers as IRC numerics.
extension IRCSession {
  /// The membership prefix this client is shown for `user` in `room`:
  /// the highest of the engine's (``Engine/membershipPrefixes(of:in:)``),
  /// `@` or `+`, or none; with IRCv3 `multi-prefix`, all of them, highest
  /// first. NAMES and WHO show members through here.
  func membershipPrefix(of user: String, in room: RoomName) -> String {
    let prefixes = reader.membershipPrefixes(of: user, in: room)
    return capabilities.contains(.multiPrefix) ? prefixes : String(prefixes.prefix(1))
  }

  /// `MODE #room [<changes> [<arguments>]]`.
  func channelMode(_ target: String, _ parameters: [String]) -> [Action] {
    guard let room = room(target) else { return [noSuchChannel(target)] }
    guard parameters.count > 1 else {
      return [.request(.mode(room), answering: IRCReplyContext(.modes))]
    }
    switch ModeChange.parse(parameters[1], arguments: Array(parameters.dropFirst(2)), login: login)
    {
    case .success(nil):
      return [.request(.bans(room), answering: IRCReplyContext(.banList))]
    case .success(let changes?):
      return [.request(.setMode(room, changes), answering: IRCReplyContext(.setMode))]
    case .failure(let problem):
      return [modeProblem(problem, target: target)]
    }
  }

  /// A change the parser refused: 472, 461, 525 or 696; nothing changed.
  private func modeProblem(_ problem: ModeChange.Problem, target: String) -> Action {
    switch problem {
    case .unknownLetter(let letter):
      let shown = ModeChange.shown(letter).count == 1 ? String(letter) : "*"
      return numeric(.unknownMode, [shown, "is unknown mode char to me: \(problem.text)"])
    case .missingArgument:
      return numeric(.needMoreParameters, ["MODE", "Not enough parameters: \(problem.text)"])
    case .invalidArgument(.key, _, _):
      return numeric(.invalidKey, [target, "Key is not well-formed: \(problem.text)"])
    case .invalidArgument(.op, let nick, _), .invalidArgument(.voice, let nick, _):
      return numeric(.noSuchNick, [nick, "No such nick"])
    case .invalidArgument(let letter, let argument, _):
      return numeric(
        .invalidModeParameter,
        [target, String(letter.rawValue), argument.isEmpty ? "*" : argument, problem.text])
    case .tooMany, .unusedArgument:
      return numeric(.invalidModeParameter, [target, "*", "*", problem.text])
    }
  }

  /// `KICK <room> <nick> [:<reason>]`, one room and nick a step; the
  /// reason is the kicker's nick when none is given, as IRC servers do.
  func kick(_ name: String, _ nick: String, reason: String?) -> [Action] {
    guard let room = room(name) else { return [noSuchChannel(name)] }
    let kicked = login(nick)
    guard UserName.isValid(kicked) else { return [numeric(.noSuchNick, [nick, "No such nick"])] }
    let given = reason.map(Self.reasonText).flatMap { $0.isEmpty ? nil : $0 }
    return [
      .request(
        .kick(room, user: kicked, reason: given ?? self.nick),
        answering: IRCReplyContext(.kick(room: room)))
    ]
  }

  /// `KICK #a,#b nick1,nick2 :reason`: a room per nick, or one room for all.
  func kickSteps(_ parameters: [String]) -> [[Action]] {
    guard parameters.count >= 2 else {
      return [[numeric(.needMoreParameters, ["KICK", "Not enough parameters"])]]
    }
    let rooms = parameters[0].split(separator: ",").map(String.init)
    let nicks = parameters[1].split(separator: ",").map(String.init)
    let reason = parameters.count > 2 ? parameters[2] : nil
    var steps: [[Action]] = []
    for (index, nick) in nicks.prefix(Self.maximumTargets).enumerated() {
      let name = rooms.count == 1 ? rooms[0] : index < rooms.count ? rooms[index] : nil
      guard let name else { break }
      steps.append(kick(name, nick, reason: reason))
    }
    return steps.isEmpty
      ? [[numeric(.needMoreParameters, ["KICK", "Not enough parameters"])]] : steps
  }

  // MARK: - The engine's answers

  /// `OK MODE`: 324 and 329 for `MODE #room`, 368 after the ban list, the
  /// sender's own `MODE` line for a change.
  func modeOK(_ fields: [String], answering context: IRCReplyContext?) -> [UInt8] {
    guard let roomWord = fields.first else { return [] }
    switch context?.purpose {
    case .modes?:
      let created = room(roomWord).flatMap { reader.roomMode($0)?.created.milliseconds } ?? 0
      return numeric(.channelModeIs, [roomWord] + fields.dropFirst(), trailing: false).bytes
        + numeric(.creationTime, [roomWord, String(created / 1000)], trailing: false).bytes
    case .banList?:
      return numeric(.endOfBanList, [roomWord, "End of channel ban list"]).bytes
    default:
      guard fields.count > 1 else { return [] }
      return IRCMessage(source: mask, "MODE", fields).encoded(trailing: false)
    }
  }

  /// `OK KICK`: the KICK line, for a kicker who is not in the room (one in
  /// it got the room's).
  func kickOK(_ fields: [String], answering context: IRCReplyContext?) -> [UInt8] {
    guard fields.count == 2, let room = room(fields[0]), joins[room] == nil else { return [] }
    return IRCMessage(source: mask, "KICK", [fields[0], fields[1], nick]).encoded(trailing: true)
  }

  /// The first word of an error's text: the nick a 441 names.
  private func firstWord(_ text: String) -> String {
    text.split(separator: " ").first.map(String.init) ?? "*"
  }

  /// The numerics of the engine's refusals of MODE, KICK, INVITE and
  /// JOIN that moderation adds; nil for any other.
  func moderationError(
    _ verb: Verb?, _ code: ErrorCode, _ text: String, room: String?
  ) -> [UInt8]? {
    let room = room ?? "*"
    switch (verb, code) {
    case (.mode?, .noAccess), (.kick?, .noAccess):
      return numeric(.noSuchChannel, [room, "No such channel"]).bytes
    case (_, .notOperator):
      return numeric(.chanOPrivsNeeded, [room, "You're not channel operator: \(text)"]).bytes
    case (_, .notMember):
      return numeric(.userNotInChannel, [firstWord(text), room, "They aren't on that channel"])
        .bytes
    case (_, .alreadyIn):
      return numeric(.userOnChannel, [firstWord(text), room, "is already on channel"]).bytes
    case (.kick?, .notJoined), (.invite?, .notJoined), (.mode?, .notJoined):
      return numeric(.notOnChannel, [room, "You're not on that channel"]).bytes
    case (.join?, .banned):
      return numeric(.bannedFromChannel, [room, "Cannot join channel (+b)"]).bytes
    case (.join?, .badKey):
      return numeric(.badChannelKey, [room, "Cannot join channel (+k)"]).bytes
    case (.join?, .full):
      return numeric(.channelIsFull, [room, "Cannot join channel (+l)"]).bytes
    case (.mode?, .limit) where text.contains("bans"):
      return numeric(.banListFull, [room, "b", "Channel list is full"]).bytes
    case (.mode?, .noSuchUser):
      let nick = text.split(separator: "\"").dropFirst().first.map(String.init) ?? "*"
      return numeric(.noSuchNick, [nick, "No such nick"]).bytes
    default:
      return nil
    }
  }
}

/// What one line from the broker shows of the oracle's rooms, read as a
/// user's client reads it: on the line protocol the room word of `MSG`,
/// `HIST`, `ROOM`, `CONV`, `MEMBER`, `TOPIC`, `JOIN`, `PART`, `KICK`,
/// `MODE`, `BAN`, `REDACT`, `MARKREAD`, `REACT` and `UNREACT` lines, and the
/// `OK` of JOIN, MODE, INVITE, KICK, REACT, UNREACT and of ACCESS naming a
/// private access (chatbroker(7),
/// "Lines from the broker"); on IRC the channel of PRIVMSG, NOTICE, JOIN,
/// PART, KICK, TOPIC, MODE, INVITE and CHATHISTORY TARGETS lines and of
/// the numerics that list or describe a channel (322 LIST, 324 and 329
/// MODE, 332 and 333 TOPIC, 341 INVITE, 352 and 354 WHO, 353 NAMES, 319
/// WHOIS, 367 bans). Replies that only echo the room a request named, as
/// for a room that does not exist (`OK WHO <room> 0`, 366, 315, 403),
/// show nothing. Tokens are found anywhere in a line (``PrivacyNames``).
enum PrivacyLines {
  /// A room a line shows.
  struct Sighting: Equatable {
    var room: String
    /// An `OK JOIN` (or IRC JOIN echo): the user was let in, which `+s`
    /// does not forbid.
    var joining = false
  }

  /// The rooms a line-protocol line shows.
  static func sightings(line: String, names: PrivacyNames) -> [Sighting] {
    let fixed = line.range(of: " :").map { line[..<$0.lowerBound] } ?? line[...]
    let words = fixed.split(separator: " ")
    guard words.count > 1 else { return [] }
    let keyword = words[0]
    switch keyword {
    case "MSG", "HIST", "ROOM", "CONV", "MEMBER", "TOPIC", "JOIN", "PART", "KICK", "MODE", "BAN",
      "REDACT", "MARKREAD", "INVITE", "REACT", "UNREACT":
      guard names.isRoom(words[1]) else { return [] }
      return [Sighting(room: String(words[1]))]
    case "OK":
      guard words.count > 2, names.isRoom(words[2]) else { return [] }
      let room = String(words[2])
      switch words[1] {
      case "JOIN": return [Sighting(room: room, joining: true)]
      // A reaction was put on a line of the room (since 1.6).
      case "MODE", "INVITE", "KICK", "REACT", "UNREACT": return [Sighting(room: room)]
      case "ACCESS" where words.count > 3 && words[3] != "public":
        return [Sighting(room: room)]
      default: return []
      }
    default: return []
    }
  }

  /// The IRC numerics whose parameters name channels a client then knows
  /// of: LIST, MODE, TOPIC, INVITE, WHO, NAMES, WHOIS and ban lists.
  static let revealingNumerics: Set<String> = [
    "322", "324", "329", "332", "333", "341", "352", "354", "353", "319", "367",
  ]

  /// The rooms an IRC line shows, and whether it is the JOIN echo of
  /// `user`'s own JOIN.
  static func sightings(irc line: [UInt8], user: String, names: PrivacyNames) -> [Sighting] {
    var body = line[...]
    if body.last == 0x0D { body = body.dropLast() }
    guard let message = IRCShape.parse(body) else { return [] }
    let parameters = message.parameters
    switch message.command {
    case "PRIVMSG", "NOTICE", "TAGMSG", "JOIN", "PART", "KICK", "TOPIC", "MODE":
      guard let first = parameters.first, names.isRoom(first) else { return [] }
      let own = message.command == "JOIN" && message.sourceNick == user
      return [Sighting(room: first, joining: own)]
    case "INVITE":
      guard parameters.count > 1, names.isRoom(parameters[1]) else { return [] }
      return [Sighting(room: parameters[1])]
    case "CHATHISTORY":
      guard parameters.count > 1, names.isRoom(parameters[1]) else { return [] }
      return [Sighting(room: parameters[1])]
    default:
      guard revealingNumerics.contains(message.command) else { return [] }
      var rooms: [String] = []
      for parameter in parameters {
        for room in names.rooms(inList: parameter) where !rooms.contains(room) {
          rooms.append(room)
        }
      }
      return rooms.map { Sighting(room: $0) }
    }
  }

  /// Whether a line-protocol line is part of the reply to the request
  /// `verb` (its final line or data lines), and so decided after that
  /// request was sent; event lines may have been decided before.
  static func isReply(line: String, to verb: String) -> Bool {
    let keyword = line.prefix { $0 != " " }
    if keyword == "OK" || keyword == "ERR" { return true }
    return ProtocolModel.dataKeywords[verb].map { $0 == keyword } == true
  }

  /// Whether an IRC line answers the command the session waits on: a
  /// numeric, a line of a batch, or its own JOIN's echo.
  static func isReply(irc line: [UInt8], to verb: String, user: String) -> Bool {
    guard let message = IRCShape.parse(line.last == 0x0D ? line.dropLast() : line[...]) else {
      return false
    }
    if message.command.count == 3 && message.command.allSatisfy(\.isNumber) { return true }
    if message.command == "BATCH" || message.command == "FAIL" { return true }
    if String(decoding: message.tags, as: UTF8.self).contains("batch=") { return true }
    return verb == "JOIN" && message.command == "JOIN" && message.sourceNick == user
  }
}

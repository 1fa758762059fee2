import Foundation
import IRCProtocol
import LineProtocol

/// The commands that ask the server about users and itself (USERHOST,
/// ISON, WHO and WHOIS of a nick, WHOWAS, AWAY, LUSERS, TIME, VERSION,
/// INFO, ADMIN, MOTD), answered from the engine's state of the moment, and
/// the RFC 2812 commands chatbroker does not offer, answered with the
/// numeric that says why (chatbroker(7), "IRC").
extension IRCSession {
  /// The longest away text kept (ISUPPORT `AWAYLEN`), in bytes; a longer
  /// one is cut.
  static let maximumAwayBytes = 200

  /// The login name an IRC nick names. Nicks are case-insensitive
  /// (CASEMAPPING=ascii) and login names are not: the name as typed when
  /// such a user exists, else in lower case when that one does, else
  /// this client's own when it differs only in case, else as typed.
  /// Whether `target` names this client's own nick, as ``login(_:)``
  /// reads it. Asked for every message the client sends, so a channel, or
  /// a nick that is not its own in any letter case, is answered without
  /// asking the system's user database (getpwnam_r was three quarters of
  /// the serving thread's time per PRIVMSG to a room).
  func isOwnNick(_ target: String) -> Bool {
    guard !target.hasPrefix("#"), target.lowercased() == nick.lowercased() else { return false }
    return login(target) == nick
  }

  func login(_ nickname: String) -> String {
    if nickname == nick || reader.userExists(nickname) { return nickname }
    if nickname.lowercased() == nick.lowercased() { return nick }
    let lower = nickname.lowercased()
    return reader.userExists(lower) ? lower : nickname
  }

  /// `USERHOST <nick>...` (302): up to five connected users, each
  /// `nick=+user@host`, `-` for one who is away.
  func userhost(_ parameters: [String]) -> [Action] {
    let found = parameters.prefix(5).map(login).filter(reader.isOnline).map { name in
      "\(name)=\(reader.awayText(of: name) == nil ? "+" : "-")\(name)@\(serverName)"
    }
    return [numeric(.userhost, [found.joined(separator: " ")])]
  }

  /// `ISON <nick>...` (303): those of the nicks that are connected.
  func ison(_ parameters: [String]) -> [Action] {
    let nicks = parameters.flatMap { $0.split(separator: " ").map(String.init) }
    let online = nicks.map(login).filter(reader.isOnline)
    return [numeric(.isOn, [online.joined(separator: " ")])]
  }

  /// `AWAY [:text]`: 306 and away with a text, 305 and back without one;
  /// one state per user, which WHO, WHOIS, USERHOST and a private message
  /// to the user (301) show.
  func away(_ parameters: [String]) -> [Action] {
    let plain = parameters.first.map(Self.plainText) ?? ""
    let text = IRCText.prefix(
      IRCText.replacingControls(in: plain, spacesToo: false, tabToo: true),
      maximumBytes: Self.maximumAwayBytes)
    // The engine answers OK AWAY, which reads as 305 or 306 (``ok``).
    return [.request(.away(text.isEmpty ? nil : text), answering: nil)]
  }

  /// `WHO <nick> [%fields]`: 352 (or WHOX's 354) for a connected user
  /// (`G` when away), then 315 naming the mask as sent.
  func whoNick(_ mask: String, whox: WhoX? = nil) -> [Action] {
    if mask.contains("*") || mask.contains("?") {
      return whoMask(mask, whox: whox)
    }
    let name = login(mask)
    var actions: [Action] = []
    if reader.isOnline(name) || name == nick {
      actions.append(
        whoLine(room: "*", member: name, away: reader.awayText(of: name) != nil, whox: whox))
    }
    actions.append(numeric(.endOfWho, [mask, "End of /WHO list"]))
    return actions
  }

  /// `WHO <mask>` with `*` or `?` (`WHO *`, `WHO ali*`): 352 (or 354) for
  /// each connected user whose nick matches and who is this user or shares
  /// a room with them, since every user is invisible (`+i`) and modern IRC
  /// shows an invisible user to a mask only then; then 315.
  func whoMask(_ mask: String, whox: WhoX?) -> [Action] {
    let pattern = mask.lowercased()
    var actions: [Action] = []
    for other in reader.onlineUsersSharingRooms where ModeChange.mask(pattern, matches: other) {
      actions.append(
        whoLine(room: "*", member: other, away: reader.awayText(of: other) != nil, whox: whox))
    }
    actions.append(numeric(.endOfWho, [mask, "End of /WHO list"]))
    return actions
  }

  /// `WHOIS [server] <nick>`: 311 with the real name, 312, 301 when away,
  /// 317 (idle seconds and sign-on) for a user with an IRC session, 318;
  /// 401 and 318 for a nick that is no user.
  func whois(_ asked: String) -> [Action] {
    let who = login(asked)
    guard who == nick || (UserName.isValid(who) && reader.userExists(who)) else {
      return [
        numeric(.noSuchNick, [asked, "No such nick"]),
        numeric(.endOfWhois, [asked, "End of /WHOIS list"]),
      ]
    }
    var actions = [
      numeric(.whoisUser, [who, who, serverName, "*", realName(of: who)]),
      numeric(.whoisServer, [who, serverName, "chatbroker"]),
    ]
    if let text = reader.awayText(of: who) { actions.append(numeric(.away, [who, text])) }
    if let idle = directory.idle(who) {
      actions.append(
        numeric(
          .whoisIdle,
          [who, String(idle.seconds), String(idle.signedOn), "seconds idle, signon time"]))
    }
    actions.append(numeric(.endOfWhois, [who, "End of /WHOIS list"]))
    return actions
  }

  /// `WHOWAS <nick>`: a nick is a login name for good, so the nick of a
  /// user of the host always was theirs: 314 and 312 for it, 406 for
  /// any other; then 369. 431 without a nick.
  func whowas(_ parameters: [String]) -> [Action] {
    guard let asked = parameters.first, !asked.isEmpty else {
      return [numeric(.noNicknameGiven, ["No nickname given"])]
    }
    let who = login(asked)
    if UserName.isValid(who) && reader.userExists(who) {
      return [
        numeric(.whowasUser, [who, who, serverName, "*", who]),
        numeric(.whoisServer, [who, serverName, "chatbroker"]),
        numeric(.endOfWhowas, [asked, "End of WHOWAS"]),
      ]
    }
    return [
      numeric(.wasNoSuchNick, [asked, "There was no such nickname: nicks are login names"]),
      numeric(.endOfWhowas, [asked, "End of WHOWAS"]),
    ]
  }

  /// 251 to 255 and 265, 266: every client is a visible user of the one
  /// server; 254 counts the rooms this user may see, not the secret and
  /// private ones of others (chatbroker(7), "IRC").
  func lusers() -> [Action] {
    let registered = reader.connectionCount - gateway.unregistered
    gateway.mostUsers = max(gateway.mostUsers, registered)
    let users = String(registered)
    let most = String(gateway.mostUsers)
    return [
      numeric(.luserClient, ["There are \(users) users and 0 invisible on 1 servers"]),
      numeric(.luserOp, ["0", "operator(s) online: there are no IRC operators"]),
      numeric(.luserUnknown, [String(gateway.unregistered), "unknown connection(s)"]),
      numeric(.luserChannels, [String(reader.visibleRoomCount), "channels formed"]),
      numeric(.luserMe, ["I have \(users) clients and 0 servers"]),
      numeric(.localUsers, [users, most, "Current local users \(users), max \(most)"]),
      numeric(.globalUsers, [users, most, "Current global users \(users), max \(most)"]),
    ]
  }

  /// `TIME` (391): the server's time, in seconds and as text.
  func time() -> [Action] {
    let now = Date()
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.dateFormat = "EEEE MMMM d yyyy -- HH:mm:ss ZZZZZ"
    return [
      numeric(
        .time,
        [serverName, String(Int(now.timeIntervalSince1970)), "0", formatter.string(from: now)])
    ]
  }

  /// `MOTD`: there is none (422).
  func motd() -> [Action] {
    [numeric(.noMotd, ["MOTD File is missing"])]
  }

  /// `VERSION` (351, then the 005 lines again).
  func version() -> [Action] {
    [
      numeric(
        .version, ["chatbroker-\(chatbrokerVersion)", serverName, "speaks chatbroker(7) and IRC"])
    ]
      + isupportLines()
  }

  /// `INFO` (371, 374).
  func info() -> [Action] {
    [
      numeric(.info, ["chatbroker \(chatbrokerVersion): chat rooms for the users of one host"]),
      numeric(.info, ["identity is the Unix user: a nick is a login name"]),
      numeric(.info, ["see chatbroker(7) for what IRC means here"]),
      numeric(.endOfInfo, ["End of INFO list"]),
    ]
  }

  /// `ADMIN` (256 to 259): the host's administrator is root.
  func admin() -> [Action] {
    [
      numeric(.adminMe, [serverName, "Administrative info"]),
      numeric(.adminLoc1, ["This host: \(serverName)"]),
      numeric(.adminLoc2, ["chatbroker runs as a service of the host"]),
      numeric(.adminEmail, ["root@\(serverName)"]),
    ]
  }

  /// The RFC 2812 commands that are not offered, each with the numeric
  /// that says so (chatbroker(7), "IRC", "Moderation"); nil for a
  /// command this does not know.
  func notOffered(_ message: IRCMessage) -> [Action]? {
    let parameters = message.parameters
    switch message.command {
    case "OPER":
      guard parameters.count >= 2 else {
        return [numeric(.needMoreParameters, ["OPER", "Not enough parameters"])]
      }
      return [numeric(.noOperHost, ["There are no IRC operators: root administers the host"])]
    case "KILL", "WALLOPS", "SQUIT", "CONNECT", "DIE", "RESTART", "REHASH":
      return [
        numeric(.noPrivileges, ["Permission Denied: there are no IRC operators on chatbroker"])
      ]
    case "INVITE":
      guard parameters.count >= 2 else {
        return [numeric(.needMoreParameters, ["INVITE", "Not enough parameters"])]
      }
      // INVITE <nick> <room> (chatbroker(7), "Moderation").
      guard let room = room(parameters[1]) else { return [noSuchChannel(parameters[1])] }
      let invited = login(parameters[0])
      // A nick is a connected user (the line protocol invites any user).
      guard UserName.isValid(invited), reader.isOnline(invited) else {
        return [numeric(.noSuchNick, [parameters[0], "No such nick"])]
      }
      return [.request(.invite(room, user: invited), answering: nil)]
    case "SUMMON": return [numeric(.summonDisabled, ["SUMMON has been disabled"])]
    case "USERS": return [numeric(.usersDisabled, ["USERS has been disabled"])]
    case "STATS":
      return [numeric(.endOfStats, [parameters.first ?? "*", "End of STATS report"])]
    case "LINKS":
      return [
        numeric(.links, [serverName, serverName, "0 chatbroker"]),
        numeric(.endOfLinks, ["*", "End of LINKS list"]),
      ]
    case "SERVLIST":
      return [numeric(.servListEnd, ["*", "*", "End of service listing"])]
    case "SQUERY":
      return [numeric(.noSuchService, [parameters.first ?? "*", "No such service"])]
    case "TRACE":
      return [numeric(.traceEnd, [serverName, "chatbroker", "End of TRACE"])]
    case "SERVICE": return [numeric(.alreadyRegistered, ["You may not reregister"])]
    case "ERROR": return []
    default: return nil
    }
  }
}

import IRCProtocol

/// `HELP [subject]` and its other name `HELPOP` (modern.ircdocs.horse,
/// HELP): one line on each command the gateway offers, as 704, 705 and
/// 706; 524 for a subject that is none (chatbroker(7), "IRC").
extension IRCSession {
  /// What each command does here, in a line; the rest is in chatbroker(7).
  static let helpTopics: [(command: String, text: String)] = [
    ("JOIN", "JOIN <#room>[,...] [key]: join rooms, created on first use"),
    ("PART", "PART <#room>[,...] [:reason]: leave rooms"),
    ("PRIVMSG", "PRIVMSG <#room|nick>[,...] :<text>: say something to a room or a user"),
    ("NOTICE", "NOTICE <#room|nick>[,...] :<text>: as PRIVMSG, never answered automatically"),
    ("TAGMSG", "TAGMSG <#room|nick>: client-only tags alone (message-tags)"),
    ("NAMES", "NAMES <#room>[,...]: a room's members"),
    ("LIST", "LIST: every room you may see, with its count and topic"),
    ("TOPIC", "TOPIC <#room> [:text]: show or set a room's topic"),
    ("MODE", "MODE <#room> [changes]: a room's modes, operators, bans and key"),
    ("KICK", "KICK <#room> <nick>[,...] [:reason]: remove members (operators)"),
    ("INVITE", "INVITE <nick> <#room>: let a user into an invite-only room"),
    ("WHO", "WHO <#room|nick> [%fields[,token]]: members or a user (352, WHOX 354)"),
    ("WHOIS", "WHOIS <nick>: a user's real name, idle time and away text"),
    ("WHOWAS", "WHOWAS <nick>: a nick is a login name, so it always was that user's"),
    ("USERHOST", "USERHOST <nick>...: up to five users as nick=+user@host"),
    ("ISON", "ISON <nick>...: which of the nicks are connected"),
    ("AWAY", "AWAY [:text]: set or clear your away text"),
    ("CHATHISTORY", "CHATHISTORY <subcommand> <target> ...: history (draft/chathistory)"),
    ("MARKREAD", "MARKREAD <target> [timestamp=<time>]: your read marker (draft/read-marker)"),
    ("SAYAT", "SAYAT <target> <when> :<text>: schedule a message; see also sched|bot"),
    ("CAP", "CAP LS|LIST|REQ|END: IRCv3 capabilities"),
    ("NICK", "NICK <nick>: needed to register; your nick is your login name"),
    ("USER", "USER <user> <mode> <unused> :<real name>: needed to register"),
    ("PING", "PING <token>: answered with PONG"),
    ("QUIT", "QUIT [:reason]: end this session"),
    ("LUSERS", "LUSERS: counts of users and rooms"),
    ("MOTD", "MOTD: there is none"),
    ("TIME", "TIME: the server's time"),
    ("VERSION", "VERSION: the server's version and 005 tokens"),
    ("INFO", "INFO: what this server is"),
    ("ADMIN", "ADMIN: who administers this server"),
    ("HELP", "HELP [command]: this help; HELPOP is the same"),
  ]

  func help(_ parameters: [String]) -> [Action] {
    guard let asked = parameters.first, !asked.isEmpty else {
      var actions = [
        numeric(.helpStart, ["*", "chatbroker speaks IRC; identity is your Unix user"])
      ]
      for line in ["Commands (HELP <command> for one):"]
        + Self.helpTopics.map(\.command).chunked(by: 10).map({ $0.joined(separator: " ") })
        + ["See chatbroker(7), section IRC."]
      {
        actions.append(numeric(.helpText, ["*", line]))
      }
      actions.append(numeric(.endOfHelp, ["*", "End of /HELP"]))
      return actions
    }
    let subject = asked.uppercased()
    guard let topic = Self.helpTopics.first(where: { $0.command == subject }) else {
      return [numeric(.helpNotFound, [asked, "No help for that subject: try HELP"])]
    }
    return [
      numeric(.helpStart, [subject, topic.text]),
      numeric(.helpText, [subject, "See chatbroker(7), section IRC."]),
      numeric(.endOfHelp, [subject, "End of /HELP"]),
    ]
  }
}

extension Array {
  /// The elements in runs of `size`, the last one shorter.
  fileprivate func chunked(by size: Int) -> [ArraySlice<Element>] {
    stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
  }
}

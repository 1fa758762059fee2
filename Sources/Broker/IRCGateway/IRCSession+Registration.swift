import Foundation
import IRCProtocol
import LineProtocol

/// Registration: capability negotiation (IRCv3 `CAP`), NICK and USER,
/// and the welcome burst once they are done.
extension IRCSession {

  func capability(_ parameters: [String]) -> [Action] {
    let sub = parameters.first?.uppercased() ?? ""
    let target = registered ? nick : "*"
    switch sub {
    case "LS":
      if !registered { negotiating = true }
      // CAP 302 clients get the values of the capabilities that have one
      // (IRCv3 capability negotiation, "Capability values").
      let version302 = (Int(parameters.dropFirst().first ?? "") ?? 0) >= 302
      let offered = Capability.allCases.map { capability in
        guard version302, let value = Self.capabilityValue(capability) else {
          return capability.rawValue
        }
        return "\(capability.rawValue)=\(value)"
      }
      return capabilityLines(target, "LS", offered, continued: version302)
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
      return completeRegistration()
    default:
      return [numeric(.invalidCapCommand, [sub, "Unknown CAP subcommand"])]
    }
  }

  /// The value `CAP LS 302` shows with `capability`, if it has one:
  /// draft/multiline's bounds, those of a line protocol block.
  static func capabilityValue(_ capability: Capability) -> String? {
    guard capability == .multiline else { return nil }
    return "max-bytes=\(maximumMultilineBytes),max-lines=\(MessageBlock.maximumLines)"
  }

  /// `CAP * LS` or `CAP * LIST` with `names`, in as many lines as 512
  /// bytes need: each but the last marked `*` when the client speaks CAP
  /// 302, which allows that (IRCv3 capability negotiation, "Multiline
  /// replies").
  func capabilityLines(
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
  func completeRegistration() -> [Action] {
    guard !registered, gotNick, gotUser, !negotiating else { return [] }
    registered = true
    directory.registered(user, realName: realName.isEmpty ? user : realName)
    var actions: [Action] = [
      numeric(.welcome, ["Welcome to chatbroker on \(serverName), \(nick)"]),
      numeric(.yourHost, ["Your host is \(serverName), running chatbroker \(chatbrokerVersion)"]),
      numeric(.created, ["This server speaks chatbroker(7) and IRC"]),
      numeric(
        .myInfo, [serverName, "chatbroker-\(chatbrokerVersion)", "i", "biklmnostv", "bklov"]),
    ]
    actions += isupportLines()
    actions += lusers()
    actions.append(numeric(.noMotd, ["MOTD File is missing"]))
    // Joined to the user's rooms, as a bouncer does: each a step of its
    // own, after the burst (chatbroker(7), "IRC"), once the engine has
    // said which they are (``IRCReplyContext/Purpose/rejoin``).
    pendingSteps.append(.actions([.request(.conversations, answering: IRCReplyContext(.rejoin))]))
    return actions
  }

  /// The 005 lines (ISUPPORT), after 004 and in reply to `VERSION`.
  func isupportLines() -> [Action] {
    var tokens = [
      "CHANTYPES=#", "CASEMAPPING=ascii", "NETWORK=\(serverName)", "PREFIX=(ov)@+",
      "CHANMODES=b,k,l,imnst", "MODES=\(ModeChange.maximumPerRequest)",
      "KEYLEN=\(ModeChange.maximumKeyBytes)", "MAXLIST=b:\(RoomModes.maximumBans)",
      "CHANNELLEN=\(RoomName.maximumLength + 1)", "NICKLEN=\(UserName.maximumLength)",
      "SAFELIST", "AWAYLEN=\(Self.maximumAwayBytes)",
    ]
    tokens.append("CHATHISTORY=\(Self.maximumHistory)")
    let most = Self.maximumTargets
    tokens.append("TARGMAX=JOIN:\(most),PART:\(most),NAMES:\(most),PRIVMSG:\(most),NOTICE:\(most)")
    tokens.append("MAXTARGETS=\(most)")
    // IRCv3 WHOX: `WHO <mask> %<fields>[,<token>]` answers 354.
    tokens.append("WHOX")
    // LIST's terms: masks, masks not to match, member counts (IRCListFilter).
    tokens.append("ELIST=MNU")
    // IRCv3 UTF8ONLY: a line that is not UTF-8 is refused (``refuse(_:)``).
    tokens.append("UTF8ONLY")
    // At most 13 tokens a line, so that with the nick and the closing
    // text a 005 has no more than the 15 parameters IRC allows.
    var actions: [Action] = []
    for start in stride(from: 0, to: tokens.count, by: 13) {
      let line = Array(tokens[start..<min(start + 13, tokens.count)])
      actions.append(numeric(.iSupport, line + ["are supported by this server"]))
    }
    return actions
  }
}

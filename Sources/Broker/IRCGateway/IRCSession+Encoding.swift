import Foundation
import IRCProtocol
import LineProtocol

/// The engine's events as this client's IRC lines.
extension IRCSession {

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
  func historyLine(_ event: BrokerEvent, batch: String?, backlog: Bool) -> [UInt8] {
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

  func ok(_ verb: Verb, _ fields: [String]) -> [UInt8] {
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

  func error(_ verb: String, _ code: ErrorCode, _ text: String) -> [UInt8] {
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
}

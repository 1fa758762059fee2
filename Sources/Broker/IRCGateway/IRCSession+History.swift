import Foundation
import IRCProtocol
import LineProtocol

/// `CHATHISTORY` (IRCv3 `draft/chathistory`): requests, references and
/// limits, and the batch its answer comes in.
extension IRCSession {
  /// `CHATHISTORY LATEST|BEFORE|AFTER|AROUND <target> <reference> <limit>`
  /// and `CHATHISTORY BETWEEN <target> <reference> <reference> <limit>`; a
  /// reference is `msgid=<id>` or `timestamp=<server-time>`, and LATEST
  /// also takes `*` (chatbroker(7), "IRC").
  func chathistory(_ parameters: [String]) -> [Action] {
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
    let target = name.hasPrefix("#") ? room(name).map(Target.room) : Target("@" + login(name))
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
    return [
      .reply(batchLine(["+\(batch)", "chathistory", name])),
      .request(
        .history(target, count: limit, anchor: anchor),
        answering: IRCReplyContext(.chathistory(batch: batch))),
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
  func chathistoryTargets(_ parameters: [String]) -> [Action] {
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
    let active = reader.activeConversations(
      after: times.min()!, before: times.max()!, limit: limit)
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
  func batchLine(_ parameters: [String]) -> [UInt8] {
    guard capabilities.contains(.batch) else { return [] }
    return IRCMessage(source: serverName, "BATCH", parameters).encoded()
  }

  /// `msgid=<id>` or `timestamp=<time>` in server-time's form.
  static func historyPoint(_ reference: String) -> HistoryPoint? {
    if reference.hasPrefix("msgid=") {
      return MessageID(reference.dropFirst(6)).map(HistoryPoint.message)
    }
    if reference.hasPrefix("timestamp=") {
      return Timestamp(rfc3339: reference.dropFirst(10)).map(HistoryPoint.time)
    }
    return nil
  }
}

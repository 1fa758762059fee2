import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

extension ScriptMode {
  /// `chatsh tail`: joins the rooms, optionally prints recent history, then
  /// follows. When the broker goes away it reconnects with backoff, joins
  /// again and prints what it missed (`HISTORY ... AFTER` the newest id it
  /// knows in each conversation), each message once, in order. With
  /// `mentions`, only messages for the user: direct ones, and those that
  /// mention them (chatsh(1), "tail").
  mutating func tail(targets: [String], count: Int, json: Bool, mentions forMe: Bool)
    throws(ScriptFailure) -> ExitCode
  {
    var (connection, me) = try connectSayingHello()
    var named: [Target] = []
    for target in targets { named.append(try checked(target, Target.init)) }
    let wanted = Set(named.map(\.description))
    var seen = Set<String>()
    var newest: [String: String] = [:]

    func emit(_ message: ChatMessage, into out: inout StandardOutput) {
      guard wanted.contains(message.target) || (forMe && message.target.hasPrefix("@")),
        seen.insert(message.id).inserted
      else { return }
      newest[message.target] = message.id
      if forMe {
        guard message.user != me,
          message.target.hasPrefix("@") || mentions(message.text, of: me)
        else { return }
      }
      out.line(json ? OutputFormat.json(message) : OutputFormat.plain(message, color: color))
    }

    /// Joins, then fetches history: the latest `count` at the start, what
    /// was missed after a reconnect. Live messages arriving meanwhile are
    /// held back, so nothing is printed twice or out of order.
    func subscribe(_ connection: BrokerConnection, first: Bool, out: inout StandardOutput)
      throws(ScriptFailure)
    {
      let targets = Set(named).sorted { $0.description < $1.description }
      let rooms = targets.compactMap { target -> RoomName? in
        if case .room(let room) = target { return room }
        return nil
      }
      for room in rooms { connection.send(.join(room)) }
      var requests = 0
      for target in targets {
        if first {
          connection.send(.history(target, count: min(max(count, 1), 1000), anchor: nil))
        } else if let id = newest[target.description].flatMap(MessageID.init) {
          connection.send(.history(target, count: 1000, anchor: .after(id)))
        } else {
          connection.send(.history(target, count: 1000, anchor: nil))
        }
        requests += 1
      }
      var history: [ChatMessage] = []
      var held: [ChatMessage] = []
      _ = try awaitReplies(connection, replies: rooms.count + requests) { line in
        if let message = line.historyMessage { history.append(message) }
        if let message = line.message { held.append(message) }
      }
      if first {
        // The newest of each conversation anchors a later reconnect even
        // when -n 0 prints none of them.
        for target in wanted {
          let latest = history.filter { $0.target == target }
          if let last = latest.last { newest[target] = last.id }
          for message in latest.suffix(count) {
            seen.remove(message.id)
            emit(message, into: &out)
          }
          for message in latest { seen.insert(message.id) }
        }
      } else {
        for message in history { emit(message, into: &out) }
      }
      for message in held { emit(message, into: &out) }
      out.flush()
    }

    let started = Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))

    /// With `--mentions`, direct conversations need no TARGET: their newest
    /// ids come from `CONVERSATIONS` (since 1.2; an older broker has none
    /// to give), and after a reconnect what arrived in each meanwhile is
    /// fetched like the TARGETs' (only what came after tail started).
    /// `anchors`: the newest ids known before the connection was lost.
    func catchUpDirect(
      _ connection: BrokerConnection, first: Bool, anchors: [String: String],
      out: inout StandardOutput
    ) throws(ScriptFailure) {
      guard forMe else { return }
      connection.send(.conversations)
      var direct: [ConversationSummary] = []
      do {
        _ = try awaitReplies(connection, replies: 1) { line in
          if case .event(.conversation(let summary)) = line, case .user = summary.target {
            direct.append(summary)
          }
        }
      } catch {
        guard case .refused = error else { throw error }
        return
      }
      var requests: [Request] = []
      for summary in direct {
        let target = summary.target.description
        guard !wanted.contains(target), let latest = summary.newest else { continue }
        if first {
          newest[target] = latest.id.description
        } else if let known = anchors[target] {
          if known != latest.id.description, let id = MessageID(known) {
            requests.append(.history(summary.target, count: 1000, anchor: .after(id)))
          }
        } else {
          requests.append(.history(summary.target, count: 1000, anchor: nil))
        }
      }
      guard !requests.isEmpty else { return }
      for request in requests { connection.send(request) }
      var missed: [ChatMessage] = []
      var held: [ChatMessage] = []
      _ = try awaitReplies(connection, replies: requests.count) { line in
        if let message = line.historyMessage, message.time >= started { missed.append(message) }
        if let message = line.message { held.append(message) }
      }
      for message in missed + held { emit(message, into: &out) }
      out.flush()
    }

    var output = out
    defer { out = output }
    try subscribe(connection, first: true, out: &output)
    try catchUpDirect(connection, first: true, anchors: [:], out: &output)
    while true {
      var lost = false
      do {
        let line = try connection.nextLine(timeoutSeconds: nil)
        if let message = line?.message {
          emit(message, into: &output)
          output.flush()
        } else if case .event(.bye)? = line {
          lost = true
        } else if line == nil {
          lost = true
        }
      } catch {
        lost = true
      }
      guard lost else { continue }
      complain("lost the connection to the broker; reconnecting")
      var attempt = 0
      while true {
        let delay = reconnectDelays[min(attempt, reconnectDelays.count - 1)]
        usleep(UInt32(delay) * 1_000_000)
        attempt += 1
        do {
          (connection, me) = try connectSayingHello()
          let anchors = newest
          try subscribe(connection, first: false, out: &output)
          try catchUpDirect(connection, first: false, anchors: anchors, out: &output)
          break
        } catch {
          switch error {
          case .refused, .untrusted: throw error
          default: continue
          }
        }
      }
      complain("reconnected")
    }
  }
}

import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

extension ScriptMode {
  /// The rooms among `targets` that are not yet mine (chatbroker(7), "Your
  /// rooms and read markers"): tail's JOIN makes them mine, and they are
  /// left again when tail is interrupted, so that reading a room does not
  /// make it one of mine for good. Nil from a broker before 1.2, which has
  /// no rooms of mine to leave. Live messages read meanwhile go to `early`.
  func roomsNotMine(
    _ connection: BrokerConnection, among targets: [Target], early: inout [ChatMessage]
  ) throws(ScriptFailure) -> [RoomName]? {
    connection.send(.conversations)
    var mine = Set<String>()
    var live: [ChatMessage] = []
    do {
      _ = try awaitReplies(connection, replies: 1) { line in
        if case .event(.conversation(let summary)) = line {
          mine.insert(summary.target.description)
        }
        if let message = line.message { live.append(message) }
      }
    } catch {
      guard case .refused = error else { throw error }
      return nil
    }
    early += live
    var rooms: [RoomName] = []
    for case .room(let room) in Set(targets) where !mine.contains(room.description) {
      rooms.append(room)
    }
    return rooms
  }

  /// Parts `rooms` (those tail made mine) before an interrupted tail ends;
  /// bounded by the reply timeout, and silent: the signal ends it anyway.
  func leave(_ rooms: [RoomName]?, _ connection: BrokerConnection) {
    guard let rooms, !rooms.isEmpty, !connection.readClosed else { return }
    for room in rooms { connection.send(.part(room)) }
    connection.shutdownWriteWhenFlushed()
    _ = try? awaitReplies(connection, replies: rooms.count) { _ in }
  }

  /// The next line from the broker, or the signal (or terminal hang-up,
  /// as SIGHUP) that came first.
  func nextLineOrSignal(_ connection: BrokerConnection) throws(ConnectionError) -> (
    ServerLine?, Int32?
  ) {
    while true {
      if let line = connection.bufferedLine() { return (line, nil) }
      if connection.readClosed { return (nil, nil) }
      let (events, _) = try connection.wait(
        extra: [Interrupt.pipe.read], watched: Interrupt.terminals, timeoutMilliseconds: -1)
      if events.contains(where: { $0 != 0 }),
        let signal = Interrupt.received(terminals: events.dropFirst())
      {
        return (nil, signal)
      }
    }
  }

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
    var early: [ChatMessage] = []

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
      // A message that arrives while the answers are awaited is held and
      // printed after them, never dropped.
      var held: [ChatMessage] = []
      defer {
        for message in held { emit(message, into: &out) }
        out.flush()
      }
      do {
        _ = try awaitReplies(connection, replies: 1) { line in
          if case .event(.conversation(let summary)) = line, case .user = summary.target {
            direct.append(summary)
          }
          if let message = line.message { held.append(message) }
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
      var live: [ChatMessage] = []
      _ = try awaitReplies(connection, replies: requests.count) { line in
        if let message = line.historyMessage, message.time >= started { missed.append(message) }
        if let message = line.message { live.append(message) }
      }
      // What the history missed first, then what arrived live meanwhile
      // (the deferred emit prints `held`, which `seen` keeps from printing
      // twice).
      held = missed + held + live
    }

    var output = out
    defer { out = output }
    Interrupt.catchSignals()
    let notMine = try roomsNotMine(connection, among: named, early: &early)
    try subscribe(connection, first: true, out: &output)
    for message in early { emit(message, into: &output) }
    output.flush()
    try catchUpDirect(connection, first: true, anchors: [:], out: &output)
    while true {
      var lost = false
      do {
        let (line, signal) = try nextLineOrSignal(connection)
        if let signal {
          output.flush()
          leave(notMine, connection)
          Interrupt.end(by: signal)
        }
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
        if let signal = Interrupt.wait(seconds: delay) {
          output.flush()
          Interrupt.end(by: signal)
        }
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

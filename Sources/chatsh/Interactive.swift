import CNcurses
import ChatClient
import Foundation
import LineProtocol
import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// Seconds to wait before each attempt to reconnect, the last repeated.
let reconnectDelays = [1, 2, 3, 5, 10, 20, 30]

/// The chat screen: connects, then runs one poll(2) loop over the terminal
/// and the broker's socket, feeding ``ChatSession`` and drawing its model.
/// When the connection is lost it reconnects with backoff (the status line
/// says `reconnecting in 3s`); typed input and the open conversations stay.
func runInteractive(
  socket: SocketPath, trust: BrokerTrust, targets: [String], environment: [String: String],
  notes: [String], zone: LocalZone, color: Bool
) -> ExitCode {
  let socketPath = socket.path
  var connection: BrokerConnection?
  let me: String
  do {
    let first = try BrokerConnection(path: socketPath, trust: trust)
    let greeting = try first.greeting(timeoutSeconds: 10)
    if case .event(.hello(_, let user, _)) = greeting {
      me = user
    } else if let (code, text) = greeting.refusal {
      complain("\(code): \(text)")
      return .failure
    } else {
      complain(ConnectionError.closed(path: socketPath, detail: "it did not say HELLO").description)
      return .unavailable
    }
    connection = first
  } catch {
    complain(error.description)
    if case .cannotConnect = error, let note = socket.searchNote { writeAll(2, note + "\n") }
    return .unavailable
  }

  // Before initscr(3), so that ncurses leaves SIGINT and SIGTERM to us.
  Interrupt.catchSignals()
  let store = StateStore(environment: environment)
  let model = ChatModel(me: me)
  let session = ChatSession(model: model, clock: LocalClock(zone: zone)) {
    Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
  }
  let screen = Screen(color: color)
  defer { screen.end() }
  var editor = LineEditor()
  session.send = { connection?.send($0) }
  session.bell = { screen.bell() }
  session.conversationsChanged = {
    store.save($0)
    store.saveWindows(model.windowNumbers)
  }
  // Window numbers as last time: Alt-N reaches the same room (chatsh(1)).
  model.keptNumbers = store.loadWindows()
  session.start(targets: targets, remembered: store.load())
  for note in notes { session.startupNote(note) }
  connection?.flushIfPossible()

  var attempts = 0
  var retryAt = Date.distantFuture
  var lastDrawnMinute: Int64 = -1
  var lastStatus: String?
  var dirty = true
  while !session.quitRequested {
    if connection == nil && Date() >= retryAt {
      if let next = try? BrokerConnection(path: socketPath, trust: trust) {
        connection = next
        retryAt = .distantFuture
      } else {
        attempts += 1
        retryAt = Date().addingTimeInterval(
          Double(reconnectDelays[min(attempts, reconnectDelays.count - 1)]))
      }
    }
    session.reconnectStatus =
      connection == nil
      ? "reconnecting in \(max(Int(retryAt.timeIntervalSinceNow.rounded(.up)), 0))s" : nil
    if session.reconnectStatus != lastStatus {
      lastStatus = session.reconnectStatus
      dirty = true
    }
    if session.now().milliseconds / 60_000 != lastDrawnMinute && lastDrawnMinute >= 0 {
      session.refreshPending()
    }
    if dirty || session.now().milliseconds / 60_000 != lastDrawnMinute {
      draw(screen: screen, session: session, editor: editor)
      if model.currentIndex != nil && model.current.scroll == 0 {
        session.seenBottom(of: model.current)
      }
      lastDrawnMinute = session.now().milliseconds / 60_000
      dirty = false
    }
    var lost = false
    // Standard input's events, the signal pipe's, standard output's.
    var events: [Int16] = []
    if let current = connection {
      do {
        (events, _) = try current.wait(
          extra: [0, Interrupt.pipe.read], watched: [1], timeoutMilliseconds: 250)
      } catch {
        lost = true
      }
      while let line = current.bufferedLine() {
        if case .event(.hello) = line { attempts = 0 }
        session.handle(line)
        dirty = true
      }
      if current.readClosed { lost = true }
    } else {
      var ready = [
        pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
        pollfd(fd: Interrupt.pipe.read, events: Int16(POLLIN), revents: 0),
        pollfd(fd: 1, events: 0, revents: 0),
      ]
      _ = poll(&ready, nfds_t(ready.count), 250)
      events = ready.map(\.revents)
    }
    if events.count == 3, events.contains(where: { $0 != 0 }),
      let signal = Interrupt.received(terminals: [events[0], events[2]])
    {
      // SIGHUP, SIGTERM, or the terminal gone: give the terminal back (if
      // it is still there) and end, closing the connection (chatsh(1),
      // "SIGNALS").
      screen.end()
      Interrupt.end(by: signal)
    }
    if lost {
      connection = nil
      session.connectionLost()
      retryAt = Date().addingTimeInterval(
        Double(reconnectDelays[min(attempts, reconnectDelays.count - 1)]))
      dirty = true
    }
    while let key = screen.readKey() {
      dirty = true
      if !handle(key, editor: &editor, session: session, screen: screen) {
        return .success
      }
    }
    connection?.flushIfPossible()
  }
  return .success
}

/// Applies one key; false to quit.
private func handle(_ key: Key, editor: inout LineEditor, session: ChatSession, screen: Screen)
  -> Bool
{
  let model = session.model
  let page = max(screen.height - 3, 1)
  if key != .control(9) { editor.endCompletion() }
  switch key {
  case .character(let character):
    editor.insert(String(character))
  case .lineBreak:
    editor.insertLineBreak()
  case .paste(let text):
    editor.insertPasted(text)
  case .control(3):  // Ctrl-C
    return false
  case .control(4):  // Ctrl-D: delete, or quit on an empty line
    if editor.characters.isEmpty { return false }
    editor.deleteForward()
  case .control(13), .control(10), .function(KEY_ENTER):
    session.submit(editor.submit())
    model.current.scroll = 0
  case .control(1), .function(KEY_HOME): editor.moveHome()
  case .control(5), .function(KEY_END): editor.moveEnd()
  case .control(2), .function(KEY_LEFT): editor.moveLeft()
  case .control(6), .function(KEY_RIGHT): editor.moveRight()
  case .control(21): editor.killToStart()
  case .control(11): editor.killToEnd()
  case .control(23): editor.killWordBack()
  case .control(8), .control(127), .function(KEY_BACKSPACE): editor.backspace()
  case .function(KEY_DC): editor.deleteForward()
  case .control(16), .function(KEY_UP): editor.historyPrevious()
  case .control(14), .function(KEY_DOWN): editor.historyNext()
  case .control(12): screen.repaintAll()
  case .control(9):
    let (word, isFirst) = editor.wordBeforeCursor
    let beforeCursor = String(editor.characters[..<editor.cursor])
    editor.complete(
      from: session.completions(for: word, isFirst: isFirst, line: beforeCursor), nameFirst: true)
  case .function(KEY_PPAGE):
    if model.current.atTop {
      session.loadOlder()
    } else {
      model.current.scroll += page
    }
  case .function(KEY_NPAGE): model.current.scroll = max(model.current.scroll - page, 0)
  case .alt(let character):
    if let digit = character.wholeNumberValue, digit >= 1 {
      model.switchTo(number: digit)
    } else if character == "b" {
      editor.moveWordLeft()
    } else if character == "f" {
      editor.moveWordRight()
    }
  case .resize:
    break
  default:
    break
  }
  return true
}

/// Status line on top, the transcript, the input line at the bottom.
private func draw(screen: Screen, session: ChatSession, editor: LineEditor) {
  let model = session.model
  let height = screen.height
  let width = screen.width
  guard height >= 3 && width >= 10 else { return }
  let now = session.now()
  screen.clear()

  // Status: the conversation and who is in it; unread counts of the others.
  let current = model.current
  var left = " " + current.name
  if !editor.completionCandidates.isEmpty {
    // Tab offered several: they are shown here, Tab again cycles.
    left = " Tab: " + editor.completionCandidates.joined(separator: "  ")
  } else if let away = current.away {
    left += " (away: \(away))"
  } else if current.isRoom {
    if current.isPrivate { left += " (private)" }
    if let topic = current.topic { left += ": " + topic.text }
    if !current.members.isEmpty { left += " · " + current.members.sorted().joined(separator: " ") }
  }
  // The window list: numbers for Alt-1..9, activity after the names; it
  // gets up to two thirds of the line, the conversation shown the rest.
  var right = model.windowList(fitting: max(width * 2 / 3 - 2, 8))
  let active = !model.otherUnread.isEmpty
  if current.scroll > 0 {
    let below = current.newBelow > 0 ? "\(current.newBelow) new ↓" : "↓ PgDn"
    right = below + (right.isEmpty ? "" : "  " + right)
  }
  if !session.connected {
    right = (session.reconnectStatus ?? "connecting") + "  " + right
  }
  right += " "
  let rightWidth = TextWidth.of(right)
  // What does not fit (a long topic, many members) ends with `…`.
  let leftShown = TextWidth.truncated(sanitized(left), fitting: max(width - rightWidth - 1, 1))
  let gap = max(width - TextWidth.of(leftShown) - rightWidth, 1)
  screen.draw(
    Row([
      Segment(leftShown + String(repeating: " ", count: gap), .status),
      Segment(right, active ? .statusUnread : .status),
    ]), at: 0, fill: .status)

  // Transcript, bottom-aligned, scrolled back by `scroll` rows.
  var renderer = TranscriptRenderer(
    me: model.me, width: width, now: now, clock: session.clock)
  renderer.showIDs = model.showIDs
  let rows = renderer.render(current.entries, newAfter: current.newLineAfter)
  let area = height - 2
  if current.scroll > 0 && current.appendedSinceDraw > 0 {
    // Scrolled back: what arrived below moves the view up by its rows, so
    // what is shown stays where it was.
    let before = renderer.render(
      Array(current.entries.dropLast(current.appendedSinceDraw)), newAfter: current.newLineAfter)
    current.scroll += rows.count - before.count
  }
  current.appendedSinceDraw = 0
  current.scroll = min(current.scroll, max(rows.count - area, 0))
  current.atTop = current.scroll >= rows.count - area
  if current.scroll == 0 { current.newBelow = 0 }
  let end = rows.count - current.scroll
  let start = max(end - area, 0)
  for (offset, row) in rows[start..<end].enumerated() {
    screen.draw(row, at: 1 + area - (end - start) + offset)
  }

  // Input line, with the clock and pending count on the right.
  let clock = session.clock.local(now).clock
  let pending = model.pending.isEmpty ? "" : " · \(model.pending.count) pending"
  let info = "[\(clock)\(pending)] "
  let prompt = "> "
  let inputWidth = width - TextWidth.of(prompt) - TextWidth.of(info) - 1
  let (shown, cursor) = editor.visible(width: inputWidth)
  screen.draw(Row([Segment(prompt, .dim), Segment(shown, .plain)]), at: height - 1)
  screen.draw(Row([Segment(info, .dim)]), at: height - 1, x: width - TextWidth.of(info))
  screen.moveCursor(y: height - 1, x: TextWidth.of(prompt) + cursor)
  screen.refreshScreen()
}

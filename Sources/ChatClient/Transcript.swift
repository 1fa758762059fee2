import LineProtocol

/// One item in a conversation's transcript.
public enum Entry: Equatable, Sendable {
  case message(ChatMessage)
  /// A line from chatsh itself: a reply shown in plain words, or an error.
  case notice(String, time: Timestamp, isError: Bool)
  /// A notice in two columns (`/help`, `/scheduled`), laid out when drawn.
  case table(NoticeTable, time: Timestamp)

  public var messageID: String? {
    if case .message(let message) = self { return message.id }
    return nil
  }

  public var time: Timestamp {
    switch self {
    case .message(let message): message.time
    case .notice(_, let time, _), .table(_, let time): time
    }
  }

  /// A notice's text (a table's as it reads where nothing wraps); nil for
  /// a message.
  public var noticeText: String? {
    switch self {
    case .message: nil
    case .notice(let text, _, _): text
    case .table(let table, _): table.text
    }
  }
}

/// Lays a transcript out as screen rows, the way a phone chat looks: a
/// separator when the day changes, the sender's initials, name and relative
/// time above each run of their messages, your own messages on the right.
public struct TranscriptRenderer {
  public var me: String
  public var width: Int
  public var now: Timestamp
  public var clock: LocalClock
  /// A new run (and header) starts after this much silence by one sender.
  public var runGap: Int64 = 10 * 60_000
  /// A sender's full name, shown with the login name: from the password
  /// database (``UserStyle/displayName(for:)``); tests that lay out rows
  /// pass their own, so the host's users do not change what they expect.
  public var fullName: (String) -> String? = UserStyle.displayName(for:)

  /// `/ids`: a dim `id N` row under each message.
  public var showIDs = false

  /// Columns to the left of others' message text: ` (AB) `.
  public static let indent = 6

  public init(me: String, width: Int, now: Timestamp, clock: LocalClock) {
    self.me = me
    self.width = width
    self.now = now
    self.clock = clock
  }

  /// `newAfter`: where `── new ──` goes (see ``Conversation/newLineAfter``).
  public func render(_ entries: [Entry], newAfter: String? = nil) -> [Row] {
    var rows: [Row] = []
    let newLineAt = newLineIndex(entries, after: newAfter)
    var lastDay: Int64?
    var lastSender: String?
    var lastTime: Int64 = 0
    for (index, entry) in entries.enumerated() {
      let day = clock.local(entry.time).dayNumber
      if day != lastDay {
        rows.append(separator(clock.dayTitle(entry.time, now: now)))
        lastDay = day
        lastSender = nil
      }
      if index == newLineAt {
        rows.append(separator("new"))
        lastSender = nil
      }
      switch entry {
      case .notice(let text, _, let isError):
        let style: Style = isError ? .error : .notice
        for line in sanitizedLines(text) {
          let styled = StyledText(line, style: style)
          for wrapped in styled.wrapped(width: width - 2) {
            rows.append(Row([Segment("  ", style)] + StyledText.segments(wrapped)))
          }
        }
        lastSender = nil
      case .table(let table, _):
        for segments in table.rows(width: width - 2, style: .notice) {
          rows.append(Row([Segment("  ", .notice)] + segments))
        }
        lastSender = nil
      case .message(let message):
        // A reply (chatbroker(7), `REPLY`) starts a run under a quote of
        // what it answers.
        if message.replyTo != nil && !message.isAction {
          rows.append(quote(of: message, in: entries))
          lastSender = nil
        }
        let newRun =
          message.user != lastSender || message.time.milliseconds - lastTime > runGap
        // Within a run, a message in another minute than the one above
        // shows its clock time (the header shows the run's first).
        let stamp =
          !newRun && message.time.milliseconds / 60_000 != lastTime / 60_000
          ? clock.local(message.time).clock : nil
        lastSender = message.isAction ? nil : message.user
        lastTime = message.time.milliseconds
        if message.isAction {
          rows += action(message, stamp: clock.local(message.time).clock)
        } else if message.user == me {
          rows += own(message, header: newRun, stamp: stamp)
        } else {
          rows += others(message, header: newRun, stamp: stamp)
        }
        if let counts = reactions(of: message) { rows.append(counts) }
        if showIDs {
          let label = "id " + sanitized(message.id)
          rows.append(
            message.user == me && !message.isAction
              ? aligned(
                [Segment(label, .dim)], width: TextWidth.of(label), right: max(width - 1, 1))
              : Row([Segment(String(repeating: " ", count: Self.indent) + label, .dim)]))
        }
      }
    }
    return rows
  }

  /// The entry `── new ──` is drawn above: the first message by someone
  /// else after the one with id `after` (after none when `after` is "" or
  /// not loaded). What I wrote and chatsh's notices never arrive unread,
  /// so the line is never drawn above them alone; nil when no message by
  /// someone else follows.
  func newLineIndex(_ entries: [Entry], after: String?) -> Int? {
    guard let after else { return nil }
    let anchor = after.isEmpty ? nil : entries.firstIndex { $0.messageID == after }
    let start = anchor.map { $0 + 1 } ?? entries.startIndex
    return entries[start...].firstIndex {
      if case .message(let message) = $0 { return message.user != me }
      return false
    }
  }

  /// `──── Monday 30 November ────`, centred.
  func separator(_ title: String) -> Row {
    let label = " \(title) "
    let rest = max(width - 1 - TextWidth.of(label), 2)
    let left = rest / 2
    let line =
      String(repeating: "─", count: left) + label
      + String(repeating: "─", count: rest - left)
    return Row([Segment(" ", .plain), Segment(line, .separator)])
  }

  private func others(_ message: ChatMessage, header: Bool, stamp: String?) -> [Row] {
    var rows: [Row] = []
    let color = Style.user(UserStyle.colorIndex(for: message.user))
    let name = header ? fullName(message.user) : nil
    if header {
      rows.append(
        Row([
          Segment(" ", .plain),
          Segment("(\(UserStyle.initials(of: name ?? message.user)))", color),
          Segment(" ", .plain),
          Segment(name.map { "\($0) (\(message.user))" } ?? sanitized(message.user), color),
          Segment(" · " + clock.relative(message.time, now: now), .dim),
        ]))
    }
    let pad = String(repeating: " ", count: Self.indent)
    for (index, line) in wrappedLines(
      message, base: .plain, width: width - Self.indent - 1 - seriesMarkWidth(message)
    ).enumerated() {
      let left =
        index == 0 && stamp != nil
        ? [Segment(" " + stamp!, .dim), Segment(" ", .plain)] : [Segment(pad, .plain)]
      rows.append(Row(left + (index == 0 ? seriesMark(message) : []) + StyledText.segments(line)))
    }
    return rows
  }

  /// A message's text as drawn, in rows of at most `width` columns: its
  /// rooms, users and links highlighted on `base`, or, when it mentions me
  /// (``isMention(_:of:)``, the rule that counts it), on the mention's own
  /// style, so the whole text stands out. Each line of a block
  /// (chatbroker(7), `BLOCK`) starts a row, its tabs taken to the next
  /// multiple of 8 columns so that what was aligned stays so.
  private func wrappedLines(_ message: ChatMessage, base: Style, width: Int)
    -> [[(Character, Style)]]
  {
    let style = isMention(message, of: me) ? .mention : base
    guard MessageBlock.isBlock(message.text) else {
      return edited(message, StyledText.highlighted(message.text, me: me, base: style))
        .wrapped(width: width)
    }
    // By scalars: a CR before a line feed is no part of the line's break.
    let lines = message.text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    var rows: [[(Character, Style)]] = []
    for (index, line) in lines.enumerated() {
      let text = StyledText.highlighted(
        Self.tabsExpanded(String(String.UnicodeScalarView(line))), me: me, base: style)
      rows += (index == lines.count - 1 ? edited(message, text) : text).wrapped(width: width)
    }
    return rows
  }

  /// `line` with each TAB as the spaces up to the next multiple of 8 columns.
  static func tabsExpanded(_ line: String) -> String {
    guard line.contains("\t") else { return line }
    var result = ""
    var column = 0
    for character in line {
      if character == "\t" {
        let spaces = 8 - column % 8
        result += String(repeating: " ", count: spaces)
        column += spaces
      } else {
        result.append(character)
        column += TextWidth.of(character)
      }
    }
    return result
  }

  /// ` (edited)`, dim, after the text of a line its author changed
  /// (chatbroker(7), `AMEND`).
  private func edited(_ message: ChatMessage, _ text: StyledText) -> StyledText {
    guard message.isEdited else { return text }
    return StyledText(characters: text.characters + " (edited)".map { ($0, .dim) })
  }

  /// `↻ `, dim, before the first line of an occurrence of a series
  /// (chatsh(1), "The chat screen"), so a line the broker sent on someone's
  /// behalf is told apart from one typed just now.
  private func seriesMark(_ message: ChatMessage) -> [Segment] {
    message.series == nil ? [] : [Segment(Self.seriesMarkText, .dim)]
  }

  private func seriesMarkWidth(_ message: ChatMessage) -> Int {
    message.series == nil ? 0 : TextWidth.of(Self.seriesMarkText)
  }

  private static let seriesMarkText = "↻ "

  /// The dim line above a reply: `↱ Name: first words of what it
  /// answers…`, cut to one row, or `↱ a reply to <id>` when that message
  /// is not loaded (or was taken back); on the right, as the reply, for
  /// one of mine.
  func quote(of reply: ChatMessage, in entries: [Entry]) -> Row {
    let answered = reply.replyTo ?? ""
    var label = "↱ a reply to \(sanitized(answered))"
    for entry in entries {
      guard case .message(let original) = entry, original.id == answered else { continue }
      let name = original.user == me ? "you" : fullName(original.user) ?? original.user
      label = "↱ " + sanitized(name) + ": " + sanitizedLines(original.text).joined(separator: " ")
      break
    }
    let right = max(width - 1, 1)
    let room =
      reply.user == me ? max(min(right - Self.indent, right * 3 / 4), 10) : right - Self.indent
    label = TextWidth.truncated(label, fitting: room)
    guard reply.user != me else {
      return aligned([Segment(label, .dim)], width: TextWidth.of(label), right: right)
    }
    return Row([Segment(String(repeating: " ", count: Self.indent) + label, .dim)])
  }

  /// The dim line under a message with reactions (chatbroker(7),
  /// `REACT`): each reaction and how many put it, `👍 2  lol 1`, in the
  /// order they were first put, cut to one row; on the right under one
  /// of mine. A reaction is someone's text: it is cleaned as theirs is.
  private func reactions(of message: ChatMessage) -> Row? {
    guard !message.reactions.isEmpty else { return nil }
    let label = message.reactions.map { "\(sanitized($0.reaction)) \($0.users.count)" }
      .joined(separator: "  ")
    let right = max(width - 1, 1)
    guard message.user == me && !message.isAction else {
      let shown = TextWidth.truncated(label, fitting: right - Self.indent)
      return Row([Segment(String(repeating: " ", count: Self.indent) + shown, .dim)])
    }
    let shown = TextWidth.truncated(
      label, fitting: max(min(right - Self.indent, right * 3 / 4), 10))
    return aligned([Segment(shown, .dim)], width: TextWidth.of(shown), right: right)
  }

  /// `/me` (chatbroker(7), `ACTION`): `* cat waves`, as IRC clients show
  /// it, with its clock time, whoever wrote it.
  private func action(_ message: ChatMessage, stamp: String) -> [Row] {
    let isMine = message.user == me
    let color = isMine ? Style.ownName : Style.user(UserStyle.colorIndex(for: message.user))
    let name = sanitized(message.user)
    let lead = " \(stamp) * "
    let pad = String(repeating: " ", count: TextWidth.of(lead))
    let first = TextWidth.of(name) + 1
    var rows: [Row] = []
    for (index, line) in wrappedLines(
      message, base: isMine ? .own : .plain,
      width: max(width - TextWidth.of(lead) - first - 1, 10)
    ).enumerated() {
      let left =
        index == 0
        ? [
          Segment(" \(stamp)", .dim), Segment(" * ", color), Segment(name, color),
          Segment(" ", .plain),
        ]
        : [Segment(pad + String(repeating: " ", count: first), .plain)]
      rows.append(Row(left + StyledText.segments(line)))
    }
    return rows
  }

  private func own(_ message: ChatMessage, header: Bool, stamp: String?) -> [Row] {
    var rows: [Row] = []
    let right = max(width - 1, 1)
    if header {
      let label = "you · " + clock.relative(message.time, now: now)
      rows.append(aligned([Segment(label, .ownName)], width: TextWidth.of(label), right: right))
    }
    let maximum = max(min(right - Self.indent, right * 3 / 4), 10) - seriesMarkWidth(message)
    for (index, line) in wrappedLines(message, base: .own, width: maximum).enumerated() {
      var segments = StyledText.segments(line)
      var lineWidth = line.reduce(0) { $0 + TextWidth.of($1.0) }
      if index == 0 {
        segments.insert(contentsOf: seriesMark(message), at: 0)
        lineWidth += seriesMarkWidth(message)
      }
      if index == 0, let stamp {
        segments.insert(Segment(stamp + "  ", .dim), at: 0)
        lineWidth += TextWidth.of(stamp) + 2
      }
      rows.append(aligned(segments, width: lineWidth, right: right))
    }
    return rows
  }

  private func aligned(_ segments: [Segment], width: Int, right: Int) -> Row {
    Row([Segment(String(repeating: " ", count: max(right - width, 0)), .plain)] + segments)
  }

  private func sanitizedLines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { sanitized(String($0)) }
  }
}

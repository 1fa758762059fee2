/// The input line: a buffer of characters with a cursor, Emacs-style kill
/// commands, a history of sent lines and Tab completion. No terminal here:
/// the screen asks it what to show.
public struct LineEditor: Equatable, Sendable {
  public private(set) var characters: [Character] = []
  /// Index in `characters` before which typing inserts.
  public private(set) var cursor = 0
  public private(set) var history: [String] = []
  private var historyIndex: Int?
  private var draft: [Character] = []
  public static let historyLimit = 500

  public init() {}

  public var text: String { String(characters) }

  /// Inserts at the cursor. Keys arrive one code point at a time, so what
  /// joins the character before the cursor (a zero-width joiner and the
  /// emoji after it, a combining mark, a variation selector) becomes part
  /// of that character, as it is drawn.
  public mutating func insert(_ text: String) {
    let kept = text.filter { !($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) }
    guard !kept.isEmpty else { return }
    let before = Array(String(characters[..<cursor]) + kept)
    let after = characters[cursor...]
    characters = before + after
    cursor = before.count
  }

  /// Alt-Enter: a line break at the cursor, so that Enter then sends a
  /// message of several lines (chatbroker(7), `BLOCK`).
  public mutating func insertLineBreak() {
    characters.insert("\n", at: cursor)
    cursor += 1
  }

  /// Pasted text (bracketed paste): its line breaks (LF, CR LF or CR) kept
  /// as such, each TAB as the spaces up to the next multiple of 8 columns
  /// of its line, other control characters dropped as when typed.
  public mutating func insertPasted(_ text: String) {
    // CR LF and CR (as terminals paste line ends) are each one break.
    var normalized = String.UnicodeScalarView()
    var afterReturn = false
    for scalar in text.unicodeScalars {
      if scalar == "\n" && afterReturn {
        afterReturn = false
        continue
      }
      afterReturn = scalar == "\r"
      normalized.append(afterReturn ? "\n" : scalar)
    }
    for (index, line) in normalized.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      if index > 0 { insertLineBreak() }
      var expanded = String.UnicodeScalarView()
      var column = characters[..<cursor].reversed().prefix { $0 != "\n" }.count
      for scalar in line {
        if scalar == "\t" {
          let spaces = 8 - column % 8
          expanded.append(contentsOf: String(repeating: " ", count: spaces).unicodeScalars)
          column += spaces
        } else {
          expanded.append(scalar)
          column += 1
        }
      }
      insert(String(expanded))
    }
  }

  public mutating func moveLeft() { cursor = max(cursor - 1, 0) }
  public mutating func moveRight() { cursor = min(cursor + 1, characters.count) }
  public mutating func moveHome() { cursor = 0 }
  public mutating func moveEnd() { cursor = characters.count }

  public mutating func moveWordLeft() {
    while cursor > 0 && characters[cursor - 1].isWhitespace { cursor -= 1 }
    while cursor > 0 && !characters[cursor - 1].isWhitespace { cursor -= 1 }
  }

  public mutating func moveWordRight() {
    while cursor < characters.count && characters[cursor].isWhitespace { cursor += 1 }
    while cursor < characters.count && !characters[cursor].isWhitespace { cursor += 1 }
  }

  public mutating func backspace() {
    guard cursor > 0 else { return }
    characters.remove(at: cursor - 1)
    cursor -= 1
  }

  public mutating func deleteForward() {
    guard cursor < characters.count else { return }
    characters.remove(at: cursor)
  }

  /// Ctrl-U: delete from the start of the line to the cursor.
  public mutating func killToStart() {
    characters.removeSubrange(0..<cursor)
    cursor = 0
  }

  /// Ctrl-K: delete from the cursor to the end of the line.
  public mutating func killToEnd() {
    characters.removeSubrange(cursor...)
  }

  /// Ctrl-W: delete the word before the cursor (and spaces after it).
  public mutating func killWordBack() {
    let end = cursor
    moveWordLeft()
    characters.removeSubrange(cursor..<end)
  }

  /// Enter: the line, remembered in the history; the editor is emptied.
  public mutating func submit() -> String {
    let line = text
    if !line.trimmingSpaces.isEmpty && history.last != line {
      history.append(line)
      if history.count > Self.historyLimit { history.removeFirst() }
    }
    characters = []
    cursor = 0
    historyIndex = nil
    draft = []
    return line
  }

  /// Up: the previous line of the history (the draft is kept).
  public mutating func historyPrevious() {
    guard !history.isEmpty else { return }
    let index: Int
    if let current = historyIndex {
      index = max(current - 1, 0)
    } else {
      draft = characters
      index = history.count - 1
    }
    historyIndex = index
    characters = Array(history[index])
    cursor = characters.count
  }

  /// Down: the next line of the history, and at its end the draft.
  public mutating func historyNext() {
    guard let current = historyIndex else { return }
    if current + 1 < history.count {
      historyIndex = current + 1
      characters = Array(history[current + 1])
    } else {
      historyIndex = nil
      characters = draft
    }
    cursor = characters.count
  }

  /// The word before the cursor, and whether it is the first on the line.
  public var wordBeforeCursor: (word: String, isFirst: Bool) {
    var start = cursor
    while start > 0 && !characters[start - 1].isWhitespace { start -= 1 }
    let isFirst = characters[0..<start].allSatisfy(\.isWhitespace)
    return (String(characters[start..<cursor]), isFirst)
  }

  /// Tab: completes the word before the cursor from `candidates`: the only
  /// match and a space (`: ` after a name at the start of the line, as
  /// one addresses someone), or the longest common prefix of several, which
  /// are then offered in ``completionCandidates``; Tab again puts each of
  /// them in turn. Returns the matches.
  @discardableResult
  public mutating func complete(from candidates: [String], nameFirst: Bool = false) -> [String] {
    if var cycle = completionCycle, cycle.end == cursor {
      // Tab again: the next candidate in place of the word.
      let choice = Array(cycle.matches[cycle.next])
      characters.replaceSubrange(cycle.start..<cursor, with: choice)
      cursor = cycle.start + choice.count
      cycle.next = (cycle.next + 1) % cycle.matches.count
      cycle.end = cursor
      completionCycle = cycle
      return cycle.matches
    }
    endCompletion()
    let (word, isFirst) = wordBeforeCursor
    let lowered = word.lowercased()
    let matches = Array(Set(candidates.filter { $0.lowercased().hasPrefix(lowered) })).sorted()
    guard let first = matches.first else { return [] }
    var common = Array(first)
    for match in matches.dropFirst() {
      let other = Array(match)
      var length = 0
      while length < min(common.count, other.count)
        && String(common[length]).lowercased() == String(other[length]).lowercased()
      {
        length += 1
      }
      common = Array(common[0..<length])
    }
    guard common.count >= word.count else { return matches }
    let start = cursor - word.count
    characters.removeSubrange(start..<cursor)
    cursor = start
    var replacement = String(common)
    if matches.count == 1 {
      let isName = !"/#@".contains(replacement.first ?? "/")
      replacement += nameFirst && isFirst && isName ? ": " : " "
    }
    insert(replacement)
    if matches.count > 1 {
      completionCandidates = matches
      completionCycle = CompletionCycle(matches: matches, next: 0, start: start, end: cursor)
    }
    return matches
  }

  /// What several matches of the last Tab were (shown on the status line
  /// until another key is pressed).
  public private(set) var completionCandidates: [String] = []
  private var completionCycle: CompletionCycle?

  /// Tab pressed again after several matches: which comes next, and where
  /// the word being completed starts and ends.
  private struct CompletionCycle: Equatable, Sendable {
    var matches: [String]
    var next: Int
    var start: Int
    var end: Int
  }

  /// Any key but Tab ends offering candidates.
  public mutating func endCompletion() {
    completionCandidates = []
    completionCycle = nil
  }

  /// What to show in `width` columns: the visible part of the line and the
  /// cursor's column in it, scrolled so the cursor is always visible.
  public func visible(width: Int) -> (text: String, cursorColumn: Int) {
    let width = max(width, 2)
    // A line break shows as ↵: the input stays one row.
    let characters = characters.map { $0 == "\n" ? "↵" : $0 }
    let widths = characters.map { TextWidth.of($0) }
    var start = 0
    var beforeCursor = widths[0..<cursor].reduce(0, +)
    // Keep the cursor in view with a little context on its left.
    while beforeCursor > width - 1 && start < cursor {
      beforeCursor -= widths[start]
      start += 1
    }
    var shown = ""
    var used = 0
    var index = start
    while index < characters.count && used + widths[index] <= width {
      shown.append(characters[index])
      used += widths[index]
      index += 1
    }
    return (shown, beforeCursor)
  }
}

extension String {
  var trimmingSpaces: Substring {
    var result = self[...]
    while result.first?.isWhitespace == true { result.removeFirst() }
    while result.last?.isWhitespace == true { result.removeLast() }
    return result
  }
}

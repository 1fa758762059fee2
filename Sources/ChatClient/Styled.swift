import LineProtocol

/// How a piece of text on the chat screen looks; the terminal layer maps
/// each to colours and attributes.
public enum Style: Equatable, Hashable, Sendable {
  case plain
  case dim
  /// A user's name or initials, in the user's stable colour (0 ..< 6).
  case user(UInt32)
  case ownName
  case own
  /// `@you` in someone else's message.
  case mention
  case link
  case room
  case separator
  case notice
  case error
  case status
  case statusUnread
}

/// A run of text in one style.
public struct Segment: Equatable, Sendable {
  public var text: String
  public var style: Style

  public init(_ text: String, _ style: Style) {
    self.text = text
    self.style = style
  }
}

/// One screen row: segments left to right, at most the screen's width.
public struct Row: Equatable, Sendable {
  public var segments: [Segment]

  public init(_ segments: [Segment] = []) {
    self.segments = segments
  }

  public var text: String { segments.map(\.text).joined() }
  public var width: Int { TextWidth.of(text) }
}

/// Whether `text` is for `me`: it names `@me` as a word, or starts with
/// `me:` (as IRC users address each other). Direct messages are for their
/// recipient whatever they say; callers check that.
public func mentions(_ text: String, of me: String) -> Bool {
  // As the broker counts them (chatbroker(7), CONVERSATIONS): `name:`
  // only at the very start, as login names are spelled.
  if text.hasPrefix(me + ":") { return true }
  return StyledText.mentions(text, me: me)
}

/// Whether `message` mentions `me` (``mentions(_:of:)``) and is someone
/// else's: the one rule that counts it as for me (`1!`) and highlights
/// its whole text on the chat screen (chatsh(1), "The chat screen").
public func isMention(_ message: ChatMessage, of me: String) -> Bool {
  message.user != me && mentions(message.text, of: me)
}

/// Text cut into styled characters, for highlighting and wrapping together.
struct StyledText {
  var characters: [(Character, Style)] = []

  init(_ text: String, style: Style) {
    characters = text.map { ($0, style) }
  }

  init(characters: [(Character, Style)]) {
    self.characters = characters
  }

  /// Message text with `#rooms`, `@users`, URLs and mentions of `me`
  /// highlighted. Control characters were already made harmless.
  static func highlighted(_ text: String, me: String, base: Style) -> StyledText {
    let characters = Array(sanitized(text))
    var styles = [Style](repeating: base, count: characters.count)
    var index = 0
    while index < characters.count {
      let atWordStart =
        index == 0 || characters[index - 1].isWhitespace
        || "([{<\"'".contains(characters[index - 1])
      guard atWordStart else {
        index += 1
        continue
      }
      var end = index
      while end < characters.count && !characters[end].isWhitespace { end += 1 }
      // Trailing punctuation is not part of a name or a link.
      while end > index + 1 && ".,;:!?)]}>\"'".contains(characters[end - 1]) { end -= 1 }
      let word = String(characters[index..<end])
      var style: Style?
      if word.hasPrefix("http://") || word.hasPrefix("https://") {
        style = .link
      } else if word.hasPrefix("#"), RoomName(word) != nil {
        style = .room
      } else if word.hasPrefix("@"), word.count > 1 {
        style = word.dropFirst().lowercased() == me.lowercased() ? .mention : .room
      }
      if let style {
        for position in index..<end { styles[position] = style }
      }
      index = max(end, index + 1)
    }
    return StyledText(characters: Array(zip(characters, styles)))
  }

  /// Whether `text` mentions `@me` as a word.
  static func mentions(_ text: String, me: String) -> Bool {
    highlighted(text, me: me, base: .plain).characters.contains { $0.1 == .mention }
  }

  /// Greedy word wrap into lines of at most `width` columns; words longer
  /// than a line are cut.
  func wrapped(width: Int) -> [[(Character, Style)]] {
    let width = max(width, 1)
    var lines: [[(Character, Style)]] = []
    var line: [(Character, Style)] = []
    var lineWidth = 0
    var index = 0
    while index < characters.count {
      // The next word and the spaces before it.
      var end = index
      while end < characters.count && characters[end].0.isWhitespace { end += 1 }
      while end < characters.count && !characters[end].0.isWhitespace { end += 1 }
      let word = characters[index..<end]
      let wordWidth = word.reduce(0) { $0 + TextWidth.of($1.0) }
      if lineWidth + wordWidth <= width {
        line += word
        lineWidth += wordWidth
      } else {
        let trimmed = word.drop { $0.0.isWhitespace }
        let trimmedWidth = trimmed.reduce(0) { $0 + TextWidth.of($1.0) }
        if !line.isEmpty {
          lines.append(line)
          line = []
          lineWidth = 0
        }
        if trimmedWidth <= width {
          line = Array(trimmed)
          lineWidth = trimmedWidth
        } else {
          for item in trimmed {
            let characterWidth = TextWidth.of(item.0)
            if lineWidth + characterWidth > width {
              lines.append(line)
              line = []
              lineWidth = 0
            }
            line.append(item)
            lineWidth += characterWidth
          }
        }
      }
      index = end
    }
    if !line.isEmpty || lines.isEmpty { lines.append(line) }
    return lines
  }

  /// Groups styled characters into segments.
  static func segments(_ characters: [(Character, Style)]) -> [Segment] {
    var result: [Segment] = []
    for (character, style) in characters {
      if let last = result.last, last.style == style {
        result[result.count - 1].text.append(character)
      } else {
        result.append(Segment(String(character), style))
      }
    }
    return result
  }
}

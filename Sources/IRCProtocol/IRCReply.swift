import Glibc

/// A reply that quotes what a client sent (a nick, a command, a target, a
/// `PING` token) made safe to send back and to show: IRC clients print
/// parameters as they come, and a CR would start a forged line of its own
/// (chatbroker(7), "IRC").
extension IRCMessage {
  /// The message with every control character (C0, DEL, C1; a TAB is
  /// kept in the text of a NOTICE or PRIVMSG only) of its parameters
  /// replaced by U+FFFD, likewise every space and a leading
  /// `:` in a middle parameter, an empty middle parameter written `*`, and
  /// parameters cut (at a character) so the line fits 512 bytes: the last
  /// one gets what the others leave, each middle one at most 128 bytes.
  public func cleaned() -> IRCMessage {
    // Most replies quote nothing odd (a LIST is a thousand of them): a
    // look at the bytes first, and a copy only when something must change.
    let isText = command == "PRIVMSG" || command == "NOTICE"
    var length = 64 + (source?.utf8.count ?? 0) + command.utf8.count
    var clean = true
    for index in 0..<parameters.count where clean {
      var parameter = parameters[index]
      let isLast = index == parameters.count - 1
      length += parameter.utf8.count + 2
      clean = parameter.withUTF8 {
        IRCText.isClean($0, middle: !isLast, tabAllowed: isLast && isText)
      }
    }
    if clean && length <= Self.maximumBytes { return self }
    var copy = self
    let lastIndex = parameters.count - 1
    for (index, parameter) in parameters.enumerated() where index < lastIndex {
      var middle = IRCText.replacingControls(in: parameter, spacesToo: true, tabToo: true)
      if middle.hasPrefix(":") { middle = "\u{FFFD}" + middle.dropFirst() }
      copy.parameters[index] = middle.isEmpty ? "*" : IRCText.prefix(middle, maximumBytes: 128)
    }
    guard lastIndex >= 0 else { return copy }
    // A TAB may stand in a message's text (chatbroker(7)), as in the
    // NOTICEs that show one; anywhere else it is a control character too.
    let last = IRCText.replacingControls(
      in: parameters[lastIndex], spacesToo: false, tabToo: !isText)
    copy.parameters[lastIndex] = ""
    let room = Self.maximumBytes - copy.encoded(trailing: true).count
    copy.parameters[lastIndex] = IRCText.prefix(last, maximumBytes: max(room, 0))
    return copy
  }
}

extension IRCMessage {
  /// `PRIVMSG` (or `NOTICE`) lines of `text` from `source` to `target`,
  /// the text cut to fit 512 bytes as ``IRCText/split(_:maximumBytes:)``
  /// cuts it; the first line starts with the encoded `tags` (`@...` and
  /// its space, or nothing), the others with `laterTags`. The same bytes as
  /// encoding each piece as a message, written at once: a room's backlog
  /// or a history is many of these.
  public static func textLines(
    tags: [UInt8], laterTags: [UInt8], source: String, command: String, target: String,
    text: String, action: Bool = false
  ) -> [UInt8] {
    // A CTCP ACTION (`/me`) is framed by ^A on every line it takes.
    let opening: [UInt8] = action ? Array("\u{01}ACTION ".utf8) : []
    let closing: [UInt8] = action ? [1] : []
    var head: [UInt8] = [UInt8(ascii: ":")]
    head.append(contentsOf: source.utf8)
    head.append(UInt8(ascii: " "))
    head.append(contentsOf: command.utf8)
    head.append(UInt8(ascii: " "))
    head.append(contentsOf: target.utf8)
    head.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":")])
    let room = maximumBytes - head.count - 2 - opening.count - closing.count
    // Texts hold no CR, LF or NUL (chatbroker(7)); if one ever did, it
    // would not end a line: encoded() has the same guard.
    var text = text
    let breaksLines = text.withUTF8 { bytes in
      guard let base = bytes.baseAddress else { return false }
      return memchr(base, 13, bytes.count) != nil || memchr(base, 10, bytes.count) != nil
        || memchr(base, 0, bytes.count) != nil
    }
    if breaksLines {
      text = String(
        decoding: text.utf8.map { $0 == 13 || $0 == 10 || $0 == 0 ? UInt8(ascii: " ") : $0 },
        as: UTF8.self)
    }
    return text.withUTF8 { bytes in
      let ends = IRCText.cuts(bytes, maximumBytes: room)
      var lines: [UInt8] = []
      lines.reserveCapacity(
        bytes.count + ends.count * (head.count + 2 + laterTags.count) + tags.count)
      var start = 0
      for end in ends {
        lines.append(contentsOf: start == 0 ? tags : laterTags)
        lines.append(contentsOf: head)
        lines.append(contentsOf: opening)
        lines.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
        lines.append(contentsOf: closing)
        lines.append(contentsOf: [13, 10])
        start = end
      }
      return lines
    }
  }
}

extension IRCText {
  /// Whether a parameter needs nothing of ``IRCMessage/cleaned()``: no
  /// control character (a TAB only where `tabAllowed`), and as a middle
  /// parameter no space, not empty, no leading `:` and at most 128 bytes.
  static func isClean(_ bytes: UnsafeBufferPointer<UInt8>, middle: Bool, tabAllowed: Bool) -> Bool {
    if middle && (bytes.isEmpty || bytes.count > 128 || bytes[0] == UInt8(ascii: ":")) {
      return false
    }
    var afterC2 = false
    for index in 0..<bytes.count {
      let byte = bytes[index]
      if byte < 0x20 && !(byte == 0x09 && tabAllowed) { return false }
      if byte == 0x7F || (afterC2 && byte >= 0x80 && byte <= 0x9F) { return false }
      if middle && byte == UInt8(ascii: " ") { return false }
      afterC2 = byte == 0xC2
    }
    return true
  }

  /// `text` with its control characters (C0, DEL, C1; TAB only when
  /// `tabToo`), and its spaces when `spacesToo`, replaced by U+FFFD.
  public static func replacingControls(in text: String, spacesToo: Bool, tabToo: Bool) -> String {
    func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
      switch scalar.value {
      case 0x09: tabToo
      case 0x00..<0x20, 0x7F...0x9F: true
      case 0x20: spacesToo
      default: false
      }
    }
    guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      result.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
    }
    return String(result)
  }

  /// The longest prefix of `text` of at most `maximumBytes` UTF-8 bytes
  /// that ends at a character.
  public static func prefix(_ text: String, maximumBytes: Int) -> String {
    guard text.utf8.count > maximumBytes else { return text }
    var bytes = 0
    var end = text.startIndex
    for index in text.indices {
      let width = text[index].utf8.count
      if bytes + width > maximumBytes { break }
      bytes += width
      end = text.index(after: index)
    }
    return String(text[..<end])
  }
}

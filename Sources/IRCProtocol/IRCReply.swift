/// A reply that quotes what a client sent (a nick, a command, a target, a
/// `PING` token) made safe to send back and to show: IRC clients print
/// parameters as they come, and a CR would start a forged line of its own
/// (chatbroker(7), "IRC").
extension IRCMessage {
  /// The message with every control character (C0 but TAB, DEL, C1) of
  /// its parameters replaced by U+FFFD, likewise every space and a leading
  /// `:` in a middle parameter, an empty middle parameter written `*`, and
  /// parameters cut (at a character) so the line fits 512 bytes: the last
  /// one gets what the others leave, each middle one at most 128 bytes.
  public func cleaned() -> IRCMessage {
    var copy = self
    let lastIndex = parameters.count - 1
    for (index, parameter) in parameters.enumerated() where index < lastIndex {
      var middle = IRCText.replacingControls(in: parameter, spacesToo: true)
      if middle.hasPrefix(":") { middle = "\u{FFFD}" + middle.dropFirst() }
      copy.parameters[index] = middle.isEmpty ? "*" : IRCText.prefix(middle, maximumBytes: 128)
    }
    guard lastIndex >= 0 else { return copy }
    let last = IRCText.replacingControls(in: parameters[lastIndex], spacesToo: false)
    copy.parameters[lastIndex] = ""
    let room = Self.maximumBytes - copy.encoded(trailing: true).count
    copy.parameters[lastIndex] = IRCText.prefix(last, maximumBytes: max(room, 0))
    return copy
  }
}

extension IRCText {
  /// `text` with its control characters (C0 but TAB, DEL, C1), and its
  /// spaces when `spacesToo`, replaced by U+FFFD.
  public static func replacingControls(in text: String, spacesToo: Bool) -> String {
    func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
      switch scalar.value {
      case 0x09: false
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

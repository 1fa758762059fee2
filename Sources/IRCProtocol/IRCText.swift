/// Cutting texts to fit IRC's 512-byte lines.
public enum IRCText {
  /// Splits `text` into pieces of at most `maximumBytes` UTF-8 bytes each,
  /// never inside a character's bytes: at the last space that leaves the
  /// piece at least half full, else at the last Unicode scalar that fits.
  public static func split(_ text: String, maximumBytes: Int) -> [String] {
    let limit = max(maximumBytes, 4)
    var pieces: [String] = []
    var rest = Substring(text)
    while rest.utf8.count > limit {
      var end = rest.startIndex
      var bytes = 0
      var lastSpace: String.Index?
      for index in rest.unicodeScalars.indices {
        let scalar = rest.unicodeScalars[index]
        let width = String(scalar).utf8.count
        if bytes + width > limit { break }
        bytes += width
        end = rest.unicodeScalars.index(after: index)
        if scalar == " " && bytes >= limit / 2 { lastSpace = end }
      }
      let cut = lastSpace ?? end
      pieces.append(String(rest[..<cut]))
      rest = rest[cut...]
    }
    if !rest.isEmpty || pieces.isEmpty { pieces.append(String(rest)) }
    return pieces
  }

  /// Room for the text of a `PRIVMSG`/`NOTICE` from `source` to `target`:
  /// 512 bytes less `:<source> <command> <target> :` and CR LF.
  public static func room(source: String, command: String, target: String) -> Int {
    IRCMessage.maximumBytes
      - (1 + source.utf8.count + 1 + command.utf8.count + 1
        + target.utf8.count + 2 + 2)
  }
}

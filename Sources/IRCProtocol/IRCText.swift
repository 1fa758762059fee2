/// Cutting texts to fit IRC's 512-byte lines, and comparing names.
public enum IRCText {
  /// Whether two nicks or channels are one name under `CASEMAPPING=ascii`
  /// (the gateway's ISUPPORT): only A to Z fold to a to z. Foundation's
  /// `caseInsensitiveCompare` folds by Unicode (`ſ` is `s` to it), and
  /// cost about 2% of the serving thread asked for every `PRIVMSG`.
  public static func sameName(_ one: String, _ other: String) -> Bool {
    let (a, b) = (one.utf8, other.utf8)
    guard a.count == b.count else { return false }
    return zip(a, b).allSatisfy { folded($0) == folded($1) }
  }

  @inline(__always)
  private static func folded(_ byte: UInt8) -> UInt8 {
    byte &- 65 < 26 ? byte | 0x20 : byte
  }

  /// Splits `text` into pieces of at most `maximumBytes` UTF-8 bytes each,
  /// never inside a character's bytes: at the last space that leaves the
  /// piece at least half full, else at the last Unicode scalar that fits.
  public static func split(_ text: String, maximumBytes: Int) -> [String] {
    var text = text
    return text.withUTF8 { bytes in
      var pieces: [String] = []
      var start = 0
      for end in cuts(bytes, maximumBytes: maximumBytes) {
        pieces.append(
          String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
        start = end
      }
      return pieces
    }
  }

  /// Where ``split(_:maximumBytes:)`` cuts UTF-8 `bytes`: the end offset
  /// of each piece, the last being `bytes.count` (one piece, empty, for no
  /// bytes). On the bytes, since a history of long lines is thousands of
  /// cuts a request.
  public static func cuts(_ bytes: UnsafeBufferPointer<UInt8>, maximumBytes: Int) -> [Int] {
    let limit = max(maximumBytes, 4)
    var ends: [Int] = []
    var start = 0
    while bytes.count - start > limit {
      // The first byte left out begins a character: never a continuation byte.
      var cut = start + limit
      while bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
      let halfFull = start + limit / 2 - 1
      var space = cut - 1
      while space >= halfFull && bytes[space] != UInt8(ascii: " ") { space -= 1 }
      if space >= halfFull { cut = space + 1 }
      ends.append(cut)
      start = cut
    }
    ends.append(bytes.count)
    return ends
  }

  /// Room for the text of a `PRIVMSG`/`NOTICE` from `source` to `target`:
  /// 512 bytes less `:<source> <command> <target> :` and CR LF.
  public static func room(source: String, command: String, target: String) -> Int {
    IRCMessage.maximumBytes
      - (1 + source.utf8.count + 1 + command.utf8.count + 1
        + target.utf8.count + 2 + 2)
  }
}

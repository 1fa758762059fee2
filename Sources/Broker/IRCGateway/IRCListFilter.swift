import LineProtocol

/// What `LIST <terms>` asks for (ISUPPORT `ELIST=MNU`; chatbroker(7),
/// "IRC"): terms separated by commas, each a channel mask (`#ops`,
/// `*an1`), a mask not to match (`!#ch*`), or a member count, more than
/// (`>3`) or fewer than (`<10`). A room is listed when it matches one of
/// the masks (any, when there are none), none of the `!` masks, and every
/// count. Terms of other kinds (`C>`, `T<`) are not offered and are
/// ignored, as the ELIST token tells clients.
struct IRCListFilter {
  var masks: [String] = []
  var excluded: [String] = []
  var moreThan: Int?
  var fewerThan: Int?

  /// nil for a LIST without terms: every room.
  init?(_ parameter: String?) {
    guard let parameter, !parameter.isEmpty else { return nil }
    for term in parameter.lowercased().split(separator: ",").map(String.init) {
      if term.hasPrefix(">"), let count = Int(term.dropFirst()) {
        moreThan = max(moreThan ?? count, count)
      } else if term.hasPrefix("<"), let count = Int(term.dropFirst()) {
        fewerThan = min(fewerThan ?? count, count)
      } else if term.hasPrefix("!"), term.count > 1 {
        excluded.append(String(term.dropFirst()))
      } else if !term.hasPrefix("<"), !term.hasPrefix(">"), !term.contains(">"),
        !term.contains("<")
      {
        masks.append(term)
      }
    }
  }

  func matches(_ room: String, members: Int) -> Bool {
    if let moreThan, members <= moreThan { return false }
    if let fewerThan, members >= fewerThan { return false }
    if excluded.contains(where: { ModeChange.mask($0, matches: room) }) { return false }
    return masks.isEmpty || masks.contains { ModeChange.mask($0, matches: room) }
  }
}

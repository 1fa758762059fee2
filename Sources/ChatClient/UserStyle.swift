/// How a user looks on screen: a colour and initials that stay the same in
/// every session and on every terminal (so not Swift's seeded `Hasher`).
public enum UserStyle {
  /// Six colours: red, green, yellow, blue, magenta, cyan (ANSI 1 to 6).
  public static let colorCount: UInt32 = 6

  /// 0 ..< colorCount, from FNV-1a of the name.
  public static func colorIndex(for user: String) -> UInt32 {
    var hash: UInt32 = 2_166_136_261
    for byte in user.utf8 {
      hash ^= UInt32(byte)
      hash = hash &* 16_777_619
    }
    return hash % colorCount
  }

  /// Two capital letters: the first letters of the first two parts of
  /// `john.doe` or `john_doe`, else the first two letters (`bob` → `BO`).
  public static func initials(for user: String) -> String {
    let parts = user.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    let letters: [Character]
    if parts.count >= 2 {
      letters = [parts[0].first!, parts[1].first!]
    } else {
      letters = Array((parts.first ?? Substring(user)).prefix(2))
    }
    let text = String(letters).uppercased()
    return text.isEmpty ? "??" : text
  }
}

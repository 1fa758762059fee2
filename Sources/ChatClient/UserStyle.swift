import Foundation

#if canImport(Glibc)
  import Glibc
#endif

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

  /// Two capital letters: from the display name in the password database
  /// when there is one (`Carol Cooper` → `CC`), else from the login name.
  public static func initials(for user: String) -> String {
    initials(of: displayName(for: user) ?? user)
  }

  /// The first letters of the first and last parts of `Carol Ann Cooper`,
  /// `john.doe` or `john_doe`, else the first two letters (`bob` → `BO`).
  public static func initials(of name: String) -> String {
    let user = name
    var parts = user.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    if parts.count > 2 { parts = [parts[0], parts[parts.count - 1]] }
    let letters: [Character]
    if parts.count >= 2 {
      letters = [parts[0].first!, parts[1].first!]
    } else {
      letters = Array((parts.first ?? Substring(user)).prefix(2))
    }
    let text = String(letters).uppercased()
    return text.isEmpty ? "??" : text
  }

  /// The user's full name from the GECOS field of the password database
  /// (getpwnam(3)): its first comma-separated part, when it says more than
  /// the login name. Looked up once per name.
  public static func displayName(for user: String) -> String? {
    names.lookup(user)
  }

  private static let names = NameCache()
}

/// getpwnam(3) results by login name; chatsh looks names up while drawing.
private final class NameCache: @unchecked Sendable {
  private let lock = NSLock()
  private var known: [String: String?] = [:]

  func lookup(_ user: String) -> String? {
    lock.lock()
    defer { lock.unlock() }
    if let cached = known[user] { return cached }
    var name: String?
    if let entry = getpwnam(user), let gecos = entry.pointee.pw_gecos {
      let full =
        String(cString: gecos).split(separator: ",", omittingEmptySubsequences: false)
        .first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
      if !full.isEmpty && full.lowercased() != user.lowercased() { name = sanitized(full) }
    }
    known[user] = name
    return name
  }
}

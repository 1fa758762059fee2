/// Reactions (since 1.6; chatbroker(7), `REACT`): a short emoji or word a
/// user puts on a message, at most one of each per user, removable.
public enum Reaction {
  /// The most bytes one reaction has: an emoji with its modifiers, or a
  /// short word (`+1`, `lol`).
  public static let maximumBytes = 32
  /// The most different reactions one message carries; another is LIMIT.
  public static let maximumPerMessage = 20
  /// The most reactions, counted per user and reaction, one message
  /// carries: the `REACTIONS` word of its `HIST` lines stays a few KiB.
  public static let maximumUsersPerMessage = 100

  /// Whether `word` may be a reaction: 1 to ``maximumBytes`` bytes of
  /// UTF-8 with no space, control character, `,` or `=` (which the
  /// `REACTIONS` word uses), not starting with `:` (which starts free
  /// text on a line).
  /// The reaction `bytes` spell, when they are one (``isValid(_:)``).
  static func word(utf8 bytes: UnsafeBufferPointer<UInt8>) -> String? {
    let word = String(decoding: bytes, as: UTF8.self)
    return isValid(word) ? word : nil
  }

  public static func isValid(_ word: String) -> Bool {
    let bytes = word.utf8
    guard !bytes.isEmpty, bytes.count <= maximumBytes, bytes.first != UInt8(ascii: ":") else {
      return false
    }
    return word.unicodeScalars.allSatisfy { scalar in
      !(scalar.properties.generalCategory == .control
        || scalar.properties.isWhitespace
        || scalar == "," || scalar == "=" || scalar == "\u{2028}" || scalar == "\u{2029}"
        || scalar.properties.generalCategory == .format && scalar != "\u{200D}"
          && scalar != "\u{FE0F}")
    }
  }
}

/// One reaction on a message and who put it there, in the order they did.
public struct ReactionTally: Equatable, Sendable {
  public var reaction: String
  public var users: [String]

  public init(reaction: String, users: [String]) {
    self.reaction = reaction
    self.users = users
  }

  /// The `REACTIONS` word of a `HIST` line (chatbroker(7), `HIST`):
  /// `<reaction>=<user>+<user>,<reaction>=<user>`, in the order the
  /// reactions were first put on the message.
  public static func word(_ tallies: [ReactionTally]) -> String {
    tallies.map { "\($0.reaction)=\($0.users.joined(separator: "+"))" }
      .joined(separator: ",")
  }

  /// The tallies of a `REACTIONS` word; nil when it is not one.
  public static func parse(_ word: String) -> [ReactionTally]? {
    var tallies: [ReactionTally] = []
    for part in word.split(separator: ",", omittingEmptySubsequences: false) {
      guard let equals = part.firstIndex(of: "=") else { return nil }
      let reaction = String(part[..<equals])
      let users = part[part.index(after: equals)...].split(separator: "+").map { String($0) }
      guard Reaction.isValid(reaction), !users.isEmpty else { return nil }
      tallies.append(ReactionTally(reaction: reaction, users: users))
    }
    return tallies.isEmpty ? nil : tallies
  }
}

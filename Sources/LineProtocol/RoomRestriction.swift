/// Who may read a private room (chatbroker(7), "Private rooms"): the
/// members of a Unix group, or only the users invited to it. Written as
/// one word, `group=<group>` or `invite`, in `JOIN`, `ACCESS` and the
/// journal alike, so the three read it one way.
public enum RoomRestriction: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The members of this Unix group, primary or supplementary, as NSS says.
  case group(String)
  /// Nobody but the room's creator and the users invited with `INVITE`.
  case invited

  /// `ACCESS <room> public` says a room is not private: that word.
  public static let publicWord = "public"

  /// Reads `group=<group>` or `invite` (any letter case for the keywords;
  /// the group name as the system spells it).
  public init?<S: StringProtocol>(_ word: S) {
    guard let restriction = withUTF8Bytes(word, RoomRestriction.init(utf8:)) else { return nil }
    self = restriction
  }

  public init?(utf8 word: UnsafeBufferPointer<UInt8>) {
    if word.equals(caseInsensitive: "INVITE") {
      self = .invited
      return
    }
    // `group=`: five letters, then `=`, then the name.
    guard word.count > 6, word.slice(0, 5).equals(caseInsensitive: "GROUP"),
      word[5] == UInt8(ascii: "="), case let name = word.slice(6, word.count),
      UserName.isValid(utf8: name)
    else { return nil }
    self = .group(string(name))
  }

  public var description: String {
    switch self {
    case .group(let name): "group=\(name)"
    case .invited: "invite"
    }
  }

  /// The group of a room private to a group.
  public var groupName: String? {
    if case .group(let name) = self { name } else { nil }
  }

  /// The word for a room's access: its restriction, or `public`.
  public static func word(_ restriction: RoomRestriction?) -> String {
    restriction?.description ?? publicWord
  }
}

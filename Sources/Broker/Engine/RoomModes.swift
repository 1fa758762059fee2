import LineProtocol

/// A room's modes and the users given power in it (chatbroker(7),
/// "Moderation", since 1.5): journaled as `mode` records, one change each.
/// The room's access (`+i`, private rooms) is its own (``RoomAccess``).
struct RoomModes: Equatable {
  /// `t`, `n`, `m` and `s`.
  var flags: Set<ModeChange.Letter> = []
  var key: String?
  var limit: Int?
  /// Made operators by `+o`, the user whose JOIN created the room first.
  var operators: Set<String> = []
  var voiced: Set<String> = []
  /// In the order set, with who set each and when (367).
  var bans: [RoomBan] = []
  /// Who changed the modes last, and when: what a compacted journal's
  /// records say.
  var changedBy = ""
  var changedAt = Timestamp(milliseconds: 0)

  /// The most masks a room's ban list holds (ISUPPORT `MAXLIST`).
  static let maximumBans = 64

  /// Whether a ban matches `user` (as `user!user@host`, any host: a
  /// login name is the same user on every connection).
  func bans(_ user: String) -> Bool {
    guard !bans.isEmpty else { return false }
    let lowered = user.lowercased()
    return bans.contains { ban in
      ModeChange.mask(ban.mask, matches: "\(lowered)!\(lowered)@*")
        || ModeChange.mask(ban.mask, matches: "\(lowered)!\(lowered)@localhost")
    }
  }

  var isEmpty: Bool {
    flags.isEmpty && key == nil && limit == nil && operators.isEmpty && voiced.isEmpty
      && bans.isEmpty
  }

  /// Applies one change, checked; returns whether it changed anything.
  mutating func apply(_ change: ModeChange, user: String, at time: Timestamp) -> Bool {
    let before = self
    switch change.letter {
    case .op:
      if let name = change.argument {
        if change.adding { operators.insert(name) } else { operators.remove(name) }
      }
    case .voice:
      if let name = change.argument {
        if change.adding { voiced.insert(name) } else { voiced.remove(name) }
      }
    case .ban:
      if let mask = change.argument {
        if change.adding {
          if !bans.contains(where: { $0.mask == mask }) {
            bans.append(RoomBan(mask: mask, user: user, time: time))
          }
        } else {
          bans.removeAll { $0.mask == mask }
        }
      }
    case .key:
      key = change.adding ? change.argument : nil
    case .limit:
      limit = change.adding ? change.argument.flatMap { Int($0) } : nil
    case .inviteOnly:
      break
    default:
      if change.adding { flags.insert(change.letter) } else { flags.remove(change.letter) }
    }
    guard self != before else { return false }
    changedBy = user
    changedAt = time
    return true
  }

  /// Every change that makes empty modes these: what a compacted journal
  /// writes, bans with who set them.
  var changes: [(change: ModeChange, user: String, time: Timestamp)] {
    var all: [(ModeChange, String, Timestamp)] = []
    for letter in ModeChange.Letter.flags where flags.contains(letter) {
      all.append((ModeChange(adding: true, letter: letter), changedBy, changedAt))
    }
    if let key {
      all.append((ModeChange(adding: true, letter: .key, argument: key), changedBy, changedAt))
    }
    if let limit {
      all.append(
        (ModeChange(adding: true, letter: .limit, argument: String(limit)), changedBy, changedAt))
    }
    for name in operators.sorted() {
      all.append((ModeChange(adding: true, letter: .op, argument: name), changedBy, changedAt))
    }
    for name in voiced.sorted() {
      all.append((ModeChange(adding: true, letter: .voice, argument: name), changedBy, changedAt))
    }
    for ban in bans {
      all.append((ModeChange(adding: true, letter: .ban, argument: ban.mask), ban.user, ban.time))
    }
    return all
  }
}

/// One mask of a room's ban list.
struct RoomBan: Equatable {
  var mask: String
  var user: String
  var time: Timestamp
}

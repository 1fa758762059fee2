import LineProtocol

/// Who may read a private room (chatbroker(7), "Private rooms"): its
/// creator, the users invited, and, for a room private to a group, the
/// group's members. Journaled as `access` and `invite` records.
struct RoomAccess: Equatable {
  var restriction: RoomRestriction
  /// Who made the room private: they may always read it, invite to it
  /// and change its access, whatever groups they are in.
  var creator: String
  var invited: Set<String> = []
  /// When it became private, or got this restriction.
  var since: Timestamp
}

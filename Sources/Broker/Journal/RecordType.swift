/// The `type` of a record, read from its bytes.
enum RecordType: CaseIterable {
  case journal, room, message, schedule, cancel, delivery, series, occurrence, reschedule, edit
  case member, leave, read, outbox, remote, stream, topic, redact, access, invite, skip, mode
  case webToken, webRevoke, seen, amend, react, unreact

  /// How the journal spells it.
  var name: StaticString {
    switch self {
    case .journal: "journal"
    case .room: "room"
    case .message: "message"
    case .schedule: "schedule"
    case .cancel: "cancel"
    case .delivery: "delivery"
    case .series: "series"
    case .occurrence: "occurrence"
    case .reschedule: "reschedule"
    case .edit: "edit"
    case .member: "member"
    case .leave: "leave"
    case .read: "read"
    case .outbox: "outbox"
    case .remote: "remote"
    case .stream: "stream"
    case .topic: "topic"
    case .redact: "redact"
    case .access: "access"
    case .invite: "invite"
    case .skip: "skip"
    case .mode: "mode"
    case .webToken: "web_token"
    case .webRevoke: "web_revoke"
    case .seen: "seen"
    case .amend: "amend"
    case .react: "react"
    case .unreact: "unreact"
    }
  }

  init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
    guard let type = Self.allCases.first(where: { bytes.equals($0.name) }) else { return nil }
    self = type
  }

  /// Every type's name, for the tables that must list them all (the fuzz
  /// dictionary's test).
  static var names: [String] { allCases.map { $0.name.description } }
}

import LineProtocol

/// The NATS subjects of shared rooms and what may arrive on them
/// (chatbroker(8), "FEDERATION"): the names both the link and its checks
/// use, and the reading of other hosts' messages, kept apart from libnats
/// so that the fuzzers reach them.
public enum FederationSubjects {
  /// `chat.room.<room>.<node>` for a room; for a direct message between
  /// two hosts, `chat.dm.<first>.<second>.<node>`, the two hosts' names in
  /// byte order: both directions of a conversation under one pair, which
  /// one consumer of each of the two hosts reads, and no other host's
  /// (``readers(node:)``). The publishing node is always the last token.
  public static func subject(for target: Target, node: String) -> String? {
    switch target {
    case .room(let room):
      return "chat.room.\(token(room)).\(node)"
    case .user(let name):
      guard let at = name.lastIndex(of: "@") else { return nil }
      let other = String(name[name.index(after: at)...])
      let (first, second) = other < node ? (other, node) : (node, other)
      return "chat.dm.\(first).\(second).\(node)"
    }
  }

  /// The subject a broker before 1.4 published a direct message under,
  /// `chat.dm.<to-node>.<node>`: still read, from a stream that holds it.
  static func legacySubject(for target: Target, node: String) -> String? {
    guard case .user(let name) = target, let at = name.lastIndex(of: "@") else { return nil }
    return "chat.dm.\(name[name.index(after: at)...]).\(node)"
  }

  /// The pull consumer of each reader of `node` and the one subject it
  /// is filtered on, which the NATS permissions pin (chatbroker(8),
  /// "FEDERATION"): every room; direct messages of pairs where `node`
  /// comes first; those where it comes second.
  public static func consumer(_ reader: StreamReader, node: String) -> (
    name: String, filter: String
  ) {
    switch reader {
    case .rooms: (node, "chat.room.>")
    case .dmFirst: ("\(node)-dm1", "chat.dm.\(node).>")
    case .dmSecond: ("\(node)-dm2", "chat.dm.*.\(node).*")
    }
  }

  /// The reader of `node` whose consumer reads back what `node` publishes
  /// to `target` (``subject(for:node:)``): the rooms' for a room; for a
  /// direct message, the one filtered on the pairs where `node` comes
  /// where it does in this one.
  public static func reader(for target: Target, node: String) -> StreamReader? {
    switch target {
    case .room: return .rooms
    case .user(let name):
      guard let at = name.lastIndex(of: "@") else { return nil }
      return String(name[name.index(after: at)...]) < node ? .dmSecond : .dmFirst
    }
  }

  /// The subjects `node` publishes under, as filters: rooms (and direct
  /// messages before 1.4), and direct messages.
  public static func ownSubjects(node: String) -> [String] {
    ["chat.*.*.\(node)", "chat.dm.*.*.\(node)"]
  }

  /// A host's announcement of its members of `room` (chatbroker(8),
  /// "Presence"): outside the stream's `chat.>`, plain NATS only.
  public static func presence(for room: RoomName, node: String) -> String {
    "chatpresence.\(token(room)).\(node)"
  }

  /// The largest announcement read; a longer one is ignored.
  public static let presenceBytesLimit = 65_536

  /// A room name as one subject token: room names may hold dots, which
  /// separate tokens; `~` never appears in one.
  static func token(_ room: RoomName) -> String {
    room.description.dropFirst().replacingOccurrences(of: ".", with: "~")
  }

  /// A message of the stream as a line, or nil when it is not one: its
  /// payload must be an outbox record of the very node whose subject it
  /// was published under, which NATS permissions make the only node able
  /// to publish there.
  public static func line(subject: String, payload: UnsafeRawBufferPointer, sequence: UInt64)
    -> StreamLine?
  {
    guard let node = subject.split(separator: ".").last.map(String.init), !payload.isEmpty else {
      return nil
    }
    var bytes = [UInt8](payload)
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    let record = try? bytes.withUnsafeBufferPointer { buffer in
      try JournalRecord(jsonLine: buffer)
    }
    guard case .outbox(let line) = record, line.node == node,
      subject == Self.subject(for: line.target, node: node)
        || subject == legacySubject(for: line.target, node: node)
    else { return nil }
    return StreamLine(
      position: StreamPosition(sequence: sequence, node: node, origin: line.id),
      target: line.target, user: line.author, time: line.time, text: line.text,
      series: line.series)
  }

  /// An announcement (`#ops alice bob`) as (room, node, users), or nil
  /// when it is not one: its room must be the one its subject names, and
  /// the node is the subject's last token. The engine checks the names
  /// (``Engine/remotePresence(room:node:users:)``).
  public static func announcement(subject: String, payload: UnsafeRawBufferPointer)
    -> (room: RoomName, node: String, users: [String])?
  {
    guard let node = subject.split(separator: ".").last.map(String.init), !payload.isEmpty,
      payload.count <= presenceBytesLimit
    else { return nil }
    let words = String(decoding: payload, as: UTF8.self).split(separator: " ").map(String.init)
    guard let first = words.first, let room = RoomName(first),
      subject == presence(for: room, node: node)
    else { return nil }
    return (room, node, Array(words.dropFirst()))
  }
}

extension LineCodec {
  /// The line a client sends for `request` (chatbroker(7), "Requests"), LF
  /// included: the one encoder of requests, so that every client writes
  /// what ``RequestParser`` reads back as the same request (a round-trip
  /// test over every verb holds the two together).
  ///
  /// The verb is written in capitals, names as the broker spells them,
  /// `HISTORY` always with its count, and a text always after ` :`, so a
  /// text that starts with a colon keeps it (chatbroker(7), "Names and
  /// values": the parser removes exactly one). Only requests the line
  /// protocol can say are written (see ``Request/hasLine``); asking for
  /// the line of another is a programming error.
  public static func encode(_ request: Request) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(48 + (request.text?.utf8.count ?? 0))
    append(request, to: &bytes)
    return bytes
  }

  /// The same line without its LF, for callers that queue text.
  public static func line(_ request: Request) -> String {
    var bytes = encode(request)
    bytes.removeLast()
    return String(decoding: bytes, as: UTF8.self)
  }

  /// How many bytes of text fit into `request` (a text-carrying one, its
  /// own text not counted) within a line of `maximumLineBytes`, LF not
  /// counted (chatbroker(7), "Transport and framing": 4096).
  public static func textCapacity(of request: Request, maximumLineBytes: Int = 4096) -> Int {
    maximumLineBytes - (encode(request).count - 1 - (request.text?.utf8.count ?? 0))
  }

  /// Appends the line of `request`, LF included, to `bytes`: for a client
  /// that sends many lines at once, with no array or string per line.
  public static func append(_ request: Request, to bytes: inout [UInt8]) {
    func word(_ text: String) {
      bytes.append(UInt8(ascii: " "))
      bytes.append(contentsOf: text.utf8)
    }
    func id(_ id: MessageID) {
      bytes.append(UInt8(ascii: " "))
      id.appendDescription(to: &bytes)
    }
    func text(_ text: String) {
      bytes.append(UInt8(ascii: " "))
      bytes.append(UInt8(ascii: ":"))
      bytes.append(contentsOf: text.utf8)
    }
    bytes.append(contentsOf: request.verb.rawValue.utf8)
    switch request {
    case .join(let room), .part(let room, nil), .who(let room), .topic(let room),
      .access(let room), .mode(let room):
      word(room.description)
    case .part(let room, let reason?):
      word(room.description)
      text(reason)
    case .quit(let reason?):
      text(reason)
    case .joinKeyed(let room, let key):
      word(room.description)
      word("key=" + key)
    case .setMode(let room, let changes):
      word(room.description)
      for piece in ModeChange.summary(changes) { word(piece) }
    case .bans(let room):
      word(room.description)
      word("+b")
    case .kick(let room, let user, let reason):
      word(room.description)
      word(user)
      if let reason { text(reason) }
    case .joinPrivate(let room, let restriction):
      word(room.description)
      word(restriction.description)
    case .setAccess(let room, let restriction):
      word(room.description)
      word(RoomRestriction.word(restriction))
    case .invite(let room, let user):
      word(room.description)
      word(user)
    case .setTopic(let room, let topic):
      word(room.description)
      text(topic)
    case .away(let away):
      if let away { text(away) }
    case .say(let target, let message) where MessageBlock.isBlock(message),
      .block(let target, let message):
      word(target.description)
      text(MessageBlock.escaped(message))
    case .say(let target, let message), .action(let target, let message),
      .notice(let target, let message):
      word(target.description)
      text(message)
    case .reply(let target, let id, let message), .amend(let target, let id, let message):
      word(target.description)
      word(id.description)
      text(message)
    case .react(let target, let id, let reaction, _):
      word(target.description)
      word(id.description)
      word(reaction)
    case .sayAt(let target, let when, let message):
      word(target.description)
      word(when)
      text(message)
    case .sayEvery(let target, let rule, let message):
      word(target.description)
      word(rule)
      text(message)
    case .thread(let target, let id, let count):
      word(target.description)
      word(id.description)
      word(String(count))
    case .history(let target, let count, let anchor):
      word(target.description)
      word(String(count))
      switch anchor {
      case nil: break
      case .before(let anchor):
        word("BEFORE")
        id(anchor)
      case .after(let anchor):
        word("AFTER")
        id(anchor)
      default: preconditionFailure("\(request) is the IRC gateway's; it has no line")
      }
    case .search(let target, let count, let before, let words):
      word(target?.description ?? "*")
      word(String(count))
      if let before {
        word("BEFORE")
        id(before)
      }
      text(words)
    case .conversations, .help, .quit:
      break
    case .markRead(let target, let message), .redact(let target, let message):
      word(target.description)
      id(message)
    case .markReadAt(let target, let time):
      word(target.description)
      word(time.description)
    case .readMarker(let target):
      word(target.description)
    case .scheduled(let target):
      if let target { word(target.description) }
    case .upcoming(let message, let count):
      id(message)
      word("NEXT")
      word(String(count))
    case .cancel(let message):
      id(message)
    case .reschedule(let message, let when):
      id(message)
      word(when)
    case .edit(let message, let replacement):
      id(message)
      text(replacement)
    case .skip(let message, let occurrence):
      id(message)
      word(occurrence)
    case .replace(let message, let occurrence, let when, let replacement):
      id(message)
      word(occurrence)
      word(when)
      text(replacement)
    case .rooms(let after):
      if let after {
        word("AFTER")
        word(after.description)
      }
    case .ping(let token):
      if let token { word(token) }
    case .web(let revoke):
      if revoke { word("REVOKE") }
    case .tagged, .signal:
      preconditionFailure("\(request) holds client tags; the line protocol has no form for them")
    }
    bytes.append(UInt8(ascii: "\n"))
  }
}

extension Request {
  /// Whether the line protocol can say this request: all but those that
  /// hold what it has no words for, client-only tags and the history
  /// anchors by time or around a point (which IRC's `CHATHISTORY` asks),
  /// which the request encoder of ``LineCodec`` does not write.
  public var hasLine: Bool {
    switch self {
    case .tagged, .signal: false
    case .history(_, _, let anchor):
      switch anchor {
      case nil, .before, .after: true
      default: false
      }
    default: true
    }
  }
}

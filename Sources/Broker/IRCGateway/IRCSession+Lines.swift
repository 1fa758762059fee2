import Foundation
import IRCProtocol
import LineProtocol

/// The pieces IRC lines are built of: targets and sources, tags, numerics,
/// notices, and texts made plain.
extension IRCSession {

  // MARK: - Helpers

  /// Room names are case-insensitive on IRC (CASEMAPPING=ascii) and
  /// lower-case on chatbroker.
  func room(_ name: String) -> RoomName? {
    RoomName(name.lowercased())
  }

  func noSuchChannel(_ name: String) -> Action {
    numeric(
      .noSuchChannel,
      [name, "Not a room name: use # then 1 to 32 of a-z 0-9 . _ - (chatbroker(7))"])
  }

  /// The IRC target of a broker target: the room, or for a direct message
  /// the recipient (this client, when someone else wrote it).
  func shown(_ target: Target, author: String) -> String {
    switch target {
    case .room(let room): room.description
    case .user(let other): author == nick ? other : nick
    }
  }

  /// A message's tags as this client reads them (`@batch=...;time=...;msgid=... `,
  /// each only when negotiated), written as bytes, with where the msgid
  /// begins: the further pieces of a long text carry the tags before it.
  /// Every line of a history has them; nothing in them needs escaping.
  /// `series`: with message-tags, `chatbroker/series=<id>` names the series
  /// an occurrence came from (chatbroker(7), "IRC").
  func tagBytes(
    batch: String?, time: Timestamp, id: MessageID, clientTags: ClientTags = ClientTags(),
    series: MessageID? = nil
  ) -> (bytes: [UInt8], msgidAt: Int) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    func start(_ key: StaticString) {
      bytes.append(bytes.isEmpty ? UInt8(ascii: "@") : UInt8(ascii: ";"))
      bytes.append(
        contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
      bytes.append(UInt8(ascii: "="))
    }
    // Client-only tags, already clean (``clientTags(_:)``), with message-tags.
    if !clientTags.isEmpty && capabilities.contains(.messageTags) {
      bytes.append(UInt8(ascii: "@"))
      bytes.append(contentsOf: Self.tagText(clientTags).utf8)
    }
    if let batch {
      start("batch")
      bytes.append(contentsOf: batch.utf8)
    }
    if capabilities.sendsTime {
      start("time")
      time.appendRFC3339(to: &bytes)
    }
    if let series, capabilities.contains(.messageTags) {
      start("chatbroker/series")
      series.appendDescription(to: &bytes)
    }
    let msgidAt = bytes.count
    if capabilities.sendsMsgid {
      start("msgid")
      id.appendDescription(to: &bytes)
    }
    if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
    return (bytes, msgidAt)
  }

  /// `PRIVMSG` lines, the text split to fit 512 bytes; only the first
  /// piece carries the msgid, as each line is one message to a client.
  /// A text of several lines is a block (``blockLines(source:to:text:id:tags:outerBatch:command:)``).
  func privmsgLines(
    from author: String, to target: String, text: String, id: MessageID, time: Timestamp,
    batch: String? = nil, command: String = "PRIVMSG", clientTags: ClientTags = ClientTags(),
    action: Bool = false, series: MessageID? = nil, replyTo: MessageID? = nil
  ) -> [UInt8] {
    let tags = tagBytes(
      batch: batch, time: time, id: id, clientTags: Self.clientTags(clientTags, replyTo: replyTo),
      series: series)
    let source = Self.source(author, serverName: serverName)
    if MessageBlock.isBlock(text) {
      return blockLines(
        source: source, to: target, text: text, id: id, tags: tags, outerBatch: batch,
        command: command)
    }
    var later: [UInt8] = []
    if text.utf8.count > IRCText.room(source: source, command: command, target: target) {
      later = Array(tags.bytes[..<tags.msgidAt])
      if !later.isEmpty { later.append(UInt8(ascii: " ")) }
    }
    return IRCMessage.textLines(
      tags: tags.bytes, laterTags: later, source: source, command: command, target: target,
      text: text, action: action)
  }

  /// A line its author changed (`AMEND`; chatbroker(7), IRC), for clients
  /// that cannot show an edit: the new text as a new PRIVMSG that starts
  /// with `(edited) `, with message-tags as a reply to the line it
  /// replaces (`+draft/reply=<id>`), and without a msgid of its own, which
  /// a client could take for the original's.
  func amendedLines(from author: String, to target: String, id: MessageID, text: String)
    -> [UInt8]
  {
    var tags: [UInt8] = []
    if capabilities.contains(.messageTags) {
      tags = Array("@\(Self.replyTag)=\(id.description) ".utf8)
    }
    return IRCMessage.textLines(
      tags: tags, laterTags: tags, source: Self.source(author, serverName: serverName),
      command: "PRIVMSG", target: target, text: Self.editedMarker + text)
  }

  /// What starts the new text of a changed line on IRC (README, IRC).
  static let editedMarker = "(edited) "

  /// A TAGMSG line for a client with message-tags: the client-only tags,
  /// then `time` (with server-time, when given).
  func tagmsgLine(from author: String, to target: String, time: Timestamp?, tags: ClientTags)
    -> [UInt8]
  {
    var bytes: [UInt8] = []
    if !tags.isEmpty {
      bytes.append(UInt8(ascii: "@"))
      bytes.append(contentsOf: Self.tagText(tags).utf8)
    }
    if let time, capabilities.sendsTime {
      bytes.append(contentsOf: (bytes.isEmpty ? "@time=" : ";time=").utf8)
      time.appendRFC3339(to: &bytes)
    }
    if !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
    return bytes
      + IRCMessage(source: Self.source(author, serverName: serverName), "TAGMSG", [target])
      .encoded()
  }

  /// A client's client-only tags (`+key[=value]`, IRCv3 message-tags) as
  /// they are relayed: other tags dropped, a key of other than letters,
  /// digits, `-`, `.`, `/` and `+` dropped, control characters in values
  /// replaced by U+FFFD (escaped again when written, ``tagText(_:)``).
  static func clientTags(_ tags: [IRCTag]) -> ClientTags {
    var kept: [ClientTags.Tag] = []
    for tag in tags where tag.key.hasPrefix("+") && tag.key.count > 1 {
      let valid = tag.key.unicodeScalars.allSatisfy {
        $0.isASCII
          && (CharacterSet.alphanumerics.contains($0) || "-./+".unicodeScalars.contains($0))
      }
      guard valid else { continue }
      let value = tag.value.map {
        IRCText.replacingControls(in: $0, spacesToo: false, tabToo: true)
      }
      kept.append(ClientTags.Tag(tag.key, value))
    }
    return ClientTags(kept)
  }

  /// A message's client tags as IRC clients get them: a reply the broker
  /// keeps (chatbroker(7), `REPLY`) is IRCv3's `+draft/reply=<msgid>`,
  /// first, in place of any the sender's client wrote.
  static func clientTags(_ tags: ClientTags, replyTo: MessageID?) -> ClientTags {
    guard let replyTo else { return tags }
    return ClientTags(
      [ClientTags.Tag(replyTag, replyTo.description)] + tags.tags.filter { $0.key != replyTag })
  }

  /// IRCv3's client tag for a reply (draft/reply).
  static let replyTag = "+draft/reply"
  /// IRCv3's client tags for a reaction and for taking it off (draft/react).
  static let reactTag = "+draft/react"
  static let unreactTag = "+draft/unreact"

  /// The reaction a TAGMSG's tags put on a message or take off, when they
  /// name one the line protocol can keep (chatbroker(7), `REACT`).
  static func reaction(in tags: ClientTags) -> (MessageID, String, removed: Bool)? {
    guard let value = tags.tags.first(where: { $0.key == replyTag })?.value,
      let id = MessageID(value)
    else { return nil }
    for tag in tags.tags where tag.key == reactTag || tag.key == unreactTag {
      guard let reaction = tag.value, Reaction.isValid(reaction) else { return nil }
      return (id, reaction, tag.key == unreactTag)
    }
    return nil
  }

  /// A reaction (`REACT`) as IRC clients with message-tags get it: a
  /// TAGMSG with `+draft/react` (or `+draft/unreact`) and `+draft/reply`.
  func reactionLine(
    from author: String, to target: String, id: MessageID, reaction: String, removed: Bool
  ) -> [UInt8] {
    guard capabilities.contains(.messageTags) else { return [] }
    let tags = ClientTags([
      ClientTags.Tag(removed ? Self.unreactTag : Self.reactTag, reaction),
      ClientTags.Tag(Self.replyTag, id.description),
    ])
    return tagmsgLine(from: author, to: target, time: nil, tags: tags)
  }

  /// Client tags as they are written after `@`, values escaped; "" for none.
  static func tagText(_ clientTags: ClientTags) -> String {
    tagText(clientTags.tags.map { IRCTag($0.key, $0.value) })
  }

  /// Tags as they are written after `@`, values escaped; "" for none.
  static func tagText(_ tags: [IRCTag]) -> String {
    guard !tags.isEmpty else { return "" }
    // "@tags X\r\n": the tags alone.
    let bytes = IRCMessage(tags: tags, "X").encoded().dropFirst().prefix { $0 != UInt8(ascii: " ") }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The source of a line by `author`: `alice!alice@host`; a user of
  /// another host, `alice@h2` on the line protocol, is `alice|h2!alice@h2`,
  /// since a nick cannot hold `@` (chatbroker(8), "FEDERATION").
  static func source(_ author: String, serverName: String) -> String {
    guard let at = author.lastIndex(of: "@") else { return "\(author)!\(author)@\(serverName)" }
    let user = author[..<at]
    let node = author[author.index(after: at)...]
    return "\(user)|\(node)!\(user)@\(node)"
  }

  /// A member's nick as NAMES shows it with IRCv3 userhost-in-names, the
  /// mask its lines come from (``source(_:serverName:)``):
  /// `alice!alice@host`, and for `alice|h2`, a user of another host,
  /// `alice|h2!alice@h2`.
  static func userhost(ofNick nick: String, serverName: String) -> String {
    guard let bar = nick.lastIndex(of: "|") else { return "\(nick)!\(nick)@\(serverName)" }
    return "\(nick)!\(nick[..<bar])@\(nick[nick.index(after: bar)...])"
  }

  /// The nick of `author`: a user of another host, `alice@h2`, is
  /// `alice|h2`.
  static func nickname(_ author: String) -> String {
    author.replacingOccurrences(of: "@", with: "|")
  }

  func numeric(_ numeric: Numeric, _ parameters: [String], trailing: Bool = true)
    -> Action
  {
    reply(
      source: serverName, numeric.rawValue, [registered ? nick : "*"] + parameters,
      trailing: trailing)
  }

  func reply(
    source: String, _ command: String, _ parameters: [String], trailing: Bool = true
  ) -> Action {
    .reply(IRCMessage(source: source, command, parameters).cleaned().encoded(trailing: trailing))
  }

  /// A NOTICE from the service nick, split into lines that fit 512 bytes
  /// (a pending message's text can be 4 KB).
  func serviceNotice(_ text: String) -> Action {
    let source = "\(Self.serviceNick)!service@\(serverName)"
    let room = IRCText.room(source: source, command: "NOTICE", target: nick)
    return .reply(
      IRCText.split(text, maximumBytes: room).flatMap {
        reply(source: source, "NOTICE", [nick, $0]).bytes
      })
  }

  func clock(_ time: Timestamp) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
    let parts = calendar.dateComponents([.hour, .minute], from: date)
    return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
  }

  /// IRC formatting (bold, colours, reset...) taken out, and a CTCP ACTION
  /// written as `/me`: chatbroker texts hold no control characters.
  static func plainText(_ text: String) -> String {
    // Most texts hold no control character at all, so nothing to take
    // out: they are not copied scalar by scalar (a tenth of the serving
    // thread per PRIVMSG in chatbench fanout --compare-irc).
    guard text.utf8.contains(where: { $0 < 0x20 }) else { return text }
    var text = Substring(text)
    var action = false
    if text.hasPrefix("\u{01}ACTION ") {
      action = true
      text = text.dropFirst(8)
      if text.hasSuffix("\u{01}") { text = text.dropLast() }
    }
    var result = ""
    var scalars = text.unicodeScalars[...]
    while let scalar = scalars.popFirst() {
      switch scalar.value {
      case 0x02, 0x0F, 0x11, 0x16, 0x1D, 0x1E, 0x1F: continue
      case 0x03:
        // ^C, then up to two digits, optionally a comma and two more.
        var digits = 0
        while digits < 2, let next = scalars.first, ("0"..."9").contains(next) {
          scalars.removeFirst()
          digits += 1
        }
        if digits > 0, scalars.first == ",",
          scalars.dropFirst().first.map({ ("0"..."9").contains($0) }) == true
        {
          scalars.removeFirst()
          var more = 0
          while more < 2, let next = scalars.first, ("0"..."9").contains(next) {
            scalars.removeFirst()
            more += 1
          }
        }
      default: result.unicodeScalars.append(scalar)
      }
    }
    return action ? "/me " + result : result
  }
}

extension WireAction {
  /// The bytes of a reply, for building longer answers out of several.
  var bytes: [UInt8] {
    if case .reply(let bytes, _) = self { return bytes }
    return []
  }
}

/// What each part of a round makes, takes away and looks at.
extension PrivacyScenario {
  // MARK: - Looking

  /// Every request that shows something of a room, on each session:
  /// SEARCH, HISTORY, WHO, TOPIC, MODE, ACCESS, ROOMS and CONVERSATIONS on
  /// the line protocol; NAMES, WHO (and WHOX), TOPIC, MODE, LIST, WHOIS and
  /// CHATHISTORY on IRC. In a seeded order. None of them joins anything.
  func look(
    at room: String, token: String?, whois: String?, on sessions: [PrivacySession?]
  ) {
    // A reaction on the line, by id (since 1.6): answered as for a line
    // that is not there unless the user may read it (chatbroker(7), REACT).
    let id = token.flatMap { token in oracle.model { $0.id(of: token) } }
    for session in sessions.compactMap({ $0 }) {
      var lines: [String]
      switch session.wire {
      case .line:
        lines = [
          "HISTORY \(room) 20", "WHO \(room)", "TOPIC \(room)", "MODE \(room)", "MODE \(room) +b",
          "ACCESS \(room)", "ROOMS", "CONVERSATIONS",
        ]
        if let token { lines += ["SEARCH * \(token)", "SEARCH \(room) \(token)"] }
        if let id { lines.append("REACT \(room) \(id) 👀") }
      case .irc:
        lines = [
          "NAMES \(room)", "WHO \(room)", "WHO \(room) %tcnuf,7", "TOPIC \(room)", "MODE \(room)",
          "MODE \(room) b", "LIST", "LIST \(room)", "CHATHISTORY LATEST \(room) * 20",
          "CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2999-01-01T00:00:00.000Z 50",
        ]
        if let whois { lines.append("WHOIS \(whois)") }
        if let id { lines.append("@+draft/react=👀;+draft/reply=\(id) TAGMSG \(room)") }
      }
      lines.shuffle(using: &random)
      for line in lines where transport.isOpen(session) { ask(session, line) }
    }
  }

  // MARK: - +s

  struct SecretRoom {
    var name: String
    var creator: String
    var outsider: String
    var token: String?
  }

  /// A public room with a topic and lines, a member besides its creator
  /// now and then, made `+s`; then one more line.
  func makeSecretRoom() -> SecretRoom? {
    guard let creator = pick(makers), let outsider = pickPlayer(except: [creator]),
      let room = create(.everyone, by: creator)
    else { return nil }
    let session = main(creator, .line)
    let topic = newToken()
    let line = "TOPIC \(room) :\(topic) what this room is about"
    oracle.model { $0.token(topic, in: .room(room), by: creator, request: line, at: now) }
    ask(session, line)
    var token = post(main(creator, randomWire()), to: room, in: .room(room))
    if random.chance(50), let member = pick(players, except: [creator, outsider]) {
      let wire = randomWire()
      join(main(member, wire), room)
      post(main(member, wire), to: room, in: .room(room))
    }
    guard change(session, "MODE \(room) +s") != nil else { return nil }
    oracle.model { $0.secret(room, at: now) }
    if random.chance(50) { token = post(session, to: room, in: .room(room)) }
    return SecretRoom(name: room, creator: creator, outsider: outsider, token: token)
  }

  /// Who never joined the secret room looks for it, its members, topic and
  /// lines, from the sessions they have and from new ones.
  func lookAsOutsider(_ secret: SecretRoom) {
    let sessions = [
      main(secret.outsider, .line), main(secret.outsider, .irc),
      random.chance(50) ? fresh(secret.outsider, randomWire()) : nil,
    ]
    look(at: secret.name, token: secret.token, whois: secret.creator, on: sessions)
  }

  // MARK: - Kicked and banned invitees

  struct InvitedRoom {
    var name: String
    var creator: String
    var guest: String
  }

  /// A room private to the invited, a guest invited who joins it on both
  /// wires, and lines of both.
  func makeInvitedRoom() -> InvitedRoom? {
    guard let creator = pick(makers), let guest = pickPlayer(except: [creator]),
      let room = create(.invited, by: creator), invite(guest, to: room, by: creator)
    else { return nil }
    join(main(guest, .line), room)
    join(main(guest, .irc), room)
    post(main(creator, randomWire()), to: room, in: .room(room))
    post(main(guest, randomWire()), to: room, in: .room(room))
    return InvitedRoom(name: room, creator: creator, guest: guest)
  }

  /// Its creator, or root, kicks the guest; then a line is posted. The
  /// token of that line, once the KICK was acknowledged.
  func kick(_ room: InvitedRoom) -> String? {
    let kicker = superuser.flatMap { random.chance(30) ? $0 : nil } ?? room.creator
    guard let sent = change(main(kicker, .line), "KICK \(room.name) \(room.guest) :out")
    else { return nil }
    oracle.model { $0.remove(room.guest, from: room.name, by: .kick, sentAt: sent, at: now) }
    lastKick = (room.guest, room.name)
    return post(main(room.creator, .line), to: room.name, in: .room(room.name))
  }

  /// The kicked guest's sessions look; then new sessions come back as a
  /// reconnecting client does (chatsh(1) joins its rooms again, an IRC
  /// client is joined to its rooms when it registers) and look too.
  func lookAfterKick(_ room: InvitedRoom, token: String) {
    let line = fresh(room.guest, .line)
    let irc = fresh(room.guest, .irc)
    join(line, room.name)
    join(irc, room.name)
    look(
      at: room.name, token: token, whois: room.creator,
      on: [main(room.guest, .line), main(room.guest, .irc), line, irc])
  }

  /// Its creator bans the guest (`+b`), whose sessions stay open; then a
  /// line is posted. The token of that line.
  func ban(_ room: InvitedRoom) -> String? {
    guard let sent = change(main(room.creator, .line), "MODE \(room.name) +b \(room.guest)")
    else { return nil }
    oracle.model { $0.remove(room.guest, from: room.name, by: .ban, sentAt: sent, at: now) }
    let token = post(main(room.creator, .line), to: room.name, in: .room(room.name))
    if let token { lastBan = (room.guest, room.name, token) }
    return token
  }

  /// The banned guest looks, from the sessions that were in the room and
  /// from a new one.
  func lookAfterBan(_ room: InvitedRoom, token: String) {
    look(
      at: room.name, token: token, whois: room.creator,
      on: [main(room.guest, .line), main(room.guest, .irc), fresh(room.guest, randomWire())])
  }

  // MARK: - Unix groups

  struct GroupRoom {
    var name: String
    var group: String
    var creator: String
    /// The session of the member to be taken out, opened before.
    var old: PrivacySession?
  }

  /// A group of the run's own with a creator and the member to be taken
  /// out, the room private to it, and a line; the member reads it with a
  /// session of its own, which joins it every other round (when it does
  /// not, the room is not among the member's rooms, and a new IRC session
  /// of theirs joins nothing when it registers).
  func makeGroupRoom() -> GroupRoom? {
    let member = quietUser
    guard let creator = pick(creators, except: [member]) else { return nil }
    let group = newGroup()
    guard transport.makeGroup(group) else { return nil }
    for user in [creator, member] {
      oracle.model { $0.joinGroup(user, group, at: now) }
      guard transport.setMember(user, of: group, true) else { return nil }
    }
    guard let room = create(.group(group), by: creator) else { return nil }
    let old = fresh(member, .line)
    if rounds.isMultiple(of: 2) { join(old, room) }
    post(main(creator, randomWire()), to: room, in: .room(room))
    ask(old, "HISTORY \(room) 5")
    return GroupRoom(name: room, group: group, creator: creator, old: old)
  }

  /// `gpasswd -d` of the member, and a line posted after it. The first
  /// time, when the run lasts long enough, the member's old session is
  /// kept to look again once the staleness bound has passed.
  func takeOutOfGroup(_ room: GroupRoom) -> String? {
    guard transport.setMember(quietUser, of: room.group, false) else { return nil }
    let removed = now
    oracle.model { $0.leaveGroup(quietUser, room.group, at: removed) }
    let bound = oracle.model { $0.staleness }
    if staleWatch == nil, let old = room.old, removed + bound + 20 < runsUntil {
      staleWatch = StaleWatch(
        session: old, room: room.name, creator: room.creator, due: removed + bound + 1)
    }
    return post(main(room.creator, .line), to: room.name, in: .room(room.name))
  }

  /// New sessions of the member taken out look, while the old one stays
  /// open: first on the line protocol, then on IRC (whose registration
  /// joins the user's rooms), then a JOIN that must be refused.
  func lookAfterGroupChange(_ room: GroupRoom, token: String?) {
    look(at: room.name, token: token, whois: room.creator, on: [fresh(quietUser, .line)])
    look(at: room.name, token: token, whois: room.creator, on: [fresh(quietUser, .irc)])
    join(fresh(quietUser, randomWire()), room.name)
  }

  /// Past the staleness bound: a new line in the group's room, and the
  /// member's session opened before its removal looks. Whether it did.
  @discardableResult
  public func checkStaleWatch() -> Bool {
    guard let watch = staleWatch, now >= watch.due else { return false }
    staleWatch = nil
    defer { transport.close(watch.session) }
    guard transport.isOpen(watch.session) else { return false }
    let token = post(main(watch.creator, .line), to: watch.room, in: .room(watch.room))
    look(at: watch.room, token: token, whois: watch.creator, on: [watch.session])
    transport.pass(0.2)
    return transport.isOpen(watch.session)
  }

  // MARK: - Direct messages

  struct Direct {
    var parties: (String, String)
    var third: String
    var tokens: [String]
  }

  /// A direct message each way between two users (root may be one).
  func sendDirect() -> Direct? {
    guard let one = pick(everyone), let other = pick(everyone, except: [one]),
      let third = pick(everyone, except: [one, other])
    else { return nil }
    let conversation = PrivacyModel.Conversation.between(one, other)
    let tokens = [
      post(main(one, randomWire()), to: other, in: conversation),
      post(main(other, randomWire()), to: one, in: conversation),
    ].compactMap { $0 }
    return Direct(parties: (one, other), third: third, tokens: tokens)
  }

  /// A third user (root too) looks for the direct messages.
  func lookAsThirdUser(_ direct: Direct) {
    let (one, other) = direct.parties
    var lines = ["HISTORY @\(one) 20", "HISTORY @\(other) 20", "CONVERSATIONS"]
    lines += direct.tokens.map { "SEARCH * \($0)" }
    for line in lines { ask(main(direct.third, .line), line) }
    for line in [
      "CHATHISTORY LATEST \(one) * 20", "CHATHISTORY LATEST \(other) * 20",
      "CHATHISTORY TARGETS timestamp=2000-01-01T00:00:00.000Z timestamp=2999-01-01T00:00:00.000Z 50",
    ] {
      ask(main(direct.third, .irc), line)
    }
  }

  // MARK: - REDACT

  struct TakenBack {
    var room: String
    var author: String
    var reader: String
    var token: String
    var id: String
  }

  /// A public room, a line in it, and a reader in the room.
  func postToTakeBack() -> TakenBack? {
    guard let author = pick(makers),
      let reader = pick(players + (superuser.map { [$0] } ?? []), except: [author]),
      let room = create(.everyone, by: author)
    else { return nil }
    join(main(reader, randomWire()), room)
    guard let token = post(main(author, .line), to: room, in: .room(room)),
      let id = oracle.model({ $0.id(of: token) })
    else { return nil }
    return TakenBack(room: room, author: author, reader: reader, token: token, id: id)
  }

  func redact(_ line: TakenBack) -> Bool {
    guard change(main(line.author, .line), "REDACT \(line.room) \(line.id)") != nil else {
      return false
    }
    oracle.model { $0.redacted(line.token, at: now) }
    return true
  }

  /// Its author and the reader look for the line; a new IRC session
  /// without CHATHISTORY joins, for the backlog.
  func lookAfterRedaction(_ line: TakenBack) {
    for user in [line.author, line.reader] {
      look(at: line.room, token: line.token, whois: nil, on: [main(user, .line)])
      ask(main(user, .irc), "CHATHISTORY LATEST \(line.room) * 20")
    }
    let backlog = transport.open(line.reader, .irc, capabilities: ["server-time"])
    join(backlog, line.room)
    if let backlog { transport.close(backlog) }
  }
}

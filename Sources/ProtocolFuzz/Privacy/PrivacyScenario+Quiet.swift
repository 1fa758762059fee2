/// What the scenario looks at while nobody else talks to the broker
/// (``PrivacyTransport/quiet(restart:)``): after a restart, whether a kick
/// and a ban still hold; and what IRC's LUSERS counts, which only a quiet
/// broker lets compare with what LIST shows.
extension PrivacyScenario {
  /// After a restart (or a quiet moment): the latest kicked guest comes
  /// back as a reconnecting client does, the latest banned one looks, and
  /// LUSERS is counted.
  public func lookWhileQuiet() {
    forgetSessions()
    followRestarts()
    countRooms()
    if let (guest, room) = lastKick {
      let line = fresh(guest, .line)
      ask(line, "CONVERSATIONS")
      join(line, room)
      let irc = fresh(guest, .irc)
      join(irc, room)
      look(at: room, token: nil, whois: nil, on: [line, irc])
    }
    if let (guest, room, token) = lastBan {
      look(
        at: room, token: token, whois: nil, on: [fresh(guest, .line), fresh(guest, .irc)])
    }
    closeFresh()
  }

  /// IRC LUSERS (254) counts only the rooms the asker may see (chatbroker(7),
  /// "IRC"): with nobody else on the broker, the user from whom most of
  /// the scenario's rooms are hidden lists the rooms (LIST), counts them
  /// (LUSERS) and lists them again. A count above two equal lists counts
  /// rooms the user may not see: each private or secret room made or
  /// dropped would show.
  func countRooms() {
    let moment = now
    let hidden = users.map { user in
      (user, oracle.model { $0.hiddenRooms(from: user, at: moment) })
    }
    guard let (user, rooms) = hidden.max(by: { $0.1.count < $1.1.count }), !rooms.isEmpty,
      let session = fresh(user, .irc)
    else { return }
    let before = ask(session, "LIST")
    let counted = ask(session, "LUSERS")
    let after = ask(session, "LIST")
    guard before.answered, counted.answered, after.answered else { return }
    let listed = before.lines.filter { Self.numeric($0) == "322" }.count
    let again = after.lines.filter { Self.numeric($0) == "322" }.count
    guard listed == again,
      let line = counted.lines.first(where: { Self.numeric($0) == "254" }),
      let parameters = IRCShape.parse(Array(line.utf8))?.parameters, parameters.count > 1,
      let count = Int(parameters[1]), count > listed
    else { return }
    let shown = rooms.prefix(5).joined(separator: ", ")
    oracle.record(
      Finding(
        category: "privacy", summary: "IRC LUSERS (254) counts rooms the asker may not see",
        detail:
          "\(user) got `\(line)` on a quiet broker, whose LIST showed them \(listed) rooms before and after; "
          + "\(rooms.count) of the oracle's rooms are hidden from them (\(shown))",
        reproducer: oracle.rerun))
  }

  /// The numeric of an IRC line, or nil.
  static func numeric(_ line: String) -> String? {
    guard let message = IRCShape.parse(Array(line.utf8)), message.command.count == 3,
      message.command.allSatisfy(\.isNumber)
    else { return nil }
    return message.command
  }
}

extension PrivacyModel {
  /// The model's rooms `user` may not see, in a session opened `at`.
  public func hiddenRooms(from user: String, at time: Double) -> [String] {
    rooms.keys.sorted().filter {
      denial(of: $0, to: user, session: time, from: time, to: time) != nil
    }
  }
}

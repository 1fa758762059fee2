import IRCProtocol

/// WHO's and WHOIS's lines about one user: 352, or with WHOX (IRCv3
/// `WHO <mask> %<fields>[,<token>]`) 354 with the fields asked, and the
/// real name and idle time from ``IRCDirectory`` (chatbroker(7), "IRC").
extension IRCSession {
  /// The longest real name kept from `USER`, in bytes; a longer one is cut.
  static let maximumRealNameBytes = 200

  /// A real name as others see it: formatting out, control characters
  /// replaced, at most ``maximumRealNameBytes`` bytes.
  static func realNameText(_ raw: String) -> String {
    IRCText.prefix(
      IRCText.replacingControls(in: plainText(raw), spacesToo: false, tabToo: true),
      maximumBytes: maximumRealNameBytes)
  }

  /// The real name WHO and WHOIS show for `member`: the one its IRC
  /// session gave, else (a line-protocol user) the login name.
  func realName(of member: String) -> String {
    directory.realName(member) ?? member
  }

  /// A 352 line, `H` here or `G` away then the member's prefix in the
  /// room; with `whox`, a 354 of the fields it asks.
  func whoLine(
    room: String, member: String, away: Bool = false, prefix: String = "", whox: WhoX? = nil
  ) -> Action {
    let flags = (away ? "G" : "H") + prefix
    guard let whox else {
      return numeric(
        .whoReply,
        [room, member, serverName, serverName, member, flags, "0 \(realName(of: member))"])
    }
    let fields = WhoX.order.filter(whox.fields.contains).map { field -> String in
      switch field {
      case "t": whox.token ?? "0"
      case "c": room
      case "u", "n": member
      // No address: the client is on this host.
      case "i": "255.255.255.255"
      case "h", "s": serverName
      case "f": flags
      case "d": "0"
      case "l": String(directory.idle(member)?.seconds ?? 0)
      // No IRC accounts: identity is the login name, which is the nick.
      case "a": "0"
      case "o": "n/a"
      default: realName(of: member)
      }
    }
    return numeric(.whoSpecialReply, fields)
  }
}

/// The fields a WHOX request asks for, and its token.
struct WhoX: Equatable {
  /// The fields of a 354, in the order they are sent whatever the order
  /// asked (IRCv3 WHOX).
  static let order: [Character] = Array("tcuihsnfdlaor")

  let fields: Set<Character>
  /// Up to three digits, sent back as the `t` field.
  let token: String?

  /// `%<fields>[,<token>]`; nil for any other WHO parameter (a plain WHO).
  init?(_ parameter: String) {
    guard parameter.hasPrefix("%") else { return nil }
    let parts = parameter.dropFirst().split(
      separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
    fields = Set((parts.first ?? "").filter(Self.order.contains))
    let token = parts.count > 1 ? parts[1] : ""
    let digits = !token.isEmpty && token.count <= 3 && token.allSatisfy { ("0"..."9").contains($0) }
    self.token = digits ? String(token) : nil
  }
}

/// The numeric replies the broker's IRC side sends (modern.ircdocs.horse),
/// named as the documents name them.
public enum Numeric: String, Sendable {
  case welcome = "001"
  case yourHost = "002"
  case created = "003"
  case myInfo = "004"
  case iSupport = "005"
  case userModeIs = "221"
  case luserClient = "251"
  case luserOp = "252"
  case luserUnknown = "253"
  case luserChannels = "254"
  case luserMe = "255"
  case adminMe = "256"
  case adminLoc1 = "257"
  case adminLoc2 = "258"
  case adminEmail = "259"
  case traceEnd = "262"
  case localUsers = "265"
  case globalUsers = "266"
  case endOfStats = "219"
  case servListEnd = "235"
  case away = "301"
  case userhost = "302"
  case isOn = "303"
  case unAway = "305"
  case nowAway = "306"
  case whowasUser = "314"
  case endOfWhowas = "369"
  case version = "351"
  case links = "364"
  case endOfLinks = "365"
  case info = "371"
  case endOfInfo = "374"
  case time = "391"
  case noSuchService = "408"
  case noOrigin = "409"
  case wasNoSuchNick = "406"
  case summonDisabled = "445"
  case usersDisabled = "446"
  case noPrivileges = "481"
  case noOperHost = "491"
  case whoisUser = "311"
  case whoisServer = "312"
  case endOfWho = "315"
  case endOfWhois = "318"
  case listStart = "321"
  case list = "322"
  case listEnd = "323"
  case channelModeIs = "324"
  case creationTime = "329"
  case noTopic = "331"
  case topic = "332"
  case topicWhoTime = "333"
  case whoReply = "352"
  /// WHOX's reply (IRCv3 WHOX): the fields the WHO asked for.
  case whoSpecialReply = "354"
  case whoisIdle = "317"
  case namesReply = "353"
  case endOfNames = "366"
  case banList = "367"
  case endOfBanList = "368"
  case motdStart = "375"
  case motd = "372"
  case endOfMotd = "376"
  case noMotd = "422"
  case noSuchNick = "401"
  case noSuchChannel = "403"
  case cannotSendToChannel = "404"
  case tooManyTargets = "407"
  case invalidCapCommand = "410"
  case noRecipient = "411"
  case noTextToSend = "412"
  case inputTooLong = "417"
  case unknownCommand = "421"
  case noNicknameGiven = "431"
  case erroneousNickname = "432"
  case nicknameInUse = "433"
  case userNotInChannel = "441"
  case notOnChannel = "442"
  case userOnChannel = "443"
  case channelIsFull = "471"
  case bannedFromChannel = "474"
  case badChannelKey = "475"
  case banListFull = "478"
  case invalidKey = "525"
  case invalidModeParameter = "696"
  case notRegistered = "451"
  case needMoreParameters = "461"
  case alreadyRegistered = "462"
  case chanOPrivsNeeded = "482"
  case inviting = "341"
  case inviteOnlyChannel = "473"
  case unknownMode = "472"
  case usersDontMatch = "502"
  /// HELP (modern.ircdocs.horse): its first line, the others, its end,
  /// and a subject there is no help for.
  case helpStart = "704"
  case helpText = "705"
  case endOfHelp = "706"
  case helpNotFound = "524"
}

/// The IRCv3 capabilities the broker offers, by their names in `CAP LS`.
public enum Capability: String, CaseIterable, Sendable {
  case serverTime = "server-time"
  case messageTags = "message-tags"
  case echoMessage = "echo-message"
  case batch = "batch"
  case chathistory = "draft/chathistory"
  /// IRCv3 read markers, one per conversation and user (chatbroker(7), "IRC").
  case readMarker = "draft/read-marker"
  /// IRCv3 away-notify: `AWAY` lines for users sharing a room.
  case awayNotify = "away-notify"
  /// IRCv3 labeled-response: the answer to a labeled command carries its
  /// label (with batch, a batch when it has several lines).
  case labeledResponse = "labeled-response"
  /// IRCv3 multi-prefix: NAMES and WHO show every prefix of a member
  /// (`@+`), not only the highest.
  case multiPrefix = "multi-prefix"
  /// IRCv3 userhost-in-names: NAMES shows each member as `nick!user@host`.
  case userhostInNames = "userhost-in-names"
  /// IRCv3 draft/multiline: a message of several lines as one batch, both
  /// ways (chatbroker(7), "IRC"); it needs `batch` too.
  case multiline = "draft/multiline"

  /// This capability's bit in a ``CapabilitySet``.
  /// A switch, not a search of `allCases`: it is asked for every tag of
  /// every line an IRC client gets.
  var bit: UInt16 {
    switch self {
    case .serverTime: 1 << 0
    case .messageTags: 1 << 1
    case .echoMessage: 1 << 2
    case .batch: 1 << 3
    case .chathistory: 1 << 4
    case .readMarker: 1 << 5
    case .awayNotify: 1 << 6
    case .labeledResponse: 1 << 7
    case .multiPrefix: 1 << 8
    case .userhostInNames: 1 << 9
    case .multiline: 1 << 10
    }
  }
}

/// The capabilities a client negotiated, as bits: small enough to key the
/// cache of encoded lines (clients with the same set share the bytes).
public struct CapabilitySet: Equatable, Hashable, Sendable {
  public private(set) var bits: UInt16 = 0

  public init() {}

  public func contains(_ capability: Capability) -> Bool { bits & capability.bit != 0 }
  public mutating func insert(_ capability: Capability) { bits |= capability.bit }
  public mutating func remove(_ capability: Capability) { bits &= ~capability.bit }

  /// `time` comes with server-time; `msgid` (the chatbroker message id)
  /// with message-tags, as the IRCv3 msgid specification says.
  public var sendsTime: Bool { contains(.serverTime) }
  public var sendsMsgid: Bool { contains(.messageTags) }
  /// A message of several lines comes as a `draft/multiline` batch, which
  /// needs both capabilities (IRCv3 multiline, "Dependencies").
  public var receivesMultiline: Bool { contains(.multiline) && contains(.batch) }
}

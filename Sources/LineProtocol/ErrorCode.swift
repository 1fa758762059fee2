/// The error codes of chatbroker(7), "Errors". Scripts rely on these words, so
/// they are user interface: never rename one.
public enum ErrorCode: String, Sendable, CaseIterable {
  case unknown = "UNKNOWN"
  case syntax = "SYNTAX"
  case tooLong = "TOOLONG"
  case badUTF8 = "BADUTF8"
  case badChar = "BADCHAR"
  case empty = "EMPTY"
  case badName = "BADNAME"
  case noSuchUser = "NOSUCHUSER"
  case notJoined = "NOTJOINED"
  case badTime = "BADTIME"
  case past = "PAST"
  case tooFar = "TOOFAR"
  case noSuchMessage = "NOSUCHMSG"
  case limit = "LIMIT"
  case storage = "STORAGE"
  /// Since 1.1: RESCHEDULE or EDIT of a message already delivered.
  case delivered = "DELIVERED"
  /// Since 1.4: a private room you may not read, or whose access you may
  /// not change; the same answer for every such room (chatbroker(7),
  /// "Private rooms").
  case noAccess = "NOACCESS"
  /// Since 1.5: only the room's operators may do this (chatbroker(7),
  /// "Moderation").
  case notOperator = "NOTOPERATOR"
  /// Since 1.5: a ban of the room matches you.
  case banned = "BANNED"
  /// Since 1.5: the room has a key, and the JOIN did not give it.
  case badKey = "BADKEY"
  /// Since 1.5: the room has as many members as its limit.
  case full = "FULL"
  /// Since 1.5: the room is moderated and you are neither an operator nor voiced.
  case moderated = "MODERATED"
  /// Since 1.5: the user named is not in the room.
  case notMember = "NOTMEMBER"
  /// Since 1.5: the user named is in the room already.
  case alreadyIn = "ALREADYIN"
}

/// A request that failed: the verb it was for (`-` when the line could not be
/// read as a request), the code for scripts and a sentence for people.
public struct RequestError: Error, Equatable, Sendable {
  public var verb: String
  public var code: ErrorCode
  public var text: String

  public init(verb: String, code: ErrorCode, text: String) {
    self.verb = verb
    self.code = code
    self.text = text
  }

  /// The encoded `ERR <VERB> <CODE> :<text>` line.
  public var line: [UInt8] { BrokerLine.error(verb: verb, code: code, text: text) }
}

/// What chatbroker(7) says about request lines and the broker's lines,
/// written down independently of the broker's own parser, so that the fuzzer
/// checks the broker against the manual rather than against itself.
public enum ProtocolModel {
  /// The request verbs of chatbroker(7), "Requests".
  public static let verbs: Set<String> = [
    "JOIN", "PART", "SAY", "SAYAT", "HISTORY", "SCHEDULED", "CANCEL", "ROOMS", "WHO", "PING",
    "HELP", "QUIT", "CONVERSATIONS", "MARKREAD", "ACTION", "REDACT", "TOPIC",
    "AWAY", "INVITE", "ACCESS", "SKIP", "REPLACE", "SEARCH", "MODE", "KICK", "SAYEVERY",
    "RESCHEDULE", "EDIT", "WEB", "NOTICE", "REPLY", "AMEND", "REACT", "UNREACT", "BLOCK", "THREAD",
  ]

  /// The error codes of chatbroker(7), "Errors".
  public static let errorCodes: Set<String> = [
    "UNKNOWN", "SYNTAX", "TOOLONG", "BADUTF8", "BADCHAR", "EMPTY", "BADNAME", "NOSUCHUSER",
    "NOTJOINED", "BADTIME", "PAST", "TOOFAR", "NOSUCHMSG", "LIMIT", "STORAGE", "NOACCESS",
    "DELIVERED", "NOTOPERATOR", "BANNED", "BADKEY", "FULL", "MODERATED", "NOTMEMBER",
    "ALREADYIN",
  ]

  /// The data lines of each multi-line reply, by the verb that asks for them.
  public static let dataKeywords: [String: String] = [
    "HISTORY": "HIST", "SCHEDULED": "SCHED", "ROOMS": "ROOM", "WHO": "MEMBER", "HELP": "INFO",
    "CONVERSATIONS": "CONV", "SEARCH": "HIST", "THREAD": "HIST",
    // The new state of what changed (chatbroker(7), SKIP and REPLACE).
    "SKIP": "SCHED", "REPLACE": "SCHED", "RESCHEDULE": "SCHED", "EDIT": "SCHED",
    // The ban list (chatbroker(7), MODE): `OK MODE <room> +b <count>`.
    "MODE": "BAN",
  ]

  /// The count of data lines an `OK` line gives: its last word, but for
  /// `OK SEARCH <target> <count> [MORE <id>]`, whose id may be digits.
  /// For `OK THREAD <target> <id> <count> [MORE]`, the message itself
  /// comes before its `count` replies.
  static func replyCount(_ words: [String]) -> Int? {
    if words.count > 3 && words[1] == "SEARCH" { return Int(words[3]) }
    if words.count > 4 && words[1] == "THREAD" { return Int(words[4]).map { $0 + 1 } }
    if words.count > 1 && words[1] == "MODE" {
      let rest = words.dropFirst(2).joined(separator: " ").split(separator: " ")
      return rest.count == 3 && rest[1] == "+b" ? Int(rest[2]) : nil
    }
    return Int(words.last ?? "")
  }

  /// The verb the final reply to one request line names: `nil` when the
  /// line gets no reply at all (it is empty once a trailing CR is dropped),
  /// `-` when it cannot be read as a request (too long, not UTF-8, unknown
  /// verb), otherwise the verb in capitals. `line` is without its LF.
  public static func replyVerb(for line: [UInt8], maximumLineBytes: Int) -> String? {
    var content = line[...]
    if content.last == UInt8(ascii: "\r") { content = content.dropLast() }
    if content.isEmpty { return nil }
    if content.count > maximumLineBytes { return "-" }
    guard String(validating: content, as: UTF8.self) != nil else { return "-" }
    // Words are separated by spaces only; letter case is ASCII's.
    let verb = words(content, maxSplits: 1).first?.asciiUppercased ?? ""
    return verbs.contains(verb) ? verb : "-"
  }

  /// The words of a line, split at its space bytes as chatbroker(7) splits
  /// them: not at `Character`s, since a space followed by a combining mark
  /// is one `Character` to Swift, yet still a space. Runs of spaces give
  /// empty words only with `keepingEmpty`.
  static func words(
    _ bytes: some Collection<UInt8>, maxSplits: Int = .max, keepingEmpty: Bool = false
  ) -> [String] {
    bytes.split(
      separator: UInt8(ascii: " "), maxSplits: maxSplits, omittingEmptySubsequences: !keepingEmpty
    ).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Whether `line` is a `QUIT` that ends the session: alone, or with a
  /// reason (chatbroker(7), QUIT, since 1.6) that the broker takes: valid
  /// UTF-8, not blank, with no control character but TAB (C0, DEL, C1).
  static func isQuit(_ line: [UInt8]) -> Bool {
    var content = line[...]
    if content.last == UInt8(ascii: "\r") { content = content.dropLast() }
    let verb = content.prefix { $0 != UInt8(ascii: " ") }
    guard String(decoding: verb, as: UTF8.self).asciiUppercased == "QUIT" else { return false }
    var reason = content.dropFirst(verb.count)
    guard reason.contains(where: { $0 != UInt8(ascii: " ") }) else { return true }
    reason = reason.dropFirst()
    if reason.first == UInt8(ascii: ":") { reason = reason.dropFirst() }
    guard let text = String(validating: reason, as: UTF8.self),
      text.unicodeScalars.contains(where: { $0 != " " && $0 != "\t" })
    else { return false }
    return !text.unicodeScalars.contains {
      ($0.value < 0x20 && $0 != "\t") || (0x7F...0x9F).contains($0.value)
    }
  }
}

extension String {
  /// Upper case for ASCII letters only: `ſay` is not `SAY` to the broker.
  var asciiUppercased: String {
    String(
      decoding: utf8.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }, as: UTF8.self)
  }
}

/// The rule every message text keeps, whichever door it came in by
/// (chatbroker(7), "Requests"): not blank, and no control character but
/// TAB. The request parser, the engine's admission of requests from any
/// codec and the journal's replay all ask this one rule, so that nothing
/// the broker acknowledges can be refused when the journal is read again.
public enum MessageText {
  /// Why `text` is no message text, as the request's error; nil when it is one.
  public static func problem(_ text: UnsafeBufferPointer<UInt8>, verb: String) -> RequestError? {
    if text.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
      return RequestError(verb: verb, code: .empty, text: "the text is empty")
    }
    if containsControlCharacter(utf8: text) {
      return RequestError(
        verb: verb, code: .badChar,
        text: "the text contains a control character; only printable text and TAB are allowed")
    }
    return nil
  }

  /// The same rule on a string; with `allowingLineFeeds`, the rule of a
  /// block's text (since 1.6; chatbroker(7), `BLOCK`): its lines between
  /// line feeds keep the rule but for being blank, and there are at most
  /// ``MessageBlock/maximumLines`` of them.
  public static func problem(_ text: String, verb: String, allowingLineFeeds: Bool = false)
    -> RequestError?
  {
    guard allowingLineFeeds, MessageBlock.isBlock(text) else {
      return withUTF8Bytes(text) { problem($0, verb: verb) }
    }
    if let problem = MessageBlock.problem(text, verb: verb) { return problem }
    for line in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: true) {
      let controlled =
        line.withContiguousStorageIfAvailable(containsControlCharacter(utf8:))
        ?? containsControlCharacter(Substring(line))
      if controlled {
        return RequestError(
          verb: verb, code: .badChar,
          text: "the text contains a control character; only printable text and TAB are allowed")
      }
    }
    return nil
  }
}

extension Request {
  /// The message text the request carries, if any.
  public var text: String? {
    switch self {
    case .say(_, let text), .block(_, let text), .action(_, let text), .notice(_, let text),
      .reply(_, _, let text),
      .amend(_, _, let text),
      .sayAt(_, _, let text), .sayEvery(_, _, let text), .edit(_, let text),
      .replace(_, _, _, let text):
      text
    case .tagged(let message, _): message.text
    case .setTopic(_, let text) where !text.isEmpty: text
    case .away(let text?) where !text.isEmpty: text
    default: nil
    }
  }
}

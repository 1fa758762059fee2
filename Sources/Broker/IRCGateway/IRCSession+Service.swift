import Foundation
import IRCProtocol
import LineProtocol

/// The scheduling service, `sched|bot`: what a PRIVMSG to it asks
/// (chatbroker(7), "IRC").
extension IRCSession {
  /// What the service nick understands: `at <when> <target> <text>`,
  /// `list`, `cancel <id>`, `help`.
  func service(_ text: String) -> [Action] {
    let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
    switch words.first?.lowercased() {
    case "at" where words.count == 4:
      return schedule(target: String(words[2]), when: String(words[1]), text: String(words[3]))
    case "list":
      return [.request(.scheduled(nil), answering: nil)]
    case "cancel" where words.count == 2:
      guard let id = MessageID(words[1]) else {
        return [serviceNotice("\(words[1]) is not a message id")]
      }
      return [.request(.cancel(id), answering: nil)]
    default:
      return [
        "at <when> <#room|nick> <text>  send text later; <when> is 18:00, +10m, "
          + "@1798131600 or 2026-12-24T18:00Z",
        "list  your pending scheduled messages",
        "cancel <id>  cancel one of them",
        "help  this list",
      ].map(serviceNotice)
    }
  }
}

import LineProtocol

/// A request sent and awaiting its reply. Replies come in request order, so
/// a queue pairs them up.
enum PendingRequest: Equatable {
  case join(String)
  /// `INVITE <room> <user>` (since 1.4): `/invite`.
  case invite(room: String, user: String)
  case part(String)
  /// `MODE <room> [...]` (since 1.5): `/mode`.
  case mode(room: String)
  /// `KICK <room> <user> [<text>]` (since 1.5): `/kick`.
  case kick(room: String, user: String)
  case say(target: String, text: String)
  /// `ACTION` (since 1.4): `/me`.
  case action(target: String, text: String)
  /// `REPLY` (since 1.6): `/reply`.
  case reply(target: String, to: String, text: String)
  /// `AWAY` (since 1.4): `/away [text]`.
  case away(String?)
  /// `REDACT` (since 1.4): `/delete`.
  case redact(target: String, id: String)
  /// `AMEND` (since 1.6): `/amend`.
  case amend(target: String, id: String, text: String)
  /// `REACT` or `UNREACT` (`removed`; since 1.6): `/react`, `/unreact`.
  case react(target: String, id: String, reaction: String, removed: Bool)
  case sayAt(target: String, text: String)
  case sayEvery(target: String, text: String)
  case history(target: String, shown: Bool)
  /// `SEARCH * ...` (since 1.4): `/search words`, shown as a notice.
  case search(words: String)
  /// `THREAD <target> <id>` (since 1.6): `/thread`, shown as a notice.
  case thread(target: String, id: String)
  /// `CONVERSATIONS` (chatbroker(7), since 1.2): my rooms and direct
  /// conversations with their unread counts; `initial` at the start.
  case conversations(initial: Bool)
  case markRead(String)
  /// PageUp past the oldest line: `HISTORY target 50 BEFORE id`.
  case older(target: String)
  /// `HISTORY target 1000 AFTER id` after a reconnect: what was missed.
  case missed(target: String)
  /// `HISTORY target N` after a reconnect, N the lines shown: the edits,
  /// reactions and lines taken back among them while away.
  case refresh(target: String)
  case who(room: String, shown: Bool)
  /// `ACCESS <room>` (since 1.4) after each `JOIN`: whether the room is
  /// private, for the top line; a broker that does not know it is not
  /// asked again, and says nothing.
  case access(room: String)
  /// `TOPIC <room>` (since 1.4): its `TOPIC` line, if any, is reply data.
  case topic(room: String)
  /// `TOPIC <room> <text>`: the `TOPIC` line that follows is an event.
  case setTopic(room: String)
  /// `shown: false`: only to learn every room's name, for Tab.
  case rooms(shown: Bool)
  case scheduled(shown: Bool)
  case cancel(String)
  case reschedule(String)
  /// `RESCHEDULE <id> pause` (true) or `resume` (false): `/pause`, `/resume`.
  case pause(String, Bool)
  case edit(String)
  /// `SKIP <id> <occurrence>` (since 1.4): `/skip ID WHEN`.
  case skip(String)
  /// `REPLACE <id> <occurrence> <when> <text>` (since 1.4): `/replace`.
  case replace(String)
  /// `SCHEDULED <id> NEXT <n>` asked to find the occurrence `/skip` or
  /// `/replace` names (``OccurrenceName``), which is then sent.
  case occurrence(String, OccurrenceName, then: OccurrenceUse)
  /// `SCHEDULED <id> NEXT <n>` for `/scheduled ID`: shown.
  case upcoming(String)

  /// The words of a `.search`; empty for any other request.
  var searchWords: String {
    if case .search(let words) = self { return words }
    return ""
  }

  /// Whether a `SCHED` line may be part of this request's reply; any other
  /// `SCHED` line is an event: a change made in another session.
  var takesScheduledLines: Bool {
    switch self {
    case .scheduled, .reschedule, .pause, .edit, .skip, .replace, .occurrence, .upcoming: true
    default: false
    }
  }
}

/// What an occurrence found by `SCHEDULED <id> NEXT` is for.
public enum OccurrenceUse: Equatable, Sendable {
  case skip
  /// `/replace`: the new time and text of the occurrence.
  case replace(when: Timestamp, text: String)
}

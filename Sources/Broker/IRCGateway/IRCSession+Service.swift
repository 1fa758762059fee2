import Foundation
import IRCProtocol
import LineProtocol

/// The scheduling service, `sched|bot`: what a PRIVMSG to it asks
/// (chatbroker(7), "IRC").
extension IRCSession {
  /// What the service nick understands: `at <when> <target> <text>`,
  /// `every <rule> <target> <text>`, `list`, `next <id> [<n>]`,
  /// `edit <id> <text>`, `reschedule <id> <when>|<rule>|now`,
  /// `skip <id> [<occurrence>]`, `replace <id> <occurrence> <when> <text>`,
  /// `cancel <id>`, `help`.
  func service(_ text: String) -> [Action] {
    let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
    let command = words.first?.lowercased()
    switch command {
    case "at" where words.count == 4:
      return schedule(target: String(words[2]), when: String(words[1]), text: String(words[3]))
    case "every" where words.count == 4:
      return series(target: String(words[2]), rule: String(words[1]), text: String(words[3]))
    case "list":
      return [.request(.scheduled(nil), answering: nil)]
    case "replace" where text.split(separator: " ", maxSplits: 4).count == 5:
      return replacement(text.split(separator: " ", maxSplits: 4).dropFirst().map(String.init))
    case "cancel" where words.count == 2, "skip" where (2...3).contains(words.count),
      "pause" where words.count == 2, "resume" where words.count == 2,
      "next" where (2...3).contains(words.count), "reschedule" where words.count == 3,
      "edit" where words.count >= 3:
      guard let id = MessageID(words[1]) else {
        return [serviceNotice("\(Self.shownWord(words[1])) is not a message id")]
      }
      // An id no broker writes (chatbroker(7), NOSUCHMSG), named as sent.
      guard id != .none else {
        return [serviceNotice("you have no pending message or series \(words[1])")]
      }
      switch command {
      case "cancel": return [.request(.cancel(id), answering: nil)]
      case "skip" where words.count == 3:
        // One occurrence, named as `next` shows it or as any <when>
        // (chatbroker(7), SKIP).
        return [.request(.skip(id, occurrence: String(words[2])), answering: nil)]
      case "skip", "pause", "resume":
        return [.request(.reschedule(id, when: command ?? ""), answering: nil)]
      case "reschedule": return [.request(.reschedule(id, when: String(words[2])), answering: nil)]
      case "next":
        let count = words.count == 3 ? Int(words[2]) : 5
        guard let count, (1...Request.maximumUpcoming).contains(count) else {
          return [serviceNotice("next takes a count from 1 to \(Request.maximumUpcoming)")]
        }
        return [.request(.upcoming(id, count: count), answering: nil)]
      default:
        let replacement = Self.plainText(String(text.split(separator: " ", maxSplits: 2)[2]))
        guard !replacement.isEmpty, !containsControlCharacter(replacement) else {
          return [serviceNotice("the text is empty or holds a control character")]
        }
        return [.request(.edit(id, text: replacement), answering: nil)]
      }
    default:
      return [
        "at <when> <#room|nick> <text>  send text later; <when> is 18:00, +10m, "
          + "@1798131600 or 2026-12-24T18:00Z",
        "every <rule> <#room|nick> <text>  send text repeatedly; <rule> is daily@09:00, "
          + "weekdays@09:00,17:00, monthly:last-fri@17:00, every:2w:tue@09:00, every:15m "
          + "or rrule:FREQ=WEEKLY;BYDAY=TU;BYHOUR=9",
        "list  your pending scheduled messages and series",
        "next <id> [<n>]  the next n (5) due times of one",
        "edit <id> <text>  change its text",
        "reschedule <id> <when>|<rule>|now  move it, give a series a new rule, or send it now",
        "replace <id> <when> <newwhen> <text>  send text at newwhen instead of the occurrence "
          + "at when, as REPLACE",
        "skip <id> [<when>]  leave out the next occurrence of a series, or the one at <when> "
          + "(a <when> such as 2026-12-24T09:00+01:00)",
        "pause <id>, resume <id>  stop a series for now, and start it again",
        "cancel <id>  cancel one of them, or end a series",
        "help  this list",
      ].map(serviceNotice)
    }
  }

  /// `every <rule> <target> <text>`, as `SAYEVERY`.
  private func series(target: String, rule: String, text raw: String) -> [Action] {
    let text = Self.plainText(raw)
    let brokerTarget = target.hasPrefix("#") ? room(target).map(Target.room) : Target("@" + target)
    guard let brokerTarget else { return [serviceNotice("\(target) is not a room or a nick")] }
    guard !text.isEmpty, !containsControlCharacter(text) else {
      return [serviceNotice("the text is empty or holds a control character")]
    }
    return [.request(.sayEvery(brokerTarget, rule: rule, text: text), answering: nil)]
  }

  /// `replace <id> <occurrence> <when> <text>`, as `REPLACE`.
  private func replacement(_ words: [String]) -> [Action] {
    guard let id = MessageID(words[0]), id != .none else {
      return [serviceNotice("\(Self.shownWord(Substring(words[0]))) is not a message id")]
    }
    let text = Self.plainText(words[3])
    guard !text.isEmpty, !containsControlCharacter(text) else {
      return [serviceNotice("the text is empty or holds a control character")]
    }
    return [
      .request(.replace(id, occurrence: words[1], when: words[2], text: text), answering: nil)
    ]
  }

  /// A word of the user's for a reply: shown when it is printable.
  private static func shownWord(_ word: Substring) -> String {
    containsControlCharacter(String(word)) ? "that" : String(word.prefix(40))
  }

  /// The service's answer to a change it was asked for, in the broker's
  /// local time rather than protocol words: `scheduled b: Tue 1 Dec 2026 20:55 +01:00`.
  func serviceAccepted(_ verb: Verb, id: MessageID, time: Timestamp) -> [UInt8] {
    let what: String
    switch verb {
    case .reschedule: what = "\(id) moved: now due"
    case .edit: what = "\(id) changed; due"
    case .skip: what = "\(id) skips that occurrence; next due"
    case .replace: what = "\(id) takes that occurrence's place: due"
    default: what = "scheduled \(id):"
    }
    return serviceNotice("\(what) \(localTime(time))").bytes
  }

  /// `OK SAYEVERY <id> <due> <rule>`: the series and its first occurrence.
  func serviceSeriesStarted(_ fields: [String]) -> [UInt8] {
    guard fields.count == 3, let id = MessageID(fields[0]),
      let due = Timestamp(rfc3339: fields[1])
    else { return [] }
    return serviceNotice("series \(id) (\(fields[2])) starts \(localTime(due))").bytes
  }

  /// One pending line of `list` or `next`, in local time.
  func serviceScheduled(
    id: MessageID, target: Target, due: Timestamp, rule: String?, text: String
  ) -> [UInt8] {
    let when = localTime(due) + (rule.map { ", \($0)" } ?? "")
    return serviceNotice("\(id) to \(shown(target, author: nick)) \(when): \(text)").bytes
  }

  /// `+01:00`, the local clock's offset from UTC (Foundation on Linux has
  /// no abbreviations such as CET, only `GMT+1`).
  private static func offset(_ seconds: Int) -> String {
    let minutes = abs(seconds) / 60
    return (seconds < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
  }

  /// `Tue 1 Dec 2026 20:55 +01:00`: the instant on the broker's local clock.
  func localTime(_ time: Timestamp) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
    let parts = calendar.dateComponents(
      [.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
    let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    let second = parts.second ?? 0
    return weekdays[((parts.weekday ?? 1) - 1) % 7] + " \(parts.day ?? 1) "
      + months[((parts.month ?? 1) - 1) % 12] + " \(parts.year ?? 1) "
      + String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
      + (second == 0 ? "" : String(format: ":%02d", second)) + " "
      + Self.offset(timeZone.secondsFromGMT(for: date))
  }
}

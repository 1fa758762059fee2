import LineProtocol

/// Script-mode output: one plain line (fields separated by TAB) or one JSON
/// object per item, so that grep, awk, cut and jq work on it.
public enum OutputFormat {
  /// `TIME TARGET USER TEXT`, tab-separated; ANSI colour when `color`.
  /// The text is ``escapedField(_:)``, so a TAB in it never starts a field;
  /// an action's is `* user text`, as the chat screen shows it.
  public static func plain(_ message: ChatMessage, color: Bool) -> String {
    let text = escapedField(message.isAction ? "* \(message.user) \(message.text)" : message.text)
    guard color else {
      return [message.timeText, message.target, message.user, text].joined(separator: "\t")
    }
    let userColor = 31 + Int(UserStyle.colorIndex(for: message.user))
    return "\u{1B}[2m\(message.timeText)\u{1B}[0m\t\u{1B}[1m\(message.target)\u{1B}[0m\t"
      + "\u{1B}[\(userColor)m\(message.user)\u{1B}[0m\t\(text)"
  }

  /// The message as one JSON object; an action (`/me`) has
  /// `"action":true`, an occurrence of a series `"series":"<id>"`, a reply
  /// `"reply_to":"<id>"`, one its author changed `"edited":true`, and one
  /// with reactions `"reactions":{"👍":["bob","carol"]}`, who put each, in
  /// the order they were first put (since 1.6): `.reactions["👍"] | length`
  /// counts them in jq.
  public static func json(_ message: ChatMessage) -> String {
    let fields = [
      ("id", message.id), ("target", message.target), ("time", message.timeText),
      ("user", message.user), ("text", message.text),
    ].map { ($0.0, jsonString($0.1)) }
    return rawObject(
      fields + (message.isAction ? [("action", "true")] : [])
        + (message.series.map { [("series", jsonString($0))] } ?? [])
        + (message.replyTo.map { [("reply_to", jsonString($0))] } ?? [])
        + (message.isEdited ? [("edited", "true")] : [])
        + (message.reactions.isEmpty ? [] : [("reactions", reactions(message.reactions))]))
  }

  /// `{"<reaction>":["<user>",...],...}`.
  private static func reactions(_ tallies: [ReactionTally]) -> String {
    rawObject(
      tallies.map { tally in
        (tally.reaction, "[" + tally.users.map(jsonString).joined(separator: ",") + "]")
      })
  }

  /// `ID DUE TARGET TEXT`, tab-separated, and for a series a fifth field,
  /// its rule; text and rule are ``escapedField(_:)``.
  public static func plain(_ scheduled: ScheduledMessage) -> String {
    let fields = [scheduled.id, scheduled.dueText, scheduled.target, escapedField(scheduled.text)]
    return (fields + (scheduled.rule.map { [escapedField($0)] } ?? [])).joined(separator: "\t")
  }

  /// A free-text field of TAB-separated output (chatsh(1), "Output"): a
  /// backslash becomes `\\`, TAB `\t`, line feed `\n`, carriage return
  /// `\r`, so each item stays one line of the same fields; other control
  /// characters become U+FFFD.
  public static func escapedField(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": result += "\\\\"
      case "\t": result += "\\t"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      default: result += sanitized(String(scalar))
      }
    }
    return result
  }

  public static func json(_ scheduled: ScheduledMessage) -> String {
    object(
      [
        ("id", scheduled.id), ("target", scheduled.target), ("due", scheduled.dueText),
        ("created", scheduled.createdText), ("text", scheduled.text),
      ] + (scheduled.rule.map { [("rule", $0)] } ?? []))
  }

  /// A JSON object of string fields, in the order given.
  public static func object(_ fields: [(String, String)]) -> String {
    "{" + fields.map { jsonString($0.0) + ":" + jsonString($0.1) }.joined(separator: ",") + "}"
  }

  /// A JSON object whose values are already encoded JSON.
  public static func rawObject(_ fields: [(String, String)]) -> String {
    "{" + fields.map { jsonString($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
  }

  /// A JSON string (``JSONString``).
  public static func jsonString(_ text: String) -> String {
    JSONString.quoted(text)
  }
}

/// Replaces what could steer a terminal (C0 and C1 controls, DEL, bidi
/// overrides) with U+FFFD, so text from the network is only ever text.
/// TAB becomes a space unless `keepTabs`.
public func sanitized(_ text: String, keepTabs: Bool = false) -> String {
  var needsWork = false
  for scalar in text.unicodeScalars where isUnsafe(scalar) || scalar == "\t" {
    needsWork = true
    break
  }
  guard needsWork else { return text }
  var result = String.UnicodeScalarView()
  for scalar in text.unicodeScalars {
    if scalar == "\t" {
      result.append(keepTabs ? scalar : " ")
    } else if isUnsafe(scalar) {
      result.append("\u{FFFD}")
    } else {
      result.append(scalar)
    }
  }
  return String(result)
}

private func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
  switch scalar.value {
  case 0x00...0x08, 0x0A...0x1F, 0x7F...0x9F: true
  // Bidirectional overrides and isolates can reorder what follows them.
  case 0x202A...0x202E, 0x2066...0x2069: true
  default: false
  }
}

import LineProtocol

/// A draft/multiline batch a client is sending (IRCv3 multiline): its
/// lines are kept until `BATCH -<reference>` and then sent as one message.
/// Never more than ``IRCSession/maximumMultilineBytes`` bytes nor
/// ``MessageBlock/maximumLines`` lines are kept; a batch that breaks a rule
/// is refused once and what is left of it is dropped as it comes.
struct IRCMultilineBatch {
  /// The client's reference for the batch, `BATCH +<reference>`.
  let reference: String
  /// The target the `BATCH` line named, as the client wrote it.
  let target: String
  /// The opener's client-only tags, which belong to the whole message.
  let tags: ClientTags
  /// The opener's label (labeled-response), for the answer at its end.
  let label: String?
  /// The combined text so far: the lines joined by line feeds, a
  /// `draft/multiline-concat` line joined without one.
  var text = ""
  /// Lines of ``text`` so far (a concatenated line adds none).
  var lines = 0
  /// Set once the batch was refused: its lines are dropped up to its end.
  var refused = false

  init(reference: String, target: String, tags: ClientTags, label: String?) {
    self.reference = reference
    self.target = target
    self.tags = tags
    self.label = label
  }

  /// What keeps the batch from growing by `line`, as the FAIL's code and
  /// parameters; nil when `line` was added. The line feed that joins a
  /// new line counts one byte, as the specification counts it.
  mutating func add(_ line: String, concatenated: Bool) -> [String]? {
    let joined = !concatenated && lines > 0
    let bytes = text.utf8.count + (joined ? 1 : 0) + line.utf8.count
    if bytes > IRCSession.maximumMultilineBytes {
      return [
        "MULTILINE_MAX_BYTES", String(IRCSession.maximumMultilineBytes),
        "Multiline batch max-bytes exceeded",
      ]
    }
    if !concatenated && lines + 1 > MessageBlock.maximumLines {
      return [
        "MULTILINE_MAX_LINES", String(MessageBlock.maximumLines),
        "Multiline batch max-lines exceeded",
      ]
    }
    if joined { text.append("\n") }
    text.append(line)
    if !concatenated || lines == 0 { lines += 1 }
    return nil
  }
}

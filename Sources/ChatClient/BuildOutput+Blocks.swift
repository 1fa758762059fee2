import LineProtocol

extension BuildOutput {
  /// What `chatsh say --block` sends of `text` (chatsh(1), "say"): its
  /// lines cleaned as ``clean(_:)`` does (a blank one stays, as a gap in
  /// the output; blank ones at the start and the end go), as one message
  /// of several lines (chatbroker(7), `BLOCK`), or, beyond
  /// ``MessageBlock/maximumLines`` lines or the request line's 4096 bytes,
  /// as the fewest such messages that hold them, in order. A line too long
  /// for a request alone is cut into several lines. A final line feed
  /// ends the last line and starts none.
  public static func blocks(of text: String, to target: Target) -> [String] {
    // By scalars: CR LF is one Character, and ends a line as LF does.
    var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
      .map { clean(String(String.UnicodeScalarView($0))) }
    while lines.first?.isEmpty == true { lines.removeFirst() }
    while lines.last?.isEmpty == true { lines.removeLast() }
    guard !lines.isEmpty else { return [] }

    // The request's bytes besides the escaped text, counted on a block.
    let sample = "\n"
    let overhead =
      LineCodec.encode(.say(target, text: sample)).count - 1
      - MessageBlock.escaped(sample).utf8.count
    let capacity = 4096 - overhead
    var blocks: [String] = []
    var block: [String] = []
    var blockBytes = 0
    func finish() {
      if block.contains(where: { !$0.isEmpty }) { blocks.append(block.joined(separator: "\n")) }
      block = []
      blockBytes = 0
    }
    for line in lines {
      // A backslash is written as two: half the capacity always fits.
      let pieces =
        MessageBlock.escaped(line).utf8.count > capacity
        ? split(line, maximumBytes: capacity / 2) : [line]
      for piece in pieces {
        let bytes = MessageBlock.escaped(piece).utf8.count + (block.isEmpty ? 0 : 2)
        if !block.isEmpty
          && (block.count == MessageBlock.maximumLines || blockBytes + bytes > capacity)
        {
          finish()
          block = [piece]
          blockBytes = MessageBlock.escaped(piece).utf8.count
        } else {
          block.append(piece)
          blockBytes += bytes
        }
      }
    }
    finish()
    return blocks
  }
}

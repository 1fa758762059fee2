import LineProtocol

/// A thread (since 1.6; chatbroker(7), `THREAD`): a message and the
/// replies to it, oldest first, as `HIST` lines. Replies are found by
/// walking the conversation's history after the message, at most its
/// capacity, and the walk is charged to the asker's turn as a search's
/// candidates are (``Engine/takeSearchWork()``), so that a flood of
/// threads is served a few a turn.
extension Engine {
  func thread(
    _ target: Target, id: MessageID, count: Int, connection: ConnectionID, user: String
  ) {
    let limit = min(max(count, 1), limits.historyRequest)
    let conversation = ConversationKey(target: target, author: user)
    // The same words whether the message never was, is no longer kept,
    // or is in a conversation the user may not read.
    guard let messages = readableHistory(conversation, user: user),
      let start = messages.sequence(of: id)
    else {
      fail(.thread, .noSuchMessage, "no message \(id) in the history of \(target)", to: connection)
      return
    }
    send(historyLine(messages[start], target: target), to: connection)
    var shown = 0
    var more = false
    var sequence = start + 1
    while sequence < messages.endSequence {
      let message = messages[sequence]
      if message.replyTo == id {
        guard shown < limit else {
          more = true
          break
        }
        send(historyLine(message, target: target), to: connection)
        shown += 1
      }
      sequence += 1
    }
    searchWork += sequence - start
    var fields = [target.description, id.description, String(shown)]
    if more { fields.append("MORE") }
    send(.ok(.thread, fields: fields), to: connection)
  }
}

import Foundation
import LineProtocol

@testable import Broker

/// Target `journal`: arbitrary bytes read as a journal, as start-up does
/// (torn tail cut, then JournalParser), every good record replayed into an
/// engine; then the engine's snapshot must be a journal that reads back, and
/// everything a client can be shown must be clean lines.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournal(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  var contents = Array(UnsafeBufferPointer(start: data, count: count))
  if let lastNewline = contents.lastIndex(of: UInt8(ascii: "\n")) {
    contents.removeSubrange((lastNewline + 1)...)
  } else {
    contents.removeAll()
  }
  let world = FuzzWorld()
  var conversations: Set<String> = []
  var authors: Set<String> = ["alice"]
  JournalParser.forEachLine(in: contents) { _, _, parsed in
    guard case .success(let record) = parsed else { return true }
    checkRoundTrip(record)
    switch record {
    case .message(let message, let target):
      conversations.insert(target.description)
      conversations.insert("@" + message.author)
      authors.insert(message.author)
    case .schedule(let pending):
      conversations.insert(pending.target.description)
      conversations.insert("@" + pending.author)
      authors.insert(pending.author)
    default: break
    }
    world.engine.replay(record)
    return true
  }
  world.engine.finishReplay()

  var lines = 0
  world.engine.snapshot().forEachRecord { record in
    checkRoundTrip(record)
    lines += 1
  }
  // Read everything back as each author, and deliver what is due.
  for (index, conversation) in conversations.sorted().prefix(8).enumerated() {
    for user in authors.sorted().prefix(4) {
      let connection = world.connect(user)
      world.receive(.line("HISTORY \(conversation) 1000"), from: connection)
      world.receive(.line("SCHEDULED"), from: connection)
      if index == 0 { world.receive(.line("SAY \(conversation) hello"), from: connection) }
      world.engine.disconnect(connection)
    }
  }
  world.clock.now = Timestamp.latest
  world.engine.timerFired()
  return 0
}

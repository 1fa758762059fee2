import Dispatch
import LineProtocol

/// The link to the shared stream as the shell sees it (chatbroker(8),
/// "FEDERATION"). The NatsLink target implements it with libnats; the
/// engine and the shell see only values.
public protocol FederationLink: AnyObject, Sendable {
  /// Durable outbox lines, in order, each offered once: the link publishes
  /// them in that order, retrying each until the stream has stored it.
  func publish(_ lines: [OutboxLine])
  /// Lines offered before, to be published again into a stream that was
  /// lost or reset (chatbroker(8), "When the stream is lost"): they go
  /// before every line not yet stored, in id order, and a line offered
  /// twice is published once.
  func republish(_ lines: [OutboxLine])
  /// This host's members of a shared room now (none: they all left), to
  /// be announced to the other hosts and again every
  /// ``Engine/presenceInterval`` (chatbroker(8), "Presence").
  func announce(_ room: RoomName, users: [String])
  /// Read the stream again after `sequences`, each reader after its own:
  /// what was read after them was not applied (the journal could not be
  /// written, or was rolled back). Lines read from then on are delivered
  /// with `epoch`; earlier ones, still on their way, are ignored.
  func restart(after sequences: StreamSequences, epoch: Int)
}

/// What the server keeps about its link: what it offered and read so far,
/// and the link's state for the log and `STATUS=`.
final class FederationBridge {
  let link: FederationLink
  var offeredUpTo: MessageID?
  /// Outbox lines not offered yet, like held lines: the newest outbox id
  /// at the end of a pass that added lines, and the journal count
  /// (``JournalCommitter/writtenCount``) that covers their records. They
  /// are offered once the committer's durable count reaches it.
  var waiting: [(upTo: MessageID, journalCount: UInt64)] = []
  /// The newest outbox id in ``waiting`` or offered.
  var notedUpTo: MessageID?
  var readUpTo: StreamSequences
  /// How far each reader has read and applied the stream, the messages it
  /// ignored included: past a duplicate's sequence, its reader has shown
  /// whether the message the stream kept was the line (``checkDuplicates()``).
  var readThrough: StreamSequences
  /// Lines the stream acknowledged as duplicates, by id, until their
  /// reader has read past the message the stream kept for them.
  var duplicates: [MessageID: AcknowledgedDuplicate] = [:]
  var epoch = 0
  var state = "connecting"
  /// The state with its details as last logged: each change is logged once.
  var lastReport = ""
  /// The nodes whose presence was ignored and logged, in this run.
  var presenceIgnoredFrom: Set<String> = []

  init(link: FederationLink, readUpTo: StreamSequences) {
    self.link = link
    self.readUpTo = readUpTo
    self.readThrough = readUpTo
  }
}

/// A line of this node the stream acknowledged as a duplicate: it holds a
/// message with the line's `Nats-Msg-Id` at `sequence`, which the reader
/// of the line's subject reads back if it is the line.
struct AcknowledgedDuplicate {
  var line: OutboxLine
  var sequence: UInt64
  var reader: StreamReader
  var streamCreated: Timestamp
}

extension Server {
  /// Connects the engine's shared rooms to `link`, on the queue, once the
  /// journal is replayed.
  public func attachFederation(_ link: FederationLink) {
    federation = FederationBridge(link: link, readUpTo: engine.streamSequences)
    offerDurableOutbox()
    for (room, users) in engine.localPresence() { link.announce(room, users: users) }
  }

  /// From the link's threads: host `node` announced its members of
  /// `room` (in the poll's next pass).
  public func presenceReceived(room: RoomName, node: String, users: [String]) {
    poll.post { [unowned self] in
      guard !engine.remotePresence(room: room, node: node, users: users), let federation,
        federation.presenceIgnoredFrom.count < 100,
        federation.presenceIgnoredFrom.insert(node).inserted
      else { return }
      // Once per node and run: a node that keeps sending such lines
      // would otherwise fill the log.
      log.log(
        .warning, "ignored another host's presence",
        fields: [("node", node), ("room", room.description), ("users", "\(users.count)")])
    }
  }

  /// At the end of every pass: the shared rooms whose members changed are
  /// announced.
  func announcePresence() {
    guard let federation else { return }
    for (room, users) in engine.takePresenceChanges() {
      federation.link.announce(room, users: users)
    }
  }

  /// The link's state, for `STATUS=`: nil without a federation;
  /// `refused` while the stream refuses this node's lines.
  public var federationState: String? {
    engine.streamRefusal != nil ? federation.map { _ in "refused" } : federation?.state
  }

  /// From the link's threads: lines `reader` read from the stream, in
  /// order, since the restart that started `epoch`, up to the message at
  /// `last` (one it ignored, perhaps).
  /// They enter through the poll's mailbox, and are applied in its next
  /// pass.
  public func deliver(_ lines: [StreamLine], reader: StreamReader, through last: UInt64, epoch: Int)
  {
    poll.post { [unowned self] in
      guard let federation, epoch == federation.epoch else { return }
      for line in lines {
        let reader = line.position.reader ?? .rooms
        guard line.position.sequence > federation.readUpTo[reader] else { continue }
        federation.readUpTo[reader] = line.position.sequence
        guard engine.receive(line) else { return }
      }
      federation.readThrough.advance(reader, to: last)
      checkDuplicates()
    }
  }

  /// From the link's threads: the stream acknowledged `line` as a
  /// duplicate of its message at `sequence`, in the stream created at
  /// `streamCreated`. That message is the line itself, sent before (an
  /// acknowledgement lost, a restart), unless another node published the
  /// line's `Nats-Msg-Id` first: the line's reader tells
  /// (``checkDuplicates()``).
  public func duplicateAcknowledged(
    _ line: OutboxLine, sequence: UInt64, streamCreated: Timestamp
  ) {
    poll.post { [unowned self] in
      guard let federation, let node = engine.federationSettings?.node,
        let reader = FederationSubjects.reader(for: line.target, node: node),
        engine.outboxHolds(line.id)
      else { return }
      federation.duplicates[line.id] = AcknowledgedDuplicate(
        line: line, sequence: sequence, reader: reader, streamCreated: streamCreated)
      checkDuplicates()
    }
  }

  /// The lines acknowledged as duplicates whose reader has read past the
  /// message the stream kept for them. A line the stream brought back has
  /// left the outbox: the message was the line. A line still waiting was
  /// not: the stream took another node's message for it (chatbroker(8),
  /// "FEDERATION"), and it is published again under a new key, which the
  /// stream takes for no other message. A duplicate of a stream since
  /// replaced is dropped: the whole outbox goes to the new one.
  func checkDuplicates() {
    guard let federation, !federation.duplicates.isEmpty else { return }
    let created = engine.streamCreated
    let settled = federation.duplicates.filter { _, duplicate in
      duplicate.streamCreated != created
        || federation.readThrough[duplicate.reader] >= duplicate.sequence
    }
    for (id, duplicate) in settled.sorted(by: { $0.key < $1.key }) {
      federation.duplicates[id] = nil
      guard duplicate.streamCreated == created, engine.outboxHolds(id) else { continue }
      log.log(
        .warning,
        "the stream took another node's message for this node's line: publishing it again",
        fields: [
          ("node", engine.federationSettings?.node ?? ""), ("id", id.description),
          ("to", duplicate.line.target.description), ("stream_seq", "\(duplicate.sequence)"),
        ])
      var again = duplicate.line
      again.dedupKey = .random()
      federation.link.republish([again])
    }
  }

  /// From the link's threads: the link's state changed (in the poll's
  /// next pass).
  public func federationStateChanged(_ state: String, _ fields: [String: String] = [:]) {
    poll.post { [unowned self] in
      let report = "\(state) \(fields.sorted { $0.key < $1.key })"
      guard let federation, federation.lastReport != report else { return }
      federation.state = state
      federation.lastReport = report
      log.log(
        .info, "federation link \(state)",
        fields: [("node", engine.federationSettings?.node ?? "")]
          + fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
      onStatusChange?()
    }
  }

  /// From the link's threads: the highest id this node has in the stream
  /// (nil: none), read once the link is up, in the poll's next pass.
  public func ownLinesFound(upTo id: MessageID?) {
    poll.post { [unowned self] in engine.streamHoldsOwnLines(upTo: id) }
  }

  /// From the link's threads: the stream was found created at `created`,
  /// at each (re)connection; another time than before is a lost or reset
  /// stream, read again from its start.
  public func streamFound(created: Timestamp) {
    poll.post { [unowned self] in
      // Before this run offered any line, the end of this pass offers
      // the whole outbox, as at start.
      guard engine.streamFound(created: created), let federation,
        let offered = federation.offeredUpTo
      else { return }
      // The outbox now holds this node's latest lines again, before
      // those still waiting: the ones offered before are given again,
      // and the rest when durable, as usual.
      let again = engine.outbox.filter { $0.id <= offered }
      log.log(
        .info, "federation link publishes this node's latest lines again",
        fields: [("node", engine.federationSettings?.node ?? ""), ("lines", "\(again.count)")])
      federation.link.republish(again)
    }
  }

  /// From the link's threads: the stream refuses this node's lines, and
  /// why (nil: a line was stored again). Shared `SAY` is refused meanwhile
  /// (chatbroker(8), "FEDERATION").
  public func publishRefused(_ reason: String?) {
    poll.post { [unowned self] in
      guard engine.streamRefusal != reason else { return }
      engine.streamRefuses(reason)
      let node = [("node", engine.federationSettings?.node ?? "")]
      if let reason {
        log.log(
          .error, "federation link cannot publish: shared SAY is refused",
          fields: node + [("reason", reason), ("outbox", "\(engine.outboxCount)")])
      } else {
        log.log(.info, "federation link publishes again", fields: node)
      }
      onStatusChange?()
    }
  }

  /// At the end of every pass (``endOfPass()``): hands the outbox lines
  /// that are durable by the committer's count to the link, since a line
  /// published and then rolled back here would reach other hosts though
  /// its author was told `STORAGE`; and sends the link back to read again
  /// when lines it read were not applied.
  func offerDurableOutbox() {
    guard let federation else { return }
    let applied = engine.streamSequences
    if StreamReader.allCases.contains(where: { applied[$0] < federation.readUpTo[$0] }) {
      federation.readUpTo = applied
      federation.readThrough = applied
      federation.epoch += 1
      federation.link.restart(after: applied, epoch: federation.epoch)
    }
    if let last = engine.newestOutboxID, federation.notedUpTo.map({ last > $0 }) ?? true {
      federation.waiting.append((last, committer.writtenCount))
      federation.notedUpTo = last
    }
    let durable = committer.durableCount
    var durableUpTo: MessageID?
    while let first = federation.waiting.first, first.journalCount <= durable {
      durableUpTo = first.upTo
      federation.waiting.removeFirst()
    }
    guard let durableUpTo else { return }
    let after = federation.offeredUpTo.map { MessageID(value: $0.value + 1) } ?? MessageID(value: 0)
    let fresh = after <= durableUpTo ? engine.outbox(in: after...durableUpTo) : []
    federation.offeredUpTo = durableUpTo
    if !fresh.isEmpty { federation.link.publish(fresh) }
  }

  /// After a failed sync: the outbox holds only durable lines now, the
  /// others were undone; those not offered yet are noted again at the
  /// end of this pass, under the durable count.
  func federationRolledBack() {
    guard let federation else { return }
    federation.waiting.removeAll()
    federation.notedUpTo = federation.offeredUpTo
    // Lines read back may have been undone, and wait in the outbox again.
    federation.readThrough = engine.streamSequences
  }
}

import Foundation
import LineProtocol

@testable import Broker

/// An engine on a fake clock, output and journal: every line it sends is
/// checked, every record it writes must read back as itself.
final class FuzzWorld {
  final class Clock: WallClock {
    var now = Timestamp(rfc3339: "2026-11-30T17:00:00.000Z")!
    let timeZone = TimeZone(identifier: "Europe/Berlin")!
  }

  final class Output: EngineOutput {
    func send(_ outgoing: Outgoing, to connection: ConnectionID, kind: LineKind) {
      // Events only IRC shows (an INVITE, a TAGMSG, someone going away)
      // have no line-protocol form: the line wire writes nothing for them.
      switch outgoing.event {
      case .invited, .signal, .awayChanged:
        if outgoing.line.isEmpty { return }
      default: break
      }
      checkBrokerLine(outgoing.line, "line to connection \(connection)")
    }
    func close(_ connection: ConnectionID) {}
    func armTimer(at due: Timestamp?) {}
  }

  final class Journal: JournalSink {
    func append(_ records: [JournalRecord]) throws(StorageError) {
      for record in records { checkRoundTrip(record) }
    }
  }

  final class Users: UserDirectory {
    func userExists(_ name: String) -> Bool { name == "alice" || name == "bob" }
  }

  let clock = Clock()
  let output = Output()
  let engine: Engine
  private var nextConnection = 1

  init() {
    var limits = Limits()
    limits.historyPerConversation = 20
    limits.pendingPerUser = 20
    engine = Engine(limits: limits, clock: clock, users: Users(), journal: Journal())
    engine.attach(output)
  }

  /// A framed line, read by the line protocol's codec as the shell does.
  func receive(_ frame: Frame, from connection: ConnectionID) {
    switch LineCodec.request(from: frame, maximumLineBytes: engine.limits.lineBytes) {
    case .success(let request): engine.receive(request, from: connection)
    case .failure(let error): engine.refuse(error, from: connection)
    }
  }

  @discardableResult
  func connect(_ user: String) -> ConnectionID {
    let id = ConnectionID(nextConnection)
    nextConnection += 1
    engine.connect(id, user: user)
    return id
  }
}

/// A record the broker writes must read back as exactly that record: the
/// journal may never hold what replay would call damage.
func checkRoundTrip(_ record: JournalRecord) {
  let line = record.jsonLine
  let parsed = line.dropLast().withUnsafeBufferPointer { buffer in
    Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
  }
  guard case .success(let again) = parsed, again == record else {
    fatalError("record does not read back: \(String(decoding: line, as: UTF8.self)) \(parsed)")
  }
}

import Foundation
import LineProtocol

@testable import Broker

/// Target `remote`: what other hosts send a host that shares rooms
/// (chatbroker(8), "FEDERATION"), read as the link reads it and handed to
/// the engine. Each input line is a message of the stream at the next
/// sequence, `S<subject> <payload>` as the rooms' reader reads it,
/// `1<subject> <payload>` or `2<subject> <payload>` as the readers of
/// direct messages do; `L<subject> <payload>`, the answer to the direct get
/// that finds this node's last id at start; or `P<subject> <payload>`, a
/// presence announcement. Then a local user reads everything a client can
/// be shown of the shared rooms and direct messages: every line must be
/// clean, and every record read back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRemote(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let world = FuzzWorld()
  world.engine.federate(FederationSettings(node: "h1", patterns: ["#ops", "#team-*"]))
  world.engine.streamHoldsOwnLines(upTo: nil)
  let alice = world.connect("alice")
  world.receive(.line("JOIN #ops"), from: alice)
  var sequence: UInt64 = 0
  let input = UnsafeBufferPointer(start: data, count: count)
  for line in input.split(separator: UInt8(ascii: "\n")) {
    guard let kind = line.first,
      let space = line.dropFirst().firstIndex(of: UInt8(ascii: " "))
    else { continue }
    let subject = String(decoding: line[(line.startIndex + 1)..<space], as: UTF8.self)
    let payload = Array(line[(space + 1)...])
    payload.withUnsafeBytes { bytes in
      let readers: [UInt8: StreamReader] = [
        UInt8(ascii: "S"): .rooms, UInt8(ascii: "1"): .dmFirst, UInt8(ascii: "2"): .dmSecond,
      ]
      switch kind {
      case _ where readers[kind] != nil:
        sequence += 1
        if var read = FederationSubjects.line(subject: subject, payload: bytes, sequence: sequence)
        {
          read.position.reader = readers[kind]
          world.engine.receive(read)
        }
      case UInt8(ascii: "L"):
        let found = FederationSubjects.line(subject: subject, payload: bytes, sequence: 0)
        world.engine.streamHoldsOwnLines(upTo: found?.position.origin)
      case UInt8(ascii: "P"):
        if let (room, node, users) = FederationSubjects.announcement(
          subject: subject, payload: bytes)
        {
          world.engine.remotePresence(room: room, node: node, users: users)
        }
      default:
        break
      }
    }
  }
  for request in [
    "WHO #ops", "HISTORY #ops 1000", "ROOMS", "CONVERSATIONS", "HISTORY @bob@h2 1000",
    "WHO #team-a", "HISTORY #team-a 1000",
  ] {
    world.receive(.line(request), from: alice)
  }
  world.engine.snapshot().forEachRecord { checkRoundTrip($0) }
  return 0
}

import Foundation
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// The records of private rooms (chatbroker(8), "access", "invite") are
/// held to the rules of ACCESS and INVITE on replay.
@Suite("Journal: access and invite records are validated on replay")
struct JournalAccessRecordTests {
  private func damage(_ line: String) -> String? {
    let result = Array(line.utf8).withUnsafeBufferPointer { buffer in
      Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
    }
    guard case .failure(let error) = result else { return nil }
    return error.reason
  }

  @Test(
    "an access record holds public, invite or group=<group>; an invite names a user and a room",
    arguments: [
      ##"{"type":"access","room":"#ops","access":"group=","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"private","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"group=a b","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"ops","access":"invite","user":"alice","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"access","room":"#ops","access":"invite","user":"a\u001b","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"invite","room":"#ops","user":"-x","time":"2026-11-30T17:55:01.204Z"}"##,
      ##"{"type":"invite","room":"#ops","user":"carol"}"##,
    ])
  func badAccess(line: String) {
    #expect(damage(line) != nil)
  }

  @Test("an access or invite record for a room the journal has not created changes nothing")
  func accessBeforeRoom() {
    let chat = EngineHarness()
    let time = chat.clock.now
    chat.engine.replay(.access(RoomName("#ops")!, .invited, user: "alice", at: time))
    chat.engine.replay(.invite(RoomName("#ops")!, user: "carol", at: time))
    chat.engine.finishReplay()
    let carol = chat.connect("carol")
    #expect(chat.send(carol, "JOIN #ops") == ["OK JOIN #ops 1"])
    #expect(chat.send(carol, "ACCESS #ops") == ["OK ACCESS #ops public"])
  }
}

import Broker
import Foundation
import LineProtocol
import Testing

@Suite("Journal records: JSON Lines that jq can read and the broker reads back")
struct JournalRecordTests {
  static let time = Timestamp(rfc3339: "2026-11-30T18:00:00.000Z")!
  static let later = Timestamp(rfc3339: "2026-12-24T17:00:00.250Z")!

  static let records: [JournalRecord] = [
    .header(nextID: MessageID(value: 12345)),
    .room(RoomName("#ops")!, created: time),
    .message(
      StoredMessage(id: MessageID(value: 1), time: time, author: "alice", text: "deploy now"),
      target: .room(RoomName("#ops")!)),
    .message(
      StoredMessage(
        id: MessageID(value: 2), time: time, author: "bob",
        text: "quotes \" backslash \\ tab\t slash / ünïcödé 漢字 🎉 \u{2028}"),
      target: .user("alice")),
    .schedule(
      PendingMessage(
        id: MessageID(value: 3), target: .user("bob"), author: "alice", created: time,
        due: later, text: ":starts with a colon")),
    .cancel(MessageID(value: 3), at: time),
    .delivery(MessageID(value: 4), at: later),
    .series(
      PendingMessage(
        id: MessageID(value: 5), target: .room(RoomName("#ops")!), author: "alice",
        created: time, due: later, text: "stand-up"),
      Series(
        rule: Recurrence(
          pattern: .weekly(weekdays: 0b11111), secondsOfDay: 9 * 3600,
          timeZone: TimeZone(identifier: "Europe/Berlin")!, end: .count(10)),
        done: 3)),
    // A paused series with an RFC 5545 rule (chatbroker(8), "series").
    .series(
      PendingMessage(
        id: MessageID(value: 8), target: .user("bob"), author: "alice", created: time,
        due: later, text: "wrap-up"),
      Series(
        rule: try! Recurrence.parse(
          "rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;DTSTART=20261201T000000/Europe/Berlin",
          defaultZone: TimeZone(identifier: "UTC")!, verb: .sayEvery),
        done: 1, paused: true)),
    .occurrence(MessageID(value: 6), series: MessageID(value: 5), at: time, next: later),
    .occurrence(MessageID(value: 7), series: MessageID(value: 5), at: later, next: nil),
    .reschedule(MessageID(value: 3), due: later, rule: nil, at: time),
    .reschedule(
      MessageID(value: 5), due: later,
      rule: Recurrence(
        pattern: .interval(milliseconds: 900_000),
        timeZone: TimeZone(identifier: "America/New_York")!,
        end: .until(year: 2027, month: 3, day: 1)),
      at: time),
    .edit(MessageID(value: 5), text: "stand-up \"now\"", at: time),
    .member(user: "alice", room: RoomName("#ops")!, at: time),
    .leave(user: "alice", room: RoomName("#ops")!, at: later),
    // Removed by an operator (KICK, or a ban): since 1.5.
    .leave(user: "carol", room: RoomName("#plan")!, at: later, by: "alice"),
    .read(user: "alice", target: .user("bob"), id: MessageID(value: 2), at: later),
    // Where a user's last session left a room: since 1.6.
    .seen(user: "alice", room: RoomName("#ops")!, id: MessageID(value: 2), at: time),
    // Rooms shared across hosts (chatbroker(8), "FEDERATION").
    .streamPosition(StreamPosition(sequence: 7, node: "h2", origin: MessageID(value: 9))),
    .streamSequence(8),
    .streamLastID(node: "h1", id: MessageID(value: 1295)),
    .streamCreated(time, offset: 40),
    // Private rooms (chatbroker(8), "access", "invite").
    .access(RoomName("#ops")!, .group("ops"), user: "alice", at: time),
    .access(RoomName("#ops")!, .invited, user: "alice", at: time),
    .access(RoomName("#ops")!, nil, user: "bob", at: later),
    .invite(RoomName("#ops")!, user: "carol", at: later),
  ]

  @Test("every record reads back as itself", arguments: records)
  func roundTrip(_ record: JournalRecord) throws {
    let line = record.jsonLine
    #expect(line.last == UInt8(ascii: "\n"))
    #expect(line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") }, "one line per record")
    let parsed = try line.dropLast().withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
    #expect(parsed == record)
  }

  @Test("a batch of records written into one buffer holds each record's line, in order")
  func appendedIntoOneBuffer() {
    var batch = Array("earlier bytes\n".utf8)
    for record in Self.records { record.appendJSONLine(to: &batch) }
    #expect(batch == Array("earlier bytes\n".utf8) + Self.records.flatMap(\.jsonLine))
  }

  @Test("every record is a JSON object Foundation can read, with its type first")
  func standardJSON() throws {
    for record in Self.records {
      let object = try JSONSerialization.jsonObject(with: Data(record.jsonLine))
      let dictionary = try #require(object as? [String: Any])
      #expect(dictionary["type"] is String)
      #expect(String(decoding: record.jsonLine, as: UTF8.self).hasPrefix("{\"type\":"))
    }
    let tricky = Self.records[3].jsonLine
    let decoded = try JSONSerialization.jsonObject(with: Data(tricky)) as? [String: Any]
    #expect(
      decoded?["text"] as? String == "quotes \" backslash \\ tab\t slash / ünïcödé 漢字 🎉 \u{2028}")
  }

  @Test("the broker reads what other JSON writers may produce: spaces, escapes, unknown fields")
  func tolerantReading() throws {
    let line =
      ##"{ "type" : "message", "id":"a", "to":"#ops", "from":"alice", "extra": [1], "at":"2026-11-30T18:00:00.000Z", "text":"\u00e9\ud83c\udf89\/" }"##
    // Arrays are not written by the broker, so they are refused, not skipped.
    #expect(throws: JournalFormatError.self) { try Self.parse(line) }
    let plain =
      ##"{ "type" : "message", "id":"a", "to":"#ops", "from":"alice", "later_field": 7, "at":"2026-11-30T18:00:00.000Z", "text":"\u00e9\ud83c\udf89\/" }"##
    guard case .message(let message, let target) = try Self.parse(plain) else {
      Issue.record("not a message")
      return
    }
    #expect(message.text == "é🎉/")
    #expect(target == .room(RoomName("#ops")!))
  }

  @Test(
    "damaged lines are refused with a reason",
    arguments: [
      ##"{"type":"message","id":"1","to":"#ops","from":"alice","at":"2026-11-30T18:00:00.000Z"}"##,
      ##"{"type":"message","id":"1","to":"ops","from":"alice","at":"2026-11-30T18:00:00.000Z","text":"x"}"##,
      ##"{"type":"message","id":"1","to":"#ops","from":"alice","at":"yesterday","text":"x"}"##,
      ##"{"type":"sticker","id":"1"}"##,
      ##"{"type":"journal","version":2,"next_id":"1"}"##,
      ##"{"type":"cancel","id":"1","at":"2026-11-30T18:00:00.000Z""##,
      ##"{"type":"cancel","id":"1","at":"2026-11-30T18:00:00.000Z"} x"##,
      // A series' paused is 1 or absent; its rule is held to SAYEVERY's.
      ##"{"type":"series","id":"5","to":"#ops","from":"alice","created":"2026-11-30T18:00:00.000Z","due":"2026-12-24T17:00:00.250Z","rule":"daily@09:00/UTC","done":0,"paused":2,"text":"x"}"##,
      ##"{"type":"series","id":"5","to":"#ops","from":"alice","created":"2026-11-30T18:00:00.000Z","due":"2026-12-24T17:00:00.250Z","rule":"rrule:FREQ=SECONDLY;DTSTART=20261201T000000/UTC","done":0,"text":"x"}"##,
      "{\"type\":\"message\",\"id\":\"1\",\"to\":\"#ops\",\"from\":\"a\",\"at\":\"2026-11-30T18:00:00.000Z\",\"text\":\"\u{1}\"}",
      "",
    ])
  func damaged(_ line: String) {
    #expect(throws: JournalFormatError.self) { try Self.parse(line) }
  }

  static func parse(_ line: String) throws -> JournalRecord {
    try Array(line.utf8).withUnsafeBufferPointer { try JournalRecord(jsonLine: $0) }
  }
}

extension JournalRecord: CustomTestStringConvertible {
  public var testDescription: String {
    String(decoding: jsonLine.dropLast(), as: UTF8.self)
  }
}

import ProtocolFuzz
import Testing

/// What the dirty-read oracle reads in a line (``Fingerprint/shown(in:viewer:)``),
/// on both wires: each kind of change where chatbroker(7) and the IRC
/// gateway show it, and nothing in a refusal, which names what was asked.
@Suite("Dirty-read fingerprints")
struct DirtyReadFingerprintTests {
  let room = Fingerprint.roomName(7)
  let token = Fingerprint.token(8)

  func shown(_ line: String, to viewer: String = "bob") -> Set<Fingerprint> {
    Set(Fingerprint.shown(in: Array(line.utf8), viewer: viewer))
  }

  @Test("modes, the key and the limit of the room, in OK MODE, MODE, 324 and IRC MODE lines")
  func modes() {
    let expected: Set<Fingerprint> = [
      .mode(room, letter: "m"), .mode(room, letter: "t"), .text(token), .limit(room, 10_042),
    ]
    #expect(shown("OK MODE \(room) +kmlt \(token) 10042") == expected)
    #expect(shown(":vm 324 bob \(room) +kmlt \(token) :10042\r") == expected)
    #expect(shown("MODE \(room) alice +m-t") == [.mode(room, letter: "m")])
    #expect(shown(":alice!alice@vm MODE \(room) +l 10042\r") == [.limit(room, 10_042)])
    #expect(shown("OK MODE \(room) +b 3").isEmpty, "a count of bans is no limit")
  }

  @Test("texts, masks and reasons by their token; rooms by the lines that list them")
  func textsAndRooms() {
    #expect(shown("BAN \(room) \(token)!*@* alice 2026-12-03T21:14:06.477Z") == [.text(token)])
    #expect(shown("KICK \(room) bob alice :out \(token)") == [.text(token)])
    #expect(
      shown("ROOM \(room) 1 PRIVATE", to: "carol") == [.room(room), .roomFor(room, user: "carol")])
    #expect(shown(":vm 353 bob = \(room) :bob\r") == [.room(room), .roomFor(room, user: "bob")])
    #expect(shown("OK WHO \(room) 0").isEmpty, "a reply naming the room asked about")
    #expect(
      shown("HIST \(room) 1a 2026-12-03T21:14:06.477Z alice :said xdt81q") == [.text("xdt81q")])
  }

  @Test("refusals show nothing, on either wire")
  func refusals() {
    #expect(shown("ERR MODE STORAGE :\(room) +k \(token)").isEmpty)
    #expect(shown(":vm 404 bob \(room) :said \(token)\r").isEmpty)
    #expect(shown(":vm NOTICE bob :MODE STORAGE: \(token)\r").isEmpty)
  }

  @Test("OK ROOMS with MORE, a page of 1000 rooms, is a well-formed reply")
  func roomsPage() {
    #expect(LineShape.problem(Array("OK ROOMS 1000 MORE".utf8)) == nil)
    #expect(LineShape.problem(Array("OK ROOMS 1000 LESS".utf8)) != nil)
  }

  @Test("a finding names the kind of request refused, not words of its answer")
  func requestKinds() {
    let answer = " (answered :vm NOTICE root :JOIN refused: nothing was accepted, try again)"
    #expect(DirtyReadLedger.kind(of: "JOIN #xdr1q" + answer) == "JOIN")
    #expect(DirtyReadLedger.kind(of: "JOIN #xdr1q invite" + answer) == "JOIN invite")
    #expect(DirtyReadLedger.kind(of: "MODE #xdr1q +m (answered ERR MODE STORAGE :x)") == "MODE +m")
  }
}

import Broker
import LineProtocol
import TestSupport
import Testing

/// Operators, modes and KICK on the line protocol (chatbroker(7),
/// "Moderation"): enforced by the engine, journaled as `mode` records.
@Suite("Engine: operators, modes and KICK")
struct EngineModerationTests {
  /// alice creates #ops (its operator), bob and carol join it.
  private func room() -> (EngineHarness, ConnectionID, ConnectionID, ConnectionID) {
    let chat = EngineHarness()
    let alice = chat.connect("alice")
    let bob = chat.connect("bob")
    let carol = chat.connect("carol")
    chat.send(alice, "JOIN #ops")
    chat.send(bob, "JOIN #ops")
    chat.send(carol, "JOIN #ops")
    for connection in [alice, bob, carol] { _ = chat.output.take(connection) }
    return (chat, alice, bob, carol)
  }

  @Test(
    "the creator is the operator; +o and +v are told to the room, and only an operator changes modes"
  )
  func operators() {
    let (chat, alice, bob, carol) = room()
    #expect(chat.send(alice, "MODE #ops") == ["OK MODE #ops +"])
    #expect(
      chat.send(bob, "MODE #ops +t") == ["ERR MODE NOTOPERATOR :you are not an operator of #ops"])
    #expect(chat.send(alice, "MODE #ops +o bob") == ["OK MODE #ops +o bob"])
    #expect(chat.output.take(bob) == ["MODE #ops alice +o bob"])
    #expect(chat.output.take(carol) == ["MODE #ops alice +o bob"])
    #expect(
      chat.send(bob, "MODE #ops +v carol -o alice").first?.hasPrefix(
        "ERR MODE SYNTAX :no change takes \"-o\"") == true)
    #expect(chat.send(bob, "MODE #ops +v-o carol alice") == ["OK MODE #ops +v-o carol alice"])
    _ = chat.output.take(alice)
    #expect(
      chat.send(alice, "MODE #ops +t") == ["ERR MODE NOTOPERATOR :you are not an operator of #ops"])
    #expect(chat.engine.membershipPrefixes(of: "bob", in: RoomName("#ops")!) == "@")
    #expect(chat.engine.membershipPrefixes(of: "carol", in: RoomName("#ops")!) == "+")
    #expect(chat.engine.membershipPrefixes(of: "alice", in: RoomName("#ops")!) == "")
    #expect(chat.engine.membershipPrefixes(of: "root", in: RoomName("#ops")!) == "@")
    #expect(chat.send(bob, "MODE #ops +o nobody").last?.hasPrefix("ERR MODE NOSUCHUSER") == true)
    let dave = chat.connect("dave")
    #expect(chat.send(bob, "MODE #ops +v dave") == ["ERR MODE NOTMEMBER :dave is not in #ops"])
    _ = dave
  }

  @Test("bad changes get a clear error and change nothing")
  func badInput() {
    let (chat, alice, _, _) = room()
    let refusals = [
      "MODE #ops +x": "ERR MODE SYNTAX :x is not a mode",
      "MODE #ops +l": "ERR MODE SYNTAX :+l needs a whole number",
      "MODE #ops +l ten": "ERR MODE SYNTAX :\"ten\" is not a whole number",
      "MODE #ops +l 0": "ERR MODE SYNTAX :\"0\" is not a whole number",
      "MODE #ops +k": "ERR MODE SYNTAX :+k needs a key",
      "MODE #ops +k a,b": "ERR MODE SYNTAX :\"a,b\" is not a key",
      "MODE #ops +k \(String(repeating: "k", count: 33))": "ERR MODE SYNTAX :",
      "MODE #ops +k invite": "ERR MODE SYNTAX :\"invite\" is not a key",
      // A TAB would be a control character in the words of OK MODE and BAN
      // (found by chatfuzz: `MODE #a b )<TAB>b`).
      "MODE #ops +k a\tb": "ERR MODE SYNTAX :",
      "MODE #ops +b )\tb": "ERR MODE SYNTAX :",
      "MODE #ops b )\tb": "ERR MODE SYNTAX :",
      "MODE #ops +tnmsitn": "ERR MODE LIMIT :one MODE makes at most 6 changes",
      "MODE #ops +t +x": "ERR MODE SYNTAX :no change takes \"+x\"",
      "MODE #ops +tx": "ERR MODE SYNTAX :x is not a mode",
    ]
    for (line, start) in refusals {
      let answer = chat.send(alice, line)
      #expect(answer.count == 1 && answer[0].hasPrefix(start), "\(line): \(answer)")
    }
    #expect(chat.send(alice, "MODE #ops") == ["OK MODE #ops +"])
    #expect(chat.send(alice, "MODE #ops +k \(String(repeating: "k", count: 32))").count == 1)
    #expect(chat.send(alice, "MODE #ops").first?.hasPrefix("OK MODE #ops +k kkkk") == true)
  }

  @Test("+t: only operators set the topic; +n: only members write; +m: operators and voiced")
  func writing() {
    let (chat, alice, bob, carol) = room()
    chat.send(alice, "MODE #ops +tm")
    _ = chat.output.take(bob)
    _ = chat.output.take(carol)
    #expect(
      chat.send(bob, "TOPIC #ops :mine") == [
        "ERR TOPIC NOTOPERATOR :only an operator of #ops sets its topic (+t)"
      ])
    #expect(chat.send(alice, "TOPIC #ops :ours").last == "OK TOPIC #ops")
    _ = chat.output.take(bob)
    #expect(
      chat.send(bob, "SAY #ops hi") == [
        "ERR SAY MODERATED :#ops is moderated (+m): only its operators and voiced members write to it"
      ])
    #expect(chat.send(bob, "ACTION #ops waves").first?.hasPrefix("ERR ACTION MODERATED") == true)
    chat.send(alice, "MODE #ops +v bob")
    _ = chat.output.take(bob)
    #expect(chat.send(bob, "SAY #ops hi").first?.hasPrefix("OK SAY") == true)
    chat.send(alice, "MODE #ops -m+n")
    let outsider = chat.connect("dave")
    #expect(
      chat.send(outsider, "SAY #ops hi") == [
        "ERR SAY NOTJOINED :#ops takes lines from its members only (+n): join it first"
      ])
    #expect(
      chat.send(outsider, "SAYAT #ops +1h hi").first?.hasPrefix("ERR SAYAT NOTJOINED") == true)
    chat.send(alice, "MODE #ops -n")
    #expect(chat.send(outsider, "SAY #ops hi").first?.hasPrefix("OK SAY") == true)
  }

  @Test("+b: a banned user may not join or write, the list is BAN lines; +l: FULL; +k: BADKEY")
  func joining() {
    let (chat, alice, bob, carol) = room()
    #expect(chat.send(alice, "MODE #ops +b Dave") == ["OK MODE #ops +b dave!*@*"])
    #expect(
      chat.send(alice, "MODE #ops +b") == [
        "BAN #ops dave!*@* alice 2026-11-30T17:00:00.000Z", "OK MODE #ops +b 1",
      ])
    let dave = chat.connect("dave")
    #expect(chat.send(dave, "JOIN #ops") == ["ERR JOIN BANNED :you are banned from #ops"])
    #expect(chat.send(dave, "SAY #ops hi").first?.hasPrefix("ERR SAY BANNED") == true)
    chat.send(alice, "MODE #ops -b dave!*@*")
    chat.send(alice, "MODE #ops +l 3")
    #expect(
      chat.send(dave, "JOIN #ops") == ["ERR JOIN FULL :#ops has 3 members, its limit (+l 3)"])
    chat.send(carol, "PART #ops")
    chat.send(alice, "MODE #ops +k beer")
    #expect(
      chat.send(dave, "JOIN #ops") == ["ERR JOIN BADKEY :#ops has a key (+k): JOIN #ops key=<key>"])
    #expect(
      chat.send(dave, "JOIN #ops key=wine") == ["ERR JOIN BADKEY :that is not the key of #ops"])
    // A keyed room's lines are its members' (Engine.mayRead): to dave
    // it is as a room without history.
    chat.send(bob, "SAY #ops the key is beer")
    #expect(chat.send(dave, "HISTORY #ops") == ["OK HISTORY #ops 0"])
    #expect(chat.send(bob, "HISTORY #ops").count == 2)
    _ = chat.output.take(bob)
    #expect(chat.send(dave, "JOIN #ops key=beer") == ["OK JOIN #ops 3"])
    #expect(chat.send(bob, "MODE #ops").last == "OK MODE #ops +kl beer 3")
    #expect(chat.send(carol, "MODE #ops") == ["ERR MODE NOACCESS :#ops is not open to you"])
  }

  @Test("the ban list holds at most 64 masks")
  func banLimit() {
    let (chat, alice, _, _) = room()
    for index in 0..<64 { chat.send(alice, "MODE #ops +b spam\(index)") }
    #expect(
      chat.send(alice, "MODE #ops +b spam64") == [
        "ERR MODE LIMIT :#ops has 64 bans, the most a room keeps; take one back first"
      ])
    #expect(chat.send(alice, "MODE #ops +b spam0") == ["OK MODE #ops"], "no change is no error")
  }

  @Test("+s: a secret room is listed to its members and operators alone")
  func secret() {
    let (chat, alice, bob, _) = room()
    chat.send(alice, "MODE #ops +s")
    _ = chat.output.take(bob)
    let dave = chat.connect("dave")
    #expect(chat.send(dave, "ROOMS") == ["OK ROOMS 0"])
    #expect(chat.send(bob, "ROOMS") == ["ROOM #ops 3", "OK ROOMS 1"])
  }

  @Test("KICK: an operator removes a member, who gets the KICK line and no longer has the room")
  func kick() {
    let (chat, alice, bob, carol) = room()
    #expect(
      chat.send(bob, "KICK #ops carol") == ["ERR KICK NOTOPERATOR :you are not an operator of #ops"]
    )
    #expect(chat.send(alice, "KICK #ops dave") == ["ERR KICK NOTMEMBER :dave is not in #ops"])
    #expect(
      chat.send(alice, "KICK #nosuch bob") == ["ERR KICK NOACCESS :#nosuch is not open to you"])
    #expect(
      chat.send(alice, "KICK #ops bob :spam") == ["KICK #ops bob alice :spam", "OK KICK #ops bob"])
    #expect(chat.output.take(bob) == ["KICK #ops bob alice :spam"])
    #expect(chat.output.take(carol) == ["KICK #ops bob alice :spam"])
    #expect(
      chat.send(alice, "WHO #ops") == ["MEMBER #ops alice", "MEMBER #ops carol", "OK WHO #ops 2"])
    #expect(chat.send(bob, "CONVERSATIONS") == ["OK CONVERSATIONS 0"])
    let outsider = chat.connect("dave")
    #expect(
      chat.send(outsider, "KICK #ops carol") == ["ERR KICK NOTJOINED :you have not joined #ops"])
    #expect(chat.send(bob, "JOIN #ops") == ["OK JOIN #ops 3"], "a kick is no ban")
  }

  @Test(
    "INVITE: a member invites to a public room, an operator to a private one, nobody who is in it")
  func invite() {
    let (chat, alice, bob, carol) = room()
    let dave = chat.connect("dave")
    #expect(
      chat.send(dave, "INVITE #ops carol") == ["ERR INVITE NOTJOINED :you have not joined #ops"])
    #expect(
      chat.send(bob, "INVITE #ops carol") == ["ERR INVITE ALREADYIN :carol is in #ops already"])
    #expect(chat.send(bob, "INVITE #ops dave") == ["OK INVITE #ops dave"])
    #expect(chat.output.take(dave) == ["INVITE #ops dave bob"])
    chat.send(alice, "MODE #ops +i")
    _ = chat.output.take(carol)
    _ = chat.output.take(bob)
    #expect(
      chat.send(bob, "INVITE #ops dave") == [
        "ERR INVITE NOTOPERATOR :only an operator of #ops invites to it (+i)"
      ])
    #expect(chat.send(dave, "JOIN #ops") == ["ERR JOIN NOACCESS :#ops is not open to you"])
    #expect(chat.send(alice, "INVITE #ops dave") == ["OK INVITE #ops dave"])
    #expect(chat.send(dave, "JOIN #ops").last == "OK JOIN #ops 4")
  }

  @Test("the modes survive a restart and a compaction, and a failed sync takes them back")
  func durable() throws {
    let (chat, alice, _, _) = room()
    chat.send(alice, "MODE #ops +tnk-o+vb beer alice bob spam")
    chat.send(alice, "MODE #ops +o carol")
    let restarted = chat.restarted()
    let carol = restarted.connect("carol")
    #expect(restarted.send(carol, "MODE #ops") == ["OK MODE #ops +knt beer"])
    #expect(restarted.engine.membershipPrefixes(of: "bob", in: RoomName("#ops")!) == "+")
    #expect(restarted.engine.membershipPrefixes(of: "alice", in: RoomName("#ops")!) == "")
    var compacted: [JournalRecord] = []
    restarted.engine.snapshot().forEachRecord { compacted.append($0) }
    let fresh = EngineHarness()
    for record in compacted { fresh.engine.replay(record) }
    fresh.engine.finishReplay()
    let again = fresh.connect("carol")
    #expect(fresh.send(again, "MODE #ops") == ["OK MODE #ops +knt beer"])
    #expect(
      fresh.send(again, "MODE #ops +b") == [
        "BAN #ops spam!*@* alice 2026-11-30T17:00:00.000Z", "OK MODE #ops +b 1",
      ])

    restarted.engine.trackUnsyncedRecords()
    restarted.send(carol, "MODE #ops -t+m")
    restarted.engine.rollBack(restarted.engine.unsyncedRecordCount)
    #expect(restarted.send(carol, "MODE #ops") == ["OK MODE #ops +knt beer"])
  }

  @Test("a mode record the parser would refuse is a journal error")
  func validated() throws {
    for bad in [
      ##"{"type":"mode","room":"#ops","mode":"+x","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##,
      ##"{"type":"mode","room":"#ops","mode":"+i","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##,
      ##"{"type":"mode","room":"#ops","mode":"+l","value":"-1","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##,
      ##"{"type":"mode","room":"#ops","mode":"+k","value":"a b","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##,
      ##"{"type":"mode","room":"#ops","mode":"+o","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##,
    ] {
      var line = Array(bad.utf8)
      let parsed = line.withUnsafeMutableBufferPointer {
        try? JournalRecord(jsonLine: UnsafeBufferPointer($0))
      }
      #expect(parsed == nil, "\(bad)")
    }
    let good =
      ##"{"type":"mode","room":"#ops","mode":"+b","value":"bob!*@*","user":"alice","time":"2026-11-30T17:00:00.000Z"}"##
    var line = Array(good.utf8)
    let parsed = line.withUnsafeMutableBufferPointer {
      try? JournalRecord(jsonLine: UnsafeBufferPointer($0))
    }
    #expect(parsed.map { String(decoding: $0.jsonLine.dropLast(), as: UTF8.self) } == good)
  }
}

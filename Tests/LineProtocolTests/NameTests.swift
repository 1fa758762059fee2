import LineProtocol
import TestSupport
import Testing

@Test func roomNamesFoldASCIILetters() {
  #expect(RoomName("#Ops") == RoomName("#ops"))
  #expect(RoomName("#OPS")?.description == "#ops")
  #expect(RoomName("#Build-Logs_2.0")?.description == "#build-logs_2.0")
  #expect(Set(["#ops", "#Ops", "#OPS", "#oPs"].compactMap { RoomName($0) }).count == 1)
  #expect(RoomName("#ops") != RoomName("#ops2"))
  let sorted = ["#b", "#A", "#c", "#a1"].compactMap { RoomName($0) }.sorted()
  #expect(sorted.map(\.description) == ["#a", "#a1", "#b", "#c"])
}

@Test(arguments: [
  "#a", "#0", "#-", "#.", "#_", "#a.b_c-d", "#" + String(repeating: "z", count: 32),
  "#" + String(repeating: "Z", count: 32),
])
func acceptsRoomName(_ name: String) {
  #expect(RoomName(name) != nil)
  #expect(RoomName(name)?.description == name.lowercased())
  #expect(RoomName.maximumLength == 32)
}

@Test(arguments: [
  "", "#", "ops", "ops#", "##ops", "#ops!", "# ops", "#ops ", "#a/b", "#a:b", "#a@b", "#a+b",
  "#öps", "#ops\u{0}", "#\u{1B}", "@ops", "#" + String(repeating: "z", count: 33),
  "#" + String(repeating: "a", count: 100),
])
func rejectsRoomName(_ name: String) {
  #expect(RoomName(name) == nil)
}

@Test(arguments: [
  "alice", "Alice", "a", "bob.smith", "bob_smith", "bob-smith", "b0b", "_apt", "0", "host$",
  String(repeating: "u", count: 32),
])
func acceptsUserName(_ name: String) {
  #expect(UserName.isValid(name))
  #expect(Target("@" + name) == .user(name))
}

@Test(arguments: [
  "", "-bob", "$", "bo$b", "bob$$", "bob!", "bob smith", "böb", "bob/x", "@bob", "#ops",
  "bob\u{1}", String(repeating: "u", count: 33),
])
func rejectsUserName(_ name: String) {
  #expect(!UserName.isValid(name))
  #expect(Target("@" + name) == nil)
}

@Test func targetsAreRoomsOrUsers() {
  #expect(Target("#Ops") == .room(RoomName("#ops")!))
  #expect(Target("@alice") == .user("alice"))
  #expect(Target("@Alice") == .user("Alice"))  // Login names are not folded.
  #expect(Target("#Ops")?.description == "#ops")
  #expect(Target("@bob")?.description == "@bob")
  #expect(Target("alice") == nil)
  #expect(Target("@") == nil)
  #expect(Target("") == nil)
  let line = "SAY @bob hi"
  let word = line.split(separator: " ")[1]
  #expect(Target(word) == .user("bob"))
}

private let idValues: [UInt64] = [
  0, 1, 9, 10, 35, 36, 37, 1295, 1296, 46_655, 46_656, 1 << 32, 1 << 63, UInt64.max - 1,
]

/// Ids the broker can hand out: up to ``MessageID/maximumValue``.
@Test(arguments: idValues.filter { $0 <= MessageID.maximumValue } + [MessageID.maximumValue])
func messageIDRoundTripsThroughBase36(_ value: UInt64) {
  let id = MessageID(value: value)
  let text = id.description
  #expect(text == String(value, radix: 36))
  #expect(text.allSatisfy { $0.isASCII && ($0.isNumber || $0.isLowercase) })
  #expect(MessageID(text) == id)
  #expect(MessageID(text) != MessageID.none)
}

@Test(arguments: 1...5)
func randomMessageIDsRoundTrip(seed: Int) {
  var generator = SeededGenerator(seed: UInt64(seed))
  for _ in 0..<2000 {
    let id = MessageID(value: UInt64.random(in: 0...MessageID.maximumValue, using: &generator))
    #expect(MessageID(id.description) == id)
  }
}

@Test func messageIDsOrderByValue() {
  #expect(MessageID("z")! < MessageID("10")!)
  #expect(MessageID("8f3k2")! < MessageID("8f3k3")!)
  // 8f3k4 in base 36: 8·36⁴ + 15·36³ + 3·36² + 20·36 + 4.
  let expected: UInt64 = 13_436_928 + 699_840 + 3888 + 720 + 4
  #expect(MessageID("8f3k4")?.value == expected)
}

/// Well-formed ids the broker can never have issued map to `.none`, which
/// matches no message, so such a request answers NOSUCHMSG rather than BADNAME.
@Test(arguments: [
  "A", "Z", "8F3K4", "aBc", "00", "0a", "007", "0000000000000000000000000000000z",
  "3w5e11264sgsf",  // UInt64.max, reserved for .none itself
  "3w5e11264sgsg",  // one past UInt64.max
  "1000000000000",  // one past zzzzzzzzzzzz, the largest id handed out
  "1y2p0ij32e8e7",  // Int64.max
  "zzzzzzzzzzzzz", String(repeating: "z", count: 32), "1" + String(repeating: "0", count: 31),
])
func messageIDWithNoPossibleMessageIsNone(_ text: String) {
  #expect(MessageID(text) == MessageID.none)
}

@Test(arguments: [
  "", "a-b", "a_b", "a.b", "#ops", "@bob", "é", "8f3k4 ", " 8f3k4", "１",
  String(repeating: "a", count: 33), String(repeating: "A", count: 33),
])
func rejectsMessageIDForm(_ text: String) {
  #expect(MessageID(text) == nil)
}

@Test func messageIDLengthLimit() {
  #expect(MessageID.maximumLength == 32)
  #expect(MessageID(String(repeating: "Q", count: 32)) == MessageID.none)
  #expect(MessageID(String(repeating: "Q", count: 33)) == nil)
  #expect(MessageID("0") == MessageID(value: 0))
}

/// The journal and MSG lines write ids with appendDescription; it must
/// write exactly what `description` says, for every size of id.
@Test(arguments: idValues)
func messageIDAppendsItsDescription(_ value: UInt64) {
  var bytes: [UInt8] = Array("x ".utf8)
  MessageID(value: value).appendDescription(to: &bytes)
  #expect(String(decoding: bytes, as: UTF8.self) == "x " + MessageID(value: value).description)
}

import Foundation
import LineProtocol
import Testing

@Suite("JSON strings as the journal, chatsh --json and the log write them")
struct JSONStringTests {
  @Test("quotes, backslashes and control characters are escaped, other text is left as UTF-8")
  func escapes() {
    #expect(JSONString.quoted("a\"b\\c\n\t\r\u{1}é漢🎉") == #""a\"b\\c\n\t\r\u0001é漢🎉""#)
    #expect(JSONString.quoted("") == #""""#)
    #expect(JSONString.quoted("DEL\u{7F}") == #""DEL\u007f""#)
  }

  @Test("C1 controls and the JavaScript line ends U+2028 and U+2029 are escaped")
  func escapesC1AndSeparators() {
    #expect(JSONString.quoted("\u{80}x\u{9F}") == #""\u0080x\u009f""#)
    #expect(JSONString.quoted("a\u{2028}b\u{2029}c") == #""a\u2028b\u2029c""#)
    // Neighbours of the escaped ones stay as they are.
    #expect(JSONString.quoted("\u{A0}°\u{2027}\u{202A}€“") == "\"\u{A0}°\u{2027}\u{202A}€“\"")
  }

  /// Plain text is skipped eight bytes at a time: each character that is
  /// escaped, and each lead byte of one that is not, is found wherever it
  /// falls in such a run.
  @Test("an escaped character is found at any position in a long plain text")
  func escapesAnywhereInLongText() {
    let plain = String(repeating: "abcdefgh", count: 6)
    let cases: [(Character, String)] = [
      ("\u{1}", #"\u0001"#), ("\"", #"\""#), ("\\", #"\\"#), ("\u{7F}", #"\u007f"#),
      ("\u{85}", #"\u0085"#), ("\u{2028}", #"\u2028"#), ("é", "é"), ("\u{2027}", "\u{2027}"),
      ("\u{A0}", "\u{A0}"),
    ]
    for (character, written) in cases {
      for position in 0...plain.count {
        var text = plain
        text.insert(character, at: text.index(text.startIndex, offsetBy: position))
        var expected = plain
        expected.insert(
          contentsOf: written, at: expected.index(expected.startIndex, offsetBy: position))
        #expect(JSONString.quoted(text) == "\"" + expected + "\"", "at \(position)")
      }
    }
  }

  @Test("a JSON reader gets back every string written, whatever it holds", arguments: 1...4)
  func roundTrips(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    let alphabet: [Unicode.Scalar] =
      (0...0xA0).compactMap(Unicode.Scalar.init) + ["é", "\u{2028}", "\u{2029}", "€", "🎉"]
    for _ in 0..<200 {
      var text = String.UnicodeScalarView()
      for _ in 0..<Int.random(in: 0..<20, using: &random) { text.append(random.pick(alphabet)) }
      let written = JSONString.quoted(String(text))
      let read =
        try JSONSerialization.jsonObject(
          with: Data(written.utf8), options: .fragmentsAllowed) as? String
      #expect(read == String(text), "seed \(seed): \(written)")
    }
  }
}

@Suite("UTC times as chatsh reads them from the broker")
struct UTCTimestampTests {
  @Test("the broker's form, no fraction and short or long fractions all read")
  func fractions() {
    #expect(Timestamp(utc: "1970-01-01T00:00:00.000Z")?.milliseconds == 0)
    #expect(Timestamp(utc: "1970-01-01T00:00:01Z")?.milliseconds == 1000)
    #expect(Timestamp(utc: "2026-11-30T18:00:00.5Z")?.description == "2026-11-30T18:00:00.500Z")
    #expect(
      Timestamp(utc: "2026-11-30T18:00:00.123456Z")?.description == "2026-11-30T18:00:00.123Z")
  }

  @Test("anything but a valid UTC date and time is refused")
  func refusals() {
    for text in [
      "nope", "2026-11-30 18:00:00Z", "2026-11-30T18:00:00.Z", "2026-11-30T18:00:00.5xZ",
      "2026-11-30T18:00:00+01:00", "2026-02-30T18:00:00Z", "2026-11-30T24:00:00Z",
    ] {
      #expect(Timestamp(utc: text) == nil, "\(text)")
    }
  }
}

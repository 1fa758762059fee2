import LineProtocol
import Testing

@testable import Broker

/// How a journal line is read as JSON (chatbroker(8), "JOURNAL FORMAT"):
/// strings with and without escapes, in ASCII lines and others, and the
/// reason given for a line that is not a record, whatever the position of
/// the fault in the line.
@Suite("Journal lines read as JSON")
struct JournalLineReadingTests {
  private let head =
    ##"{"type":"message","id":"1","to":"#ops","from":"alice","##
    + #""at":"2026-11-30T17:55:01.204Z","text":"#

  private func read(_ bytes: [UInt8]) -> Result<JournalRecord, JournalFormatError> {
    bytes.withUnsafeBufferPointer { buffer in
      Result { () throws(JournalFormatError) in try JournalRecord(jsonLine: buffer) }
    }
  }

  private func text(of line: [UInt8]) -> String? {
    guard case .success(.message(let message, _)) = read(line) else { return nil }
    return message.text
  }

  private func damage(_ line: [UInt8]) -> String? {
    guard case .failure(let error) = read(line) else { return nil }
    return error.reason
  }

  private func line(text: [UInt8], tail: String = "}") -> [UInt8] {
    Array(head.utf8) + text + Array(tail.utf8)
  }

  @Test("texts with escapes and other scripts read back exactly")
  func textsReadBack() {
    #expect(
      text(of: line(text: Array(#""plain words, long enough""#.utf8))) == "plain words, long enough"
    )
    #expect(
      text(of: line(text: Array(#""caf\u00e9 \"quoted\" back\\slash""#.utf8)))
        == #"café "quoted" back\slash"#)
    #expect(text(of: line(text: Array("\"café ☕ déjà vu\"".utf8))) == "café ☕ déjà vu")
    #expect(text(of: line(text: Array(#""\ud83d\ude00 twelve bytes""#.utf8))) == "😀 twelve bytes")
    // A quote or backslash at every offset within eight-byte steps.
    for offset in 0..<17 {
      let words = String(repeating: "w", count: offset)
      #expect(text(of: line(text: Array("\"\(words)\\\"\(words)\"".utf8))) == "\(words)\"\(words)")
    }
  }

  @Test("a line that is not a record says why, wherever the fault is")
  func faultsAreNamed() {
    let long = Array(String(repeating: "x", count: 20).utf8)
    let quote = UInt8(ascii: "\"")
    #expect(
      damage(line(text: [quote] + long + [0xFF] + long + [quote])) == "a string is not valid UTF-8")
    #expect(damage(line(text: [quote, 0xC3, quote])) == "a string is not valid UTF-8")
    #expect(
      damage(line(text: [quote] + long + [0x01] + long + [quote]))
        == "control byte inside a string")
    #expect(damage(line(text: [quote] + long + [0x1F, quote])) == "control byte inside a string")
    #expect(damage(line(text: [quote] + long, tail: "")) == "unterminated string")
    #expect(
      damage(line(text: [quote] + long + Array(#"\q""#.utf8)))
        == "bad escape at byte \(head.utf8.count + 23)")
    // The first fault in the line is the one named.
    #expect(
      damage(Array(#"{"type" "message","text":""#.utf8) + [0xFF, quote, UInt8(ascii: "}")])
        == "expected ':' at byte 8")
    #expect(
      damage(Array(#"{"type":""#.utf8) + [0xFF, quote] + Array(#" "x"}"#.utf8))
        == "a string is not valid UTF-8")
    #expect(damage(line(text: Array(#""ok"} x"#.utf8), tail: "")) == "text after the object")
  }
}

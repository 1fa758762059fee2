import LineProtocol
import Testing

/// An id no broker can have issued (upper case, leading zeros, beyond
/// zzzzzzzzzzzz) names no message: `NOSUCHMSG`, whose text names the id as
/// it was sent, not a number it was read as (chatbroker(7) NOSUCHMSG).
@Suite("Ids that name no possible message")
struct ImpossibleIDTests {
  private func refusal(_ line: String) -> RequestError? {
    guard case .failure(let error) = RequestParser.parse(line) else { return nil }
    return error
  }

  @Test(
    "HISTORY with an impossible anchor answers NOSUCHMSG naming the id as sent",
    arguments: [
      ("HISTORY #r 10 BEFORE ABC", "ABC", "#r"), ("history #ops after 8F3K3", "8F3K3", "#ops"),
      ("HISTORY @bob 3 AFTER 007", "007", "@bob"),
      ("HISTORY #r BEFORE zzzzzzzzzzzzz", "zzzzzzzzzzzzz", "#r"),
      ("HISTORY #r BEFORE 3w5e11264sgsf", "3w5e11264sgsf", "#r"),
    ])
  func historyAnchor(line: String, id: String, target: String) throws {
    let error = try #require(refusal(line))
    #expect(error.verb == "HISTORY")
    #expect(error.code == .noSuchMessage)
    #expect(error.text == "no message \(id) in the history of \(target)")
  }

  @Test(
    "CANCEL of an impossible id answers NOSUCHMSG naming the id as sent",
    arguments: ["8F3K3", "007", "zzzzzzzzzzzzz", String(repeating: "Q", count: 32)])
  func cancel(id: String) throws {
    let error = try #require(refusal("CANCEL \(id)"))
    #expect(error.code == .noSuchMessage)
    #expect(error.text == "you have no pending message \(id)")
  }

  @Test(
    "RESCHEDULE and EDIT of an impossible id answer NOSUCHMSG naming the id as sent",
    arguments: ["ABC", "007", "zzzzzzzzzzzzz"])
  func rescheduleAndEdit(id: String) throws {
    for (line, verb) in [("RESCHEDULE \(id) +10m", "RESCHEDULE"), ("EDIT \(id) :new text", "EDIT")]
    {
      let error = try #require(refusal(line))
      #expect(error.verb == verb && error.code == .noSuchMessage)
      #expect(error.text == "you have no pending message or series \(id)")
    }
  }

  @Test("syntax is checked before the id: extra words are still SYNTAX")
  func syntaxFirst() throws {
    #expect(try #require(refusal("HISTORY #r BEFORE ABC more")).code == .syntax)
    #expect(try #require(refusal("CANCEL ABC more")).code == .syntax)
    #expect(try #require(refusal("RESCHEDULE ABC +10m more")).code == .syntax)
    #expect(try #require(refusal("EDIT ABC")).code != .noSuchMessage, "no text: not well formed")
  }

  @Test("the largest id is zzzzzzzzzzzz; one more is no possible message")
  func idBound() {
    #expect(MessageID("zzzzzzzzzzzz")?.value == MessageID.maximumValue)
    #expect(MessageID(value: MessageID.maximumValue).description == "zzzzzzzzzzzz")
    #expect(MessageID("1000000000000") == MessageID.none)
    #expect(
      RequestParser.parse("CANCEL zzzzzzzzzzzz")
        == .success(.cancel(MessageID(value: MessageID.maximumValue))))
  }
}

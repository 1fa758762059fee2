import Foundation
import TestSupport
import Testing

/// `chatsh search` against the real broker (chatsh(1), search): newest
/// first, the fields of `history`, pages followed to `-n`, `--room`, and
/// exit 1 when nothing matches or the broker refuses.
@Suite struct SearchCommandTests {
  @Test("search prints matches newest first as history does; --json, --room and -n")
  func searchPrintsMatches() throws {
    let broker = try BrokerProcess().start()
    for line in ["Deploy failed", "unrelated", "deploy FAILED again"] {
      #expect(try broker.chatsh("say", "#ops", line).status == 0)
    }
    #expect(try broker.chatsh("say", "#dev", "the deploy failed here too").status == 0)
    let plain = try broker.chatsh("search", "deploy", "failed")
    #expect(plain.status == 0, "\(plain.errors)")
    let rows = plain.output.split(separator: "\n").map {
      $0.split(separator: "\t").map(String.init)
    }
    #expect(rows.map { $0.dropFirst().first ?? "" } == ["#dev", "#ops", "#ops"])
    #expect(
      rows.map { $0.last ?? "" } == [
        "the deploy failed here too", "deploy FAILED again", "Deploy failed",
      ])
    let json = try broker.chatsh("search", "--json", "--room", "#ops", "-n", "1", "failed")
    let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: String]
    #expect(object?["text"] == "deploy FAILED again")
    #expect(object?["target"] == "#ops")
  }

  @Test("-n beyond one page follows MORE; nothing found and refusals exit 1; usage exits 64")
  func pagesAndExitCodes() throws {
    let broker = try BrokerProcess().start()
    let lines = (1...130).map { "build \($0) broke" }
    #expect(
      try broker.chatsh("say", "#builds", input: lines.joined(separator: "\n") + "\n").status == 0)
    let many = try broker.chatsh("search", "-n", "125", "build")
    #expect(many.status == 0)
    let texts = many.output.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
    #expect(texts.count == 125)
    #expect(texts.first == "build 130 broke" && texts.last == "build 6 broke")
    let none = try broker.chatsh("search", "nowhere")
    #expect(none.status == 1 && none.output.isEmpty)
    #expect(none.errors.contains("no message you can read holds all of: nowhere"))
    let refused = try broker.chatsh("search", "a", "b", "c", "d", "e", "f", "g", "h", "i")
    #expect(refused.status == 1 && refused.errors.contains("LIMIT"))
    let usage = try broker.chatsh("search")
    #expect(usage.status == 64 && usage.errors.contains("usage: chatsh search"))
    #expect(try broker.chatsh("search", "--room", "ops", "x").status == 64)
  }
}

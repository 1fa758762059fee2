import Foundation
import TestSupport
import Testing

/// Messages of several lines with the real chatsh and broker
/// (chatbroker(7), `BLOCK`; chatsh(1), `say --block`).
@Suite struct BlockScriptTests {
  @Test("printf 'a\\nb\\n' | chatsh say --block: another client gets one MSG ... BLOCK :a\\nb")
  func sayBlockFromStandardInput() throws {
    let broker = try BrokerProcess().start()
    let reader = try broker.connect()
    #expect(try reader.request("JOIN #x").last?.hasPrefix("OK JOIN #x") == true)
    let said = try broker.chatsh("say", "--block", "#x", input: "a\nb\n")
    #expect(said.status == 0 && said.output.isEmpty && said.errors.isEmpty, "\(said)")
    #expect(try reader.expect("MSG #x ").hasSuffix(" \(NSUserName()) BLOCK :a\\nb"))

    let json = try broker.chatsh("history", "--json", "#x")
    #expect(json.output.contains(#""text":"a\nb""#), "\(json)")
    let plain = try broker.chatsh("history", "#x")
    #expect(plain.output.hasSuffix("\ta\\nb\n"), "\(plain)")
  }

  @Test("say --block: 340 lines go as 4 messages, in order, and chatsh says so once")
  func longInputIsSplit() throws {
    let broker = try BrokerProcess().start()
    let lines = (1...340).map { "line \($0)" }
    let said = try broker.chatsh(
      "say", "--block", "#builds", input: lines.joined(separator: "\n") + "\n")
    #expect(said.status == 0, "\(said)")
    #expect(said.errors == "chatsh: 340 lines sent as 4 messages\n")
    let history = try broker.chatsh("history", "--json", "#builds")
    let texts = try history.output.split(separator: "\n").map { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["text"] as? String ?? ""
    }
    #expect(texts.count == 4)
    #expect(texts.joined(separator: "\n") == lines.joined(separator: "\n"))
    let refused = try broker.chatsh("say", "--block", "--at", "18:00", "#builds", "x")
    #expect(refused.status == 64 && refused.errors.contains("--block"), "\(refused)")
  }
}

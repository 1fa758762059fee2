import Foundation
import LineProtocol
import TestSupport
import Testing

@testable import Broker

/// The libFuzzer dictionary (Fuzz/protocol.dict) is written by hand; this
/// keeps it in step with the tables it draws from, so that a new verb or
/// journal record is fuzzed from the start.
@Suite("The fuzz dictionary lists every verb and record type")
struct FuzzDictionaryTests {
  /// The dictionary's entries, each as the bytes it stands for.
  private static let entries: Set<String> = {
    let text =
      (try? String(contentsOfFile: Repository.path("Fuzz/protocol.dict"), encoding: .utf8)) ?? ""
    return Set(
      text.split(separator: "\n").filter { $0.hasPrefix("\"") && $0.hasSuffix("\"") }.map {
        String($0.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
      })
  }()

  @Test("every verb of chatbroker(7), as a request starts", arguments: Verb.allCases)
  func verb(_ verb: Verb) {
    #expect(
      Self.entries.contains(verb.rawValue) || Self.entries.contains(verb.rawValue + " "),
      "add \"\(verb.rawValue) \" to Fuzz/protocol.dict")
  }

  @Test("every journal record type of chatbroker(8)", arguments: RecordType.names)
  func recordType(_ name: String) {
    #expect(
      Self.entries.contains("\"\(name)\""), "add \"\\\"\(name)\\\"\" to Fuzz/protocol.dict")
  }
}

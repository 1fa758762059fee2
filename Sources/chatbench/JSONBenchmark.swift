import Broker
import Foundation
import LineProtocol
import Posix

/// `chatbench json [--records N]`: the journal's hand-written JSON against
/// Foundation's `JSONEncoder`/`JSONDecoder` on the same message records, the
/// measurement the journal's choice of encoder rests on.
enum JSONBenchmark {
  static let mode = BenchmarkMode(name: "json", synopsis: "[--records N]", run: run)

  /// The message record as Foundation would see it.
  struct CodableMessage: Codable {
    var type: String
    var id: String
    var to: String
    var from: String
    var at: String
    var text: String
  }

  static func run(_ arguments: [String]) -> ExitCode {
    guard let options = parseOptions(arguments, known: ["--records"]),
      let count = parseCount(options["--records"] ?? "200000")
    else { return .usage }
    let time = Timestamp(milliseconds: 1_798_131_600_000)
    let text = String(repeating: "journal text \"quoted\" ", count: 4)
    let records = (0..<count).map { index in
      JournalRecord.message(
        StoredMessage(
          id: MessageID(value: UInt64(index + 1)), time: time, author: "alice", text: text),
        target: .room(RoomName("#ops")!))
    }
    let codables = (0..<count).map { index in
      CodableMessage(
        type: "message", id: String(index + 1, radix: 36), to: "#ops", from: "alice",
        at: time.description, text: text)
    }
    print("journal JSON, \(count) message records (release build):")

    var lines: [[UInt8]] = []
    let ownEncode = measure { lines = records.map(\.jsonLine) }
    let encoder = JSONEncoder()
    var foundationLines: [Data] = []
    let foundationEncode = measure {
      foundationLines = codables.map { try! encoder.encode($0) }
    }
    var parsed = 0
    let ownDecode = measure {
      for line in lines {
        line.dropLast().withUnsafeBufferPointer { buffer in
          if (try? JournalRecord(jsonLine: buffer)) != nil { parsed += 1 }
        }
      }
    }
    let decoder = JSONDecoder()
    var decoded = 0
    let foundationDecode = measure {
      for line in foundationLines
      where (try? decoder.decode(CodableMessage.self, from: line)) != nil {
        decoded += 1
      }
    }
    guard parsed == count, decoded == count else {
      printError("chatbench json: read back \(parsed) and \(decoded) of \(count)")
      return .software
    }
    func row(_ name: String, _ seconds: Double) -> String {
      "  \(name)  \(format(seconds * 1e9 / Double(count), 0)) ns/record"
    }
    print(row("encode, hand-written:    ", ownEncode))
    print(
      row("encode, JSONEncoder:     ", foundationEncode)
        + "  (\(format(foundationEncode / ownEncode, 1))x)")
    print(row("decode, hand-written:    ", ownDecode))
    print(
      row("decode, JSONDecoder:     ", foundationDecode)
        + "  (\(format(foundationDecode / ownDecode, 1))x)")
    return .success
  }

  static func measure(_ body: () -> Void) -> Double {
    let started = monotonicNanoseconds()
    body()
    return Double(monotonicNanoseconds() - started) / 1e9
  }
}

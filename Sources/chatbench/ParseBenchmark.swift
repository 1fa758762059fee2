import LineProtocol
import Posix

/// `chatbench parse [--lines N] [--runs R]`: frames and parses N typical
/// request lines (default 1,000,000), fed to a `LineFramer` in 64 KiB chunks
/// as a socket read would deliver them, and reports lines/s and ns/line.
///
/// The mix follows what a busy broker reads: mostly SAY with ~100-byte
/// texts, then JOIN, HISTORY, PING and SAYAT. The input is built before the
/// clock starts; every line must parse, or the run fails.
enum ParseBenchmark {
  static let mode = BenchmarkMode(name: "parse", synopsis: "[--lines N] [--runs R]", run: run)

  static let chunkSize = 64 * 1024

  static func run(_ arguments: [String]) -> ExitCode {
    guard let options = parseOptions(arguments, known: ["--lines", "--runs"]) else {
      return .usage
    }
    guard let lines = parseCount(options["--lines"] ?? "1000000"),
      let runs = parseCount(options["--runs"] ?? "5")
    else {
      printError("chatbench parse: --lines and --runs take a positive number")
      return .usage
    }

    let input = makeInput(lines: lines)
    print(
      "parse: \(lines) lines, \(input.count) bytes, \(chunkSize / 1024) KiB chunks, \(runs) runs")
    var best = Duration.seconds(Int64.max)
    for run in 1...runs {
      let clock = ContinuousClock()
      var tally = Tally()
      let elapsed = clock.measure { tally = frameAndParse(input) }
      guard tally.requests == lines, tally.errors == 0, tally.frames == lines else {
        printError("chatbench parse: expected \(lines) requests, got \(tally)")
        return .software
      }
      best = min(best, elapsed)
      print("  run \(run): \(report(lines: lines, bytes: input.count, elapsed: elapsed))")
    }
    print("best: \(report(lines: lines, bytes: input.count, elapsed: best))")
    return .success
  }

  struct Tally: CustomStringConvertible {
    var frames = 0
    var requests = 0
    var errors = 0
    /// Sums a little of every request, so no work can be optimised away.
    var checksum = 0

    var description: String {
      "\(frames) frames, \(requests) requests, \(errors) errors"
    }
  }

  /// The measured work: what a connection does with the bytes it reads.
  @inline(never)
  static func frameAndParse(_ input: [UInt8]) -> Tally {
    var framer = LineFramer()
    var tally = Tally()
    input.withUnsafeBytes { all in
      var offset = 0
      while offset < all.count {
        let end = min(offset + chunkSize, all.count)
        framer.append(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
        offset = end
        while let frame = framer.next() { tally.count(frame) }
      }
    }
    if let frame = framer.finish() { tally.count(frame) }
    return tally
  }

  static func report(lines: Int, bytes: Int, elapsed: Duration) -> String {
    let seconds =
      Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let perSecond = Double(lines) / seconds
    let nanoseconds = seconds * 1e9 / Double(lines)
    let megabytes = Double(bytes) / seconds / 1_048_576
    return
      "\(fixed(seconds * 1000, 1)) ms, \(fixed(perSecond / 1e6, 2))M lines/s, "
      + "\(fixed(nanoseconds, 1)) ns/line, \(fixed(megabytes, 1)) MiB/s"
  }

  static func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = String(scaled / Int(scale))
    guard digits > 0 else { return whole }
    let fraction = String(scaled % Int(scale))
    return whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
  }

  /// N request lines in the benchmark's mix, from a fixed seed so every run
  /// and every machine parses the same bytes. Written by hand, not with
  /// LineCodec's request encoder: the mix is what people and scripts type
  /// (lower case, text with and without its `:`, capitals in room names),
  /// which the encoder would make uniform.
  static func makeInput(lines: Int) -> [UInt8] {
    var generator = SplitMix64(seed: 0x00C0_FFEE)
    let rooms = ["#ops", "#builds", "#dev", "#random", "#release-2.0", "#db_oncall", "#Infra"]
    let users = ["alice", "bob", "carol", "dave", "build-bot"]
    let words = [
      "deploy", "starts", "in", "five", "minutes", "the", "graphs", "look", "fine", "on",
      "staging", "rollback", "if", "errors", "spike", "build", "passed", "failed", "ticket",
      "see", "https://ci.example/job/4711", "ok", "thanks", "lunch?", "über", "naïve", "→",
    ]
    func text(bytes: Int) -> String {
      var result = ""
      while result.utf8.count < bytes {
        if !result.isEmpty { result += " " }
        result += words.randomElement(using: &generator)!
      }
      return result
    }
    var input: [UInt8] = []
    input.reserveCapacity(lines * 90)
    for _ in 0..<lines {
      let room = rooms.randomElement(using: &generator)!
      let line: String
      switch Int.random(in: 0..<100, using: &generator) {
      case 0..<45:
        line = "SAY \(room) \(text(bytes: Int.random(in: 80...120, using: &generator)))"
      case 45..<55:
        line = "say \(room) :\(text(bytes: Int.random(in: 80...120, using: &generator)))"
      case 55..<60:
        let user = users.randomElement(using: &generator)!
        line = "SAY @\(user) \(text(bytes: Int.random(in: 20...100, using: &generator)))"
      case 60..<70:
        line = "JOIN \(room)"
      case 70..<78:
        line = "HISTORY \(room) \(Int.random(in: 1...200, using: &generator))"
      case 78..<80:
        let id = String(UInt64.random(in: 1...10_000_000, using: &generator), radix: 36)
        line = "HISTORY \(room) 50 BEFORE \(id)"
      case 80..<90:
        line = "PING \(Int.random(in: 0...999_999, using: &generator))"
      default:
        let when = ["+10m", "18:00", "+1h30m", "@1798131600", "2026-12-24T18:00:00+01:00"]
          .randomElement(using: &generator)!
        line = "SAYAT \(room) \(when) \(text(bytes: Int.random(in: 40...100, using: &generator)))"
      }
      input.append(contentsOf: line.utf8)
      input.append(UInt8(ascii: "\n"))
    }
    return input
  }
}

extension ParseBenchmark.Tally {
  fileprivate mutating func count(_ frame: Frame) {
    frames += 1
    guard case .line(let line) = frame else {
      errors += 1
      return
    }
    switch RequestParser.parse(line) {
    case .success(let request):
      requests += 1
      checksum &+= request.verb.rawValue.utf8.count
    case .failure:
      errors += 1
    }
  }
}

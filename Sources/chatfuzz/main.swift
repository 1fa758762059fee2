import Foundation
import ProtocolFuzz

/// chatfuzz: a protocol fuzzer for chatbroker. It opens many connections
/// that send random and mutated requests, floods and half-closes, while one
/// well-behaved client measures PING latency, and checks every reply
/// against chatbroker(7). Exit status 0 when nothing was found, 1 when
/// something was, 64 for a bad option.
let usage = """
  usage: chatfuzz (--socket path | --broker path) [--seconds n] [--connections n]
                  [--seed n] [--users name,...] [--log path] [--latency-limit ms]
                  [--behaviours name,...] [--keep]
    --socket path      fuzz the broker listening on path
    --broker path      start this chatbroker (with --no-sync on a temporary
                       socket and state directory), restart it after a crash
                       and find the request that crashed it
    --seconds n        how long to fuzz (default 30)
    --connections n    misbehaving connections at once (default 24)
    --seed n           the generator's seed (default 1); a run that found
                       something finds much the same again with its seed
    --users a,b        also connect as these Unix users (root only)
    --log path         the broker's log, scanned for traps at the end
    --latency-limit ms the PING p99 that still passes (default 50)
    --keep             keep the started broker's logs (with backtraces) and state
    --behaviours a,b   only these kinds of clients: \(FuzzConfiguration.behaviourNames.joined(separator: ", "))
                       (default: all)
  """

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("chatfuzz: \(message)\n\(usage)\n".utf8))
  exit(64)
}

var configuration = FuzzConfiguration()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  var name = argument
  var inlineValue: String?
  if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
    name = String(argument[..<equals])
    inlineValue = String(argument[argument.index(after: equals)...])
  }
  func value() -> String {
    if let inlineValue { return inlineValue }
    guard let next = arguments.next() else { fail("\(name) needs a value") }
    return next
  }
  func number(_ range: ClosedRange<Double>) -> Double {
    let text = value()
    guard let parsed = Double(text), range.contains(parsed) else {
      fail("\(name) takes a number from \(range.lowerBound) to \(range.upperBound), not \(text)")
    }
    return parsed
  }
  switch name {
  case "--socket": configuration.socketPath = value()
  case "--broker": configuration.brokerBinary = value()
  case "--seconds": configuration.seconds = number(1...86_400)
  case "--connections": configuration.connections = Int(number(1...1000))
  case "--seed":
    let text = value()
    guard let seed = UInt64(text) else { fail("--seed takes a whole number, not \(text)") }
    configuration.seed = seed
  case "--users": configuration.users = value().split(separator: ",").map(String.init)
  case "--log": configuration.logPath = value()
  case "--keep": configuration.keepFiles = true
  case "--behaviours":
    configuration.behaviours = value().split(separator: ",").map(String.init)
    for name in configuration.behaviours where !FuzzConfiguration.behaviourNames.contains(name) {
      fail("no behaviour \(name)")
    }
  case "--latency-limit": configuration.latencyLimit = number(1...60_000) / 1000
  case "-h", "--help":
    print(usage)
    exit(0)
  default: fail("unknown option \(argument)")
  }
}
if (configuration.socketPath == nil) == (configuration.brokerBinary == nil) {
  fail("give exactly one of --socket and --broker")
}

do {
  let report = try Fuzzer.run(configuration)
  print(report.summary)
  exit(report.passed ? 0 : 1)
} catch {
  FileHandle.standardError.write(Data("chatfuzz: \(error)\n".utf8))
  exit(1)
}

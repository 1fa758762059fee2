import LineProtocol
import Posix

// chatbench: measurements of chatbroker's parts, not tests. Each mode lives
// in its own file and is named in the table below. Exit codes follow
// sysexits(3).

#if canImport(Glibc)
  import Glibc
#endif

/// One way of running chatbench: `chatbench <name> [options]`.
struct BenchmarkMode: Sendable {
  var name: String
  /// The options, as shown after the mode's name in the usage text.
  var synopsis: String
  /// Runs with the arguments after the mode's name; returns the exit code.
  var run: @Sendable ([String]) -> ExitCode
}

let modes: [BenchmarkMode] = [
  ParseBenchmark.mode,
  FanoutBenchmark.mode,
  ScheduleBenchmark.mode,
  DurableBenchmark.mode,
  JSONBenchmark.mode,
  FederationBenchmark.mode,
  SearchBenchmark.mode,
]

var arguments = Array(CommandLine.arguments.dropFirst())
// `--broker PATH`, in any mode: the chatbroker binary to measure instead of
// the one beside chatbench, so that two builds can be run in turn.
if let flag = arguments.firstIndex(of: "--broker") {
  guard flag + 1 < arguments.count else {
    printError("chatbench: --broker needs a value")
    exit(ExitCode.usage.rawValue)
  }
  ServerUnderTest.brokerExecutable = arguments[flag + 1]
  arguments.removeSubrange(flag...(flag + 1))
}
if let name = arguments.first, let mode = modes.first(where: { $0.name == name }) {
  exit(mode.run(Array(arguments.dropFirst())).rawValue)
}
// Asked for, the usage goes to standard output with status 0; after a
// wrong word, to standard error with 64 (EX_USAGE).
let asked = ["-h", "--help", "help"].contains(arguments.first ?? "")
if arguments.first == "--version" {
  print("chatbench \(chatbrokerVersion)")
  exit(ExitCode.success.rawValue)
}
for (index, mode) in modes.enumerated() {
  let line = "\(index == 0 ? "usage:" : "      ") chatbench \(mode.name) \(mode.synopsis)"
  if asked { print(line) } else { printError(line) }
}
exit(asked ? ExitCode.success.rawValue : ExitCode.usage.rawValue)

import Foundation

// chatbench: benchmarks of chatbroker, run in release builds:
//   swift run -c release chatbench fanout [--receivers 10,100,1000] [--compare-redis]
let arguments = CommandLine.arguments
let mode = arguments.count > 1 ? arguments[1] : ""
let options = BenchArguments(arguments.dropFirst(2))
do {
  switch mode {
  case "fanout": try FanoutBenchmark.run(options)
  default:
    FileHandle.standardError.write(Data("usage: chatbench fanout|schedule|durable|parse [options]\n".utf8))
    exit(64)
  }
} catch {
  FileHandle.standardError.write(Data("chatbench: \(error)\n".utf8))
  exit(1)
}

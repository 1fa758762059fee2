import Posix

/// Writes one line to standard error; a failure to do so is ignored.
func printError(_ line: String) {
  try? FileDescriptor.standardError.writeAll(line + "\n")
}

/// Reads `--name value` options (and bare `flags`, stored as "") into a
/// dictionary; `nil` after printing a complaint when an option is unknown or
/// has no value.
func parseOptions(
  _ arguments: [String], known: Set<String>, flags: Set<String> = []
) -> [String: String]? {
  var options: [String: String] = [:]
  var index = 0
  while index < arguments.count {
    let name = arguments[index]
    if flags.contains(name) {
      options[name] = ""
      index += 1
      continue
    }
    guard known.contains(name) else {
      printError("chatbench: unknown option \(name)")
      return nil
    }
    guard index + 1 < arguments.count else {
      printError("chatbench: \(name) needs a value")
      return nil
    }
    options[name] = arguments[index + 1]
    index += 2
  }
  return options
}

/// A positive count written with optional `_` or `,` separators (1_000_000).
func parseCount(_ text: String) -> Int? {
  guard let value = Int(text.filter { $0 != "_" && $0 != "," }), value > 0 else { return nil }
  return value
}

/// A comma-separated list of counts (`10,100,1000`).
func parseCounts(_ text: String) -> [Int]? {
  let counts = text.split(separator: ",").map { parseCount(String($0)) }
  guard !counts.isEmpty, counts.allSatisfy({ $0 != nil }) else { return nil }
  return counts.compactMap { $0 }
}

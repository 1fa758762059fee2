/// One thing the broker did that it promised not to, with how to see it
/// again.
public struct Finding: Sendable {
  /// `crash`, `contract`, `identity`, `freeze`, `latency`, `liveness`,
  /// `log`, `restart`, `privacy`.
  public var category: String
  /// What happened, without the particulars that differ per sighting.
  public var summary: String
  /// The first sighting's particulars.
  public var detail: String
  /// A shell command, or request lines, that show it again.
  public var reproducer: String?
  /// How many times it was seen.
  public var count = 1
}

/// Findings from every thread, each kind of finding kept once with a count.
public final class FindingLog: Sendable {
  private let state = Locked<[Finding]>([])

  public init() {}

  public func record(_ finding: Finding) {
    state.withLock { findings in
      if let index = findings.firstIndex(where: {
        $0.category == finding.category && $0.summary == finding.summary
      }) {
        findings[index].count += 1
        if findings[index].reproducer == nil { findings[index].reproducer = finding.reproducer }
      } else {
        findings.append(finding)
      }
    }
  }

  public func record(_ violation: Violation, behaviour: String) {
    record(
      Finding(
        category: violation.category, summary: violation.kind,
        detail: "\(violation.detail) (a \(behaviour) client)",
        reproducer: violation.request.map { Reproducer.shell([$0]) }))
  }

  public var all: [Finding] { state.withLock { $0 } }

  /// Gives the finding of this category and summary its reproducer.
  public func setReproducer(_ reproducer: String, category: String, summary: String) {
    state.withLock { findings in
      for index in findings.indices
      where findings[index].category == category && findings[index].summary == summary {
        findings[index].reproducer = reproducer
      }
    }
  }
}

/// Shell commands that send exact bytes to the broker, whatever they are.
public enum Reproducer {
  /// `printf '...' | nc -N -U "$SOCK"`, each line followed by LF (or
  /// `lineEnd`, CR LF for IRC) and piped into `connect`, with every byte
  /// that is not plain printable ASCII written as an octal escape, and long
  /// runs of one byte made with `head -c` and `tr`.
  public static func shell(
    _ lines: [[UInt8]], lineEnd: String = "\\n", connect: String = "nc -N -U \"$SOCK\""
  ) -> String {
    var commands: [String] = []
    var format = ""
    func flush() {
      if !format.isEmpty { commands.append("printf '\(format)'") }
      format = ""
    }
    for line in lines {
      var index = 0
      while index < line.count {
        let byte = line[index]
        var run = 1
        while index + run < line.count && line[index + run] == byte { run += 1 }
        if run >= 64, (0x21...0x7E).contains(byte), byte != UInt8(ascii: "'"),
          byte != UInt8(ascii: "\\")
        {
          flush()
          commands.append("head -c \(run) /dev/zero | tr '\\0' '\(UnicodeScalar(byte))'")
          index += run
          continue
        }
        format += escaped(byte)
        index += 1
      }
      format += lineEnd
    }
    flush()
    let input = commands.count == 1 ? commands[0] : "{ \(commands.joined(separator: "; ")); }"
    return "\(input) | \(connect)"
  }

  private static func escaped(_ byte: UInt8) -> String {
    switch byte {
    case UInt8(ascii: "%"): return "%%"
    case UInt8(ascii: "\\"): return "\\\\"
    case UInt8(ascii: "'"): return "\\047"
    case 0x20...0x7E: return String(UnicodeScalar(byte))
    default: return "\\" + String(byte, radix: 8).leftPadded(to: 3)
    }
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}

import Foundation
import LineProtocol

/// The oracle of chatbroker(7)'s promise that no user can stall the
/// others: no request, timer step or replayed record may hold the broker's
/// serving thread beyond the bound. The broker measures every step and logs
/// the slow ones and the longest (chatbroker(8), LOGGING, `slow step` and
/// `longest step`, and `longest_step_ms=` when it stops); at the end of a
/// run the longest step in its logs must stay under `--step-limit`, else a
/// `freeze` finding. A request is named by sending the run's recent lines
/// of its verb again, one at a time, each followed by a `PING`, and taking
/// the one the broker took longest to answer.
///
/// A request step is a finding only when that shows it again: a request's
/// work depends on the request and the broker's state, which the replay
/// has (a broker the run started is started again on its state first, so
/// that work done once per process is done again too), while a step the
/// machine stretched (a page fault that waited on memory compaction, time
/// a hypervisor took) does not come back. Such a step is told in a note.
/// Each replay is timed from the line to the `PING`'s answer, which is
/// never shorter than the step, so a replay under the limit shows a step
/// under it. Timer and replayed-record steps cannot be sent again and are
/// findings whenever they are over.
enum FreezeOracle {
  /// A step the broker logged.
  struct LoggedStep {
    var milliseconds: Double
    var kind: String
    var verb: String
    var line: String
  }

  /// Checks the logs of the run, after the final checks; `owned` is started
  /// again on its state to replay suspects, and stopped after. Returns a
  /// note for the run's summary when a slow request step did not show
  /// again.
  static func check(
    _ owned: OwnedBroker?, socketPath: String, shared: SharedState,
    configuration: FuzzConfiguration
  ) -> String? {
    var logs = owned?.logPaths ?? []
    if let path = configuration.logPath { logs.append(path) }
    let texts = logs.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
    guard
      let longest = texts.compactMap(longestStep(in:)).max(by: { $0.milliseconds < $1.milliseconds }
      )
    else { return nil }
    let limit = configuration.stepLimit * 1000
    guard longest.milliseconds > limit else { return nil }
    var finding = Finding(
      category: "freeze",
      summary: "a \(longest.kind) step held the broker longer than \(format(limit)) ms"
        + (longest.verb.isEmpty ? "" : ": \(longest.verb)"),
      detail: "longest step \(format(longest.milliseconds)) ms, logged as: \(longest.line)")
    if longest.kind == "request" {
      if owned?.isRunning == true { _ = owned?.stop() }
      let started = owned.map { (try? $0.start()) != nil } ?? true
      let lines = shared.linesByVerb.lines(of: longest.verb)
      let replayed = started ? slowest(lines, socketPath: socketPath) : nil
      if owned?.isRunning == true { _ = owned?.stop() }
      if let (culprit, seconds, all) = replayed {
        let restarted = owned == nil ? "" : " to the broker started again on its state"
        let unanswered = all ? "" : " (not all answered within a minute)"
        let again =
          "of the run's last \(lines.count) lines of that verb, sent again alone\(restarted)\(unanswered), the slowest was answered after \(format(seconds * 1000)) ms"
        guard all, seconds * 1000 <= limit else {
          finding.detail += "; " + again
          finding.reproducer = Reproducer.shell([culprit])
          finding.summary += " (\(String(decoding: culprit.prefix(100), as: UTF8.self)))"
          shared.findings.record(finding)
          return nil
        }
        return
          "freeze oracle: one \(longest.verb) step took \(format(longest.milliseconds)) ms (limit \(format(limit)) ms), but \(again): the machine's delay, not the broker's work (\(longest.line))"
      }
    } else if longest.kind == "replay" {
      finding.reproducer = "chatfuzz --keep with this seed, then start chatbroker on the kept state"
    }
    shared.findings.record(finding)
    return nil
  }

  /// The longest step in one log: `slow step` and `longest step` lines,
  /// and the `stopped` line's `longest_step_ms=`.
  static func longestStep(in log: String) -> LoggedStep? {
    var longest: LoggedStep?
    for line in log.split(separator: "\n") {
      let text = String(line)
      let fields = keyValues(text)
      var step: LoggedStep?
      switch fields["msg"] {
      case "slow step", "longest step":
        guard let ms = fields["ms"].flatMap(Double.init) else { continue }
        step = LoggedStep(
          milliseconds: ms, kind: fields["kind"] ?? "", verb: fields["verb"] ?? "", line: text)
      case "stopped":
        guard let ms = fields["longest_step_ms"].flatMap(Double.init) else { continue }
        let what = (fields["longest_step"] ?? "").split(separator: " ").map(String.init)
        step = LoggedStep(
          milliseconds: ms, kind: what.first ?? "", verb: what.count > 1 ? what[1] : "", line: text)
      default: continue
      }
      if let step, step.milliseconds > longest?.milliseconds ?? -1 { longest = step }
    }
    return longest
  }

  /// `key=value` and `key="quoted value"` pairs of a log line
  /// (chatbroker(8), LOGGING).
  static func keyValues(_ line: String) -> [String: String] {
    var fields: [String: String] = [:]
    var rest = Substring(line)
    while let equals = rest.firstIndex(of: "=") {
      let key = rest[..<equals].split(separator: " ").last.map(String.init) ?? ""
      var value = rest[rest.index(after: equals)...]
      if value.first == "\"" {
        value = value.dropFirst()
        var text = ""
        var escaped = false
        var end = value.endIndex
        for index in value.indices {
          let character = value[index]
          if escaped {
            text.append(character)
            escaped = false
          } else if character == "\\" {
            escaped = true
          } else if character == "\"" {
            end = index
            break
          } else {
            text.append(character)
          }
        }
        fields[key] = text
        rest = end < value.endIndex ? value[value.index(after: end)...] : ""
      } else {
        let end = value.firstIndex(of: " ") ?? value.endIndex
        fields[key] = String(value[..<end])
        rest = value[end...]
      }
    }
    return fields
  }

  /// Sends each line alone, followed by a `PING`, and returns the one
  /// answered last, with how long it took, and whether every line was
  /// answered; for at most a minute.
  private static func slowest(_ lines: [[UInt8]], socketPath: String) -> (
    line: [UInt8], seconds: Double, all: Bool
  )? {
    let deadline = monotonicSeconds() + 60
    var slowest: (line: [UInt8], seconds: Double, all: Bool)?
    var answered = 0
    for line in lines where monotonicSeconds() < deadline {
      guard let connection = try? ProbeConnection(path: socketPath) else { break }
      let started = monotonicSeconds()
      guard (try? connection.send(line + [0x0A])) != nil,
        (try? connection.ping("freeze", 60)) != nil
      else { continue }
      answered += 1
      let seconds = monotonicSeconds() - started
      if seconds > slowest?.seconds ?? -1 { slowest = (line, seconds, false) }
    }
    slowest?.all = answered == lines.count
    return slowest
  }

  private static func format(_ milliseconds: Double) -> String {
    String(format: "%.1f", milliseconds)
  }
}

/// The latest line-protocol lines of each verb sent in the run, floods
/// included, so that a slow step the broker logged with its verb can be
/// told apart: the last ``perVerb`` (to twice as many) of each.
final class LinesByVerb: Sendable {
  static let perVerb = 300
  private let lines = Locked<[String: [[UInt8]]]>([:])

  func remember(_ line: [UInt8]) {
    guard let verb = ProtocolModel.words(line.prefix(16), maxSplits: 1).first?.asciiUppercased,
      ProtocolModel.verbs.contains(verb)
    else { return }
    lines.withLock { table in
      if table[verb]?.last == line { return }
      table[verb, default: []].append(line)
      // Trimmed in halves, so that a line costs no copy of the rest.
      if table[verb]!.count >= 2 * Self.perVerb { table[verb]!.removeFirst(Self.perVerb) }
    }
  }

  /// The lines of `verb`, newest first, each once.
  func lines(of verb: String) -> [[UInt8]] {
    var seen = Set<[UInt8]>()
    return (lines.withLock { $0[verb] } ?? []).reversed().filter { seen.insert($0).inserted }
  }
}

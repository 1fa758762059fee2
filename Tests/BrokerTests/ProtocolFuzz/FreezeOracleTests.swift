import Foundation
import TestSupport
import Testing

@testable import ProtocolFuzz

/// The fuzzer's freeze oracle reads the steps the broker logs
/// (chatbroker(8), LOGGING) and judges a slow request by sending its lines
/// again, and its rule generator draws every grammar chatbroker(7)
/// ("Series") has for a rule.
@Suite("Freeze oracle and rule generator")
struct FreezeOracleTests {
  @Test("the longest step is the largest of the slow, longest and stopped lines")
  func longestStep() throws {
    let log = """
      level=info msg="journal replayed" path=/x records=3 ms=1.0
      level=info msg="longest step" kind=request verb=SEARCH conn=3 user=alice ms=1.2 bound_ms=10.0
      level=warning msg="slow step" kind=request verb=SAYEVERY conn=7 user=alice ms=1681.9 bound_ms=10.0
      level=warning msg="slow step" kind=timer ms=12.5 bound_ms=10.0 suppressed=4
      level=info msg=stopped syncs=9 longest_step_ms=1700.1 longest_step="request SAYEVERY"
      """
    let step = try #require(FreezeOracle.longestStep(in: log))
    #expect(step.milliseconds == 1700.1)
    #expect(step.kind == "request")
    #expect(step.verb == "SAYEVERY")
    let quiet = "level=info msg=\"longest step\" kind=timer ms=2.0 bound_ms=10.0\n"
    #expect(FreezeOracle.longestStep(in: quiet)?.kind == "timer")
    #expect(FreezeOracle.longestStep(in: "level=info msg=\"journal replayed\" ms=9999.0") == nil)
  }

  /// The oracle's verdict on a log that says one `SAY` step took 180 ms,
  /// as a stretched step of a busy machine is logged, after a run whose
  /// only `SAY` line is `say`, with a step limit of `limitMilliseconds`,
  /// judged against a real broker.
  private func verdict(limitMilliseconds: Double, say: String) throws -> (
    findings: [Finding], note: String?
  ) {
    let broker = try BrokerProcess().start()
    let logs = try TemporaryDirectory("fo")
    let log = logs.path("broker.log")
    try Data(
      (#"level=warning msg="slow step" kind=request verb=SAY conn=9 user=root ms=180.7 bound_ms=10.0"#
        + "\n").utf8
    ).write(to: URL(fileURLWithPath: log))
    var configuration = FuzzConfiguration()
    configuration.socketPath = broker.socketPath
    configuration.logPath = log
    configuration.stepLimit = limitMilliseconds / 1000
    let shared = SharedState()
    shared.linesByVerb.remember(Array(say.utf8))
    let note = FreezeOracle.check(
      nil, socketPath: broker.socketPath, shared: shared, configuration: configuration)
    return (shared.findings.all, note)
  }

  @Test("a slow request step whose lines, sent again alone, are answered in time is a note")
  func slowStepNotShownAgain() throws {
    let (findings, note) = try verdict(limitMilliseconds: 100, say: "SAY #a hello")
    #expect(findings.isEmpty)
    let text = try #require(note)
    #expect(text.contains("one SAY step took 180.7 ms (limit 100.0 ms)"), "\(text)")
    #expect(text.contains("the machine's delay"), "\(text)")
  }

  @Test("a slow request step whose lines, sent again alone, are slow too is a freeze")
  func slowStepShownAgain() throws {
    // No SAY is answered within a microsecond: the replay shows it again.
    let (findings, note) = try verdict(limitMilliseconds: 0.001, say: "SAY #a hello")
    #expect(note == nil)
    let finding = try #require(findings.first)
    #expect(finding.category == "freeze")
    #expect(finding.summary.contains("(SAY #a hello)"), "\(finding.summary)")
    #expect(finding.detail.contains("sent again alone"), "\(finding.detail)")
    #expect(finding.reproducer?.contains("SAY #a hello") == true)
  }

  @Test("key=value pairs, quoted values with spaces and escaped quotes")
  func keyValues() {
    let fields = FreezeOracle.keyValues(
      #"level=warning msg="slow step" text="a \"b\" c" ms=3.5 empty="""#)
    #expect(fields["level"] == "warning")
    #expect(fields["msg"] == "slow step")
    #expect(fields["text"] == #"a "b" c"#)
    #expect(fields["ms"] == "3.5")
    #expect(fields["empty"] == "")
  }

  @Test("the rules drawn have every RFC 5545 part, the short forms and calendar expressions")
  func everyGrammar() {
    var random = ProtocolFuzz.SplitMix64(seed: 7)
    let rules = (0..<5000).map { _ in RuleGenerator.rule(using: &random) }
    let parts = [
      "FREQ=MINUTELY", "FREQ=HOURLY", "FREQ=DAILY", "FREQ=WEEKLY", "FREQ=MONTHLY", "FREQ=YEARLY",
      "INTERVAL=", "BYSECOND=", "BYMINUTE=", "BYHOUR=", "BYDAY=", "BYMONTHDAY=-", "BYYEARDAY=",
      "BYWEEKNO=", "BYMONTH=", "BYSETPOS=", "WKST=", "COUNT=", "UNTIL=", "DTSTART=", "EXDATE=",
      "daily@", "weekdays@", "monthly:", "-fri@", "yearly:", "every:", "w:", ",until:", ",count:",
      ",from:", "/Europe/Berlin", "Mon..Fri", "*-*-*", "~01", "*:00/15",
    ]
    for part in parts {
      #expect(rules.contains { $0.contains(part) }, "no rule has \(part)")
    }
    #expect(rules.contains { $0.contains("BYDAY=2") || $0.contains("BYDAY=-1") }, "ordinals")
    var oneWord = ProtocolFuzz.SplitMix64(seed: 8)
    #expect(
      (0..<2000).allSatisfy { _ in
        !RuleGenerator.rule(using: &oneWord, oneWord: true).contains(" ")
      }, "IRC's sched|bot every reads one word")
  }

  @Test("the lines of each verb are kept for naming a slow request, newest first")
  func linesByVerb() {
    let lines = LinesByVerb()
    for index in 0..<1000 {
      lines.remember(Array("SAYEVERY #a daily@09:00 \(index)".utf8))
      lines.remember(Array("PING \(index)".utf8))
    }
    lines.remember(Array("sayevery #a rrule:FREQ=HOURLY x".utf8))
    let kept = lines.lines(of: "SAYEVERY")
    #expect(kept.first == Array("sayevery #a rrule:FREQ=HOURLY x".utf8))
    #expect(kept.count >= LinesByVerb.perVerb)
    #expect(kept.count < 2 * LinesByVerb.perVerb)
    #expect(lines.lines(of: "NOSUCH").isEmpty)
  }
}

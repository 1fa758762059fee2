import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Broker

/// The broker's measure of its steps (chatbroker(8), LOGGING): a step over
/// the bound is logged, a few times at most, the longest so far is in
/// STATUS=, and time the thread did not run (a sleep, another process on
/// the CPU) does not count.
@Suite("Step watch")
struct StepWatchTests {
  final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    var logger: Logger { Logger(sink: { line in self.lines.withLock { $0.append(line) } }) }
    var all: [String] { lines.withLock { $0 } }
  }

  /// Keeps the thread busy for `milliseconds` of its own CPU time.
  static func spin(_ milliseconds: Double) {
    var time = timespec()
    func cpu() -> Double {
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
      return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1e6
    }
    let end = cpu() + milliseconds
    var sink = 0
    while cpu() < end { sink &+= 1 }
    #expect(sink > 0)
  }

  @Test(
    "a step over 10 ms is a slow step; more of them within a second are counted, not logged (real time)"
  )
  func slowStepsRealTime() {
    let lines = Lines()
    let watch = StepWatch(log: lines.logger)
    var started = watch.begin()
    Self.spin(2)
    watch.end(started, .request, what: "SEARCH", fields: [(key: "user", value: "alice")])
    #expect(
      lines.all.count == 1
        && lines.all[0].contains("msg=\"longest step\" kind=request verb=SEARCH user=alice ms="))
    started = watch.begin()
    Self.spin(14)
    watch.end(started, .timer)
    #expect(lines.all.count == 2)
    #expect(
      lines.all.last?.hasPrefix("level=warning msg=\"slow step\" kind=timer ms=1") == true,
      "\(lines.all)")
    #expect(watch.statusText?.hasPrefix("longest step 1") == true)
    #expect(watch.statusText?.hasSuffix(" ms (timer)") == true, "\(watch.statusText ?? "")")
    // Over the bound again, not longer, within the second: counted.
    started = watch.begin()
    Self.spin(11)
    watch.end(started, .request, what: "SAYEVERY")
    #expect(lines.all.count == 2, "\(lines.all)")
    // A longer one is logged anyway, with the count left out.
    started = watch.begin()
    Self.spin(30)
    watch.end(started, .request, what: "SAYEVERY")
    #expect(lines.all.count == 3)
    #expect(lines.all.last?.contains("verb=SAYEVERY ms=") == true)
    #expect(lines.all.last?.hasSuffix(" suppressed=1\n") == true, "\(lines.all)")
    #expect(watch.summaryFields.map(\.key) == ["longest_step_ms", "longest_step"])
    #expect(watch.summaryFields.last?.value == "request SAYEVERY")
  }

  @Test("time the thread does not run is not a step's: a 50 ms sleep is no slow step (real time)")
  func sleepIsNotWorkRealTime() {
    let lines = Lines()
    let watch = StepWatch(log: lines.logger)
    let started = watch.begin()
    usleep(50_000)
    watch.end(started, .request, what: "PING")
    #expect(!lines.all.contains { $0.contains("slow step") }, "\(lines.all)")
    #expect((watch.longest?.nanoseconds ?? 0) < StepWatch.boundNanoseconds)
  }

  @Test("milliseconds are written with one decimal")
  func milliseconds() {
    #expect(StepWatch.milliseconds(10_000_000) == "10.0")
    #expect(StepWatch.milliseconds(1_681_949_999) == "1681.9")
    #expect(StepWatch.milliseconds(49_999) == "0.0")
  }
}

import Dispatch
import Glibc

/// How long each step of the serving thread took (a request, a timer step,
/// a replayed record), and the longest so far: the broker's promise that
/// no user can stall the others is that no step holds the thread beyond
/// ``boundNanoseconds`` (chatbroker(8), LOGGING). Like redis' `SLOWLOG`,
/// it says which step was slow; unlike it, it counts the time the thread
/// ran, not the time it waited for a CPU: a step is the shorter of its
/// wall time and the thread's CPU time since a reading taken at most
/// ``cpuReadingAge`` before it began, so a broker preempted by a busy
/// machine does not look slow, and a reading of the CPU clock (a system
/// call) is made only for steps longer than ``cheapStep`` and at most
/// once a millisecond otherwise.
///
/// Confined to the engine's queue.
public final class StepWatch {
  public enum Kind: String, Sendable {
    case request, timer, replay
  }

  /// The longest step so far: how long, what kind, and what it was.
  public struct Step: Sendable {
    public var nanoseconds: UInt64
    public var kind: Kind
    /// The request's verb; nothing for a timer or replay step.
    public var what: String
    public var fields: [(key: String, value: String)]
  }

  /// The most one step may hold the serving thread (chatbroker(8)).
  public static let boundNanoseconds: UInt64 = 10_000_000
  /// Steps at least this long, and under the bound, are logged as the
  /// longest so far (no line for every microsecond more at start-up).
  static let loggedFloor: UInt64 = 1_000_000
  /// A new longest step under the bound is logged only when it is this
  /// much longer than the last one logged: a few lines over a lifetime.
  static let loggedGrowth = 1.25
  /// Steps over the bound are logged at most once in this long, but for
  /// a new longest one.
  static let slowLineInterval: UInt64 = 1_000_000_000
  static let cheapStep: UInt64 = 500_000
  static let cpuReadingAge: UInt64 = 1_000_000

  public private(set) var longest: Step?
  private let log: Logger
  private var longestLogged: UInt64 = 0
  private var lastSlowLine: UInt64?
  private var slowSuppressed = 0
  /// The thread's CPU time at ``cpuReadAt`` (wall, monotonic).
  private var cpuReading: UInt64 = 0
  private var cpuReadAt: UInt64?

  public init(log: Logger) {
    self.log = log
  }

  /// Marks the start of a step; pass the result to ``end(_:_:what:fields:)``.
  public func begin() -> UInt64 {
    let now = DispatchTime.now().uptimeNanoseconds
    if cpuReadAt.map({ now &- $0 > Self.cpuReadingAge }) ?? true {
      cpuReading = Self.threadCPUTime()
      cpuReadAt = now
    }
    return now
  }

  /// The step begun at `started` is over.
  public func end(
    _ started: UInt64, _ kind: Kind, what: String = "",
    fields: @autoclosure () -> [(key: String, value: String)] = []
  ) {
    var spent = DispatchTime.now().uptimeNanoseconds &- started
    if spent > Self.cheapStep {
      spent = min(spent, Self.threadCPUTime() &- cpuReading)
      cpuReading = Self.threadCPUTime()
      cpuReadAt = DispatchTime.now().uptimeNanoseconds
    }
    let isLongest = spent > (longest?.nanoseconds ?? 0)
    let isSlow = spent > Self.boundNanoseconds
    guard isLongest || isSlow else { return }
    let step = Step(nanoseconds: spent, kind: kind, what: what, fields: fields())
    if isLongest { longest = step }
    let now = DispatchTime.now().uptimeNanoseconds
    let logsLongest =
      isLongest && spent >= Self.loggedFloor
      && Double(spent) >= Double(longestLogged) * Self.loggedGrowth
    let logsSlow = isSlow && lastSlowLine.map { now &- $0 >= Self.slowLineInterval } ?? true
    if logsLongest || logsSlow {
      write(step, slow: isSlow)
      if logsLongest { longestLogged = spent }
      if isSlow { lastSlowLine = now }
    } else if isSlow {
      slowSuppressed += 1
    }
  }

  /// `longest step 12.3 ms (request SAYEVERY)`, for systemd's `STATUS=`.
  public var statusText: String? {
    longest.map { "longest step \(Self.milliseconds($0.nanoseconds)) ms (\(Self.describe($0)))" }
  }

  /// The fields of the shutdown line: the longest step of the run.
  public var summaryFields: [(key: String, value: String)] {
    guard let longest else { return [] }
    return [
      (key: "longest_step_ms", value: Self.milliseconds(longest.nanoseconds)),
      (key: "longest_step", value: Self.describe(longest)),
    ]
  }

  private func write(_ step: Step, slow: Bool) {
    var fields: [(key: String, value: String)] = [(key: "kind", value: step.kind.rawValue)]
    if !step.what.isEmpty { fields.append((key: "verb", value: step.what)) }
    fields += step.fields
    fields += [
      (key: "ms", value: Self.milliseconds(step.nanoseconds)),
      (key: "bound_ms", value: Self.milliseconds(Self.boundNanoseconds)),
    ]
    if slow && slowSuppressed > 0 {
      fields.append((key: "suppressed", value: "\(slowSuppressed)"))
      slowSuppressed = 0
    }
    log.log(slow ? .warning : .info, slow ? "slow step" : "longest step", fields: fields)
  }

  private static func describe(_ step: Step) -> String {
    step.what.isEmpty ? step.kind.rawValue : "\(step.kind.rawValue) \(step.what)"
  }

  /// `1.7`, `12.3`, `9876.5`: tenths of a millisecond.
  static func milliseconds(_ nanoseconds: UInt64) -> String {
    let tenths = (nanoseconds + 50_000) / 100_000
    return "\(tenths / 10).\(tenths % 10)"
  }

  private static func threadCPUTime() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }
}

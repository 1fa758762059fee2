import Foundation

/// The well-behaved client: one connection that sends `PING` every few
/// milliseconds while the others misbehave, and measures how long each
/// answer takes. chatbroker(7) promises that no client slows the others.
final class LatencyProbe: @unchecked Sendable {
  let socketPath: String
  let shared: SharedState
  let interval: Double
  /// Seconds each answered PING took.
  let samples = Locked<[Double]>([])
  /// How long a PING may go unanswered before it counts as a freeze.
  let freezeAfter = 5.0

  init(socketPath: String, shared: SharedState, interval: Double = 0.02) {
    self.socketPath = socketPath
    self.shared = shared
    self.interval = interval
  }

  func run() {
    var connection: ProbeConnection?
    var generation = -1
    var sequence = 0
    while !shared.stopping.load(ordering: .relaxed) {
      let current = shared.generation.load(ordering: .relaxed)
      if shared.paused.load(ordering: .relaxed) || current != generation {
        connection = nil
        generation = current
        if shared.paused.load(ordering: .relaxed) {
          sleepSeconds(0.02)
          continue
        }
      }
      if connection == nil {
        connection = try? ProbeConnection(path: socketPath)
        if connection == nil {
          sleepSeconds(0.05)
          continue
        }
      }
      sequence += 1
      do {
        let seconds = try ping(connection!, "probe\(sequence)")
        samples.withLock { $0.append(seconds) }
        for violation in connection!.violations {
          shared.findings.record(violation, behaviour: "well-behaved PING")
        }
      } catch {
        // The broker crashed or the run ends; the crash is found elsewhere.
        connection = nil
      }
      sleepSeconds(interval)
    }
  }

  /// One PING, waiting as long as it takes (until the run ends); a wait
  /// longer than `freezeAfter` is a finding of its own.
  private func ping(_ connection: ProbeConnection, _ token: String) throws -> Double {
    do {
      return try connection.ping(token, freezeAfter)
    } catch let error as FuzzError where error.description.hasPrefix("no OK PING") {
      let stalled = monotonicSeconds()
      while !shared.stopping.load(ordering: .relaxed) && !connection.ended {
        if (try? connection.readLine(timeout: 0.1)).flatMap({ $0 })
          == Array("OK PING \(token)".utf8)
        {
          break
        }
      }
      let total = freezeAfter + monotonicSeconds() - stalled
      shared.findings.record(
        Finding(
          category: "freeze", summary: "PING unanswered for over \(Int(freezeAfter)) s",
          detail: String(format: "answered after %.1f s", total)))
      return total
    }
  }
}

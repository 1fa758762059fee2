import Foundation
import Glibc

/// Why a test helper gave up: what it waited for, or which call failed.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// How many times longer than on a quiet machine each bound of these tests
/// may take: `CHATBROKER_TEST_TIME_SCALE`, 1 unless set. tools/ci-hardening
/// sets it for the sanitized builds, which run 2 to 15 times slower; the
/// tests that watch real time, whose bounds are the point, do not run there.
/// Read here only: every bounded wait of the tests goes through it.
public let testTimeScale: Double = {
  guard let text = ProcessInfo.processInfo.environment["CHATBROKER_TEST_TIME_SCALE"],
    let scale = Double(text), scale >= 1
  else { return 1 }
  return scale
}()

/// Polls `condition` every `interval` seconds until it holds; throws after
/// `timeout` seconds (times ``testTimeScale``), saying what it waited for
/// and from where. The one bounded wait of the tests, for another process
/// or a screen, where no event can be awaited directly.
public func waitUntil(
  timeout: Double = 10, interval: Double = 0.005, _ what: @autoclosure () -> String,
  fileID: String = #fileID, line: Int = #line, _ condition: () throws -> Bool
) throws {
  let deadline = Date().addingTimeInterval(timeout * testTimeScale)
  while Date() < deadline {
    if try condition() { return }
    usleep(UInt32(interval * 1_000_000))
  }
  if try condition() { return }
  throw TestFailure(
    "\(fileID):\(line): timed out after \(timeout * testTimeScale) s waiting for \(what())")
}

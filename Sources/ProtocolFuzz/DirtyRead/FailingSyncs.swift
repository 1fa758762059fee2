import Foundation
import Glibc

/// A disk whose syncs fail now and then, for the broker the fuzzer starts
/// (`chatfuzz --failing-syncs percent`): the broker runs with syncs on and
/// the FaultySync library in `LD_PRELOAD`, which fails that share of its
/// `fdatasync(2)` calls with EIO, seeded by the run's seed (see
/// faulty_sync.c). Only while the switch file exists: not at start-up, and
/// not at the last sync of the clean stop the run ends with.
/// The tests use it too, with every sync failing after a delay, to act
/// while a doomed sync hangs.
public struct FailingSyncs {
  let percent: Double
  let seed: UInt64
  /// How long a failing sync hangs before it fails.
  let delayMilliseconds: Int
  /// libFaultySync.so, built by `swift build` beside chatfuzz.
  let library: String

  public init(percent: Double, seed: UInt64, delayMilliseconds: Int = 0) throws {
    self.percent = percent
    self.seed = seed
    self.delayMilliseconds = delayMilliseconds
    library = Self.builtLibrary
    guard FileManager.default.fileExists(atPath: library) else {
      throw FuzzError("--failing-syncs needs \(library): build it with swift build")
    }
  }

  /// The broker's options: syncs on (no `--no-sync`), and room creation
  /// unbounded, since every scene of the oracle creates a fresh room while
  /// the fuzzing clients' floods of JOIN use up the users' allowance.
  func brokerArguments(_ arguments: [String]) -> [String] {
    arguments.filter { $0 != "--no-sync" } + [
      "--new-rooms-per-minute", "1000000", "--max-rooms", "1000000",
    ]
  }

  /// libFaultySync.so beside this process's executable (chatfuzz, or the
  /// test bundle), where `swift build` puts it.
  public static var builtLibrary: String {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    while directory.path != "/" {
      directory.deleteLastPathComponent()
      let library = directory.appendingPathComponent("libFaultySync.so").path
      if FileManager.default.fileExists(atPath: library) { return library }
    }
    return "libFaultySync.so"
  }

  /// The broker's environment: this process's, and the library's settings.
  public func environment(switchPath: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["CHATFUZZ_FAILING_SYNCS_DELAY_MS"] = "\(delayMilliseconds)"
    environment["LD_PRELOAD"] = library
    environment["CHATFUZZ_FAILING_SYNCS_PERCENT"] = "\(percent)"
    environment["CHATFUZZ_FAILING_SYNCS_SEED"] = "\(seed)"
    environment["CHATFUZZ_FAILING_SYNCS_SWITCH"] = switchPath
    return environment
  }

  /// Syncs may fail from now on.
  public static func turnOn(_ switchPath: String) {
    let fd = open(switchPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
    if fd >= 0 { close(fd) }
  }

  /// Syncs succeed again.
  public static func turnOff(_ switchPath: String) {
    unlink(switchPath)
  }
}

import Synchronization

/// What the fuzzer's threads share: whether to stop or pause, which
/// generation of the broker they talk to, counters, the findings, and the
/// latest request lines (the suspects when the broker crashes).
final class SharedState: Sendable {
  let findings = FindingLog()
  let stopping = Atomic<Bool>(false)
  /// Set while the broker is being restarted: workers drop their
  /// connections and wait.
  let paused = Atomic<Bool>(false)
  /// Set while the privacy oracle keeps the broker quiet or restarts it
  /// (``PrivacyRun``): a broker that is not running then did not crash.
  let plannedPause = Atomic<Bool>(false)
  /// Bumped whenever the broker crashed: what a connection of an earlier
  /// generation saw is not judged against the contract.
  let generation = Atomic<Int>(0)
  let requestsSent = Atomic<Int>(0)
  let linesReceived = Atomic<Int>(0)
  let repliesChecked = Atomic<Int>(0)
  let connectionsOpened = Atomic<Int>(0)
  /// Of those, the pages opened through the web door (`--web-share`).
  let webConnectionsOpened = Atomic<Int>(0)
  let connectFailures = Atomic<Int>(0)
  private let recent = Locked<(lines: [Suspect], next: Int)>(([], 0))
  /// The latest lines of each verb, floods too, for ``FreezeOracle``.
  let linesByVerb = LinesByVerb()
  static let recentCapacity = 3000
  /// For each kind of IRC violation, the first sighting's suspects (see
  /// ``Violation/suspects``), to replay at the end of the run.
  let ircSuspects = Locked<[String: IRCSuspects]>([:])
  /// The dirty-read oracle's books (`--failing-syncs`), off otherwise.
  let dirtyReads: DirtyReadLedger

  init(failingSyncs: Bool = false) {
    dirtyReads = DirtyReadLedger(enabled: failingSyncs)
  }

  /// Remembers a request line as sent, keeping the latest few thousand.
  func remember(_ line: [UInt8], irc: Bool = false) {
    let line = Suspect(bytes: line, irc: irc)
    recent.withLock { ring in
      if ring.lines.count < Self.recentCapacity {
        ring.lines.append(line)
      } else {
        ring.lines[ring.next] = line
      }
      ring.next = (ring.next + 1) % Self.recentCapacity
    }
  }

  /// The latest request lines, newest first, each once; and forgets them.
  func takeRecent() -> [Suspect] {
    recent.withLock { ring in
      let ordered =
        ring.lines.count < Self.recentCapacity
        ? ring.lines : Array(ring.lines[ring.next...] + ring.lines[..<ring.next])
      ring = ([], 0)
      var seen = Set<Suspect>()
      return ordered.reversed().filter { seen.insert($0).inserted }
    }
  }
}

/// A line sent, on the line protocol or IRC.
struct Suspect: Hashable {
  var bytes: [UInt8]
  var irc: Bool
}

/// Lines one IRC connection sent before a violation, and how it had
/// registered and connected, so that each can be replayed alone.
struct IRCSuspects {
  var violation: Violation
  var capabilities: [String]
  var tcp: Bool
}

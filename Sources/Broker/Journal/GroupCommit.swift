import Dispatch
import Foundation
import Glibc

/// The journal's group commit: one thread that calls `fdatasync` for
/// whatever the engine's queue wrote, and starts the next call as soon as
/// the previous one returns if anything was written meanwhile. No sync
/// waits for the engine's queue to ask for it, and the engine's queue
/// never waits for a sync; the only hand-over on the way to an
/// acknowledgement is the one back to the engine's queue, coalesced so
/// that one block carries however many syncs finished meanwhile.
///
/// After a failed sync the thread stops until ``resume()``: the committer
/// first cuts the journal back (``FileJournal/discardUnsynced(downTo:count:)``).
final class GroupCommit: @unchecked Sendable {
  /// What one sync covers: records up to `count`, ending at byte `size` of
  /// the file that `generation` names (compaction replaces the file).
  struct Target: Sendable {
    var count: UInt64
    var size: Int64
    var generation: Int
    var fd: Int32
  }

  /// What the engine's queue learns: the newest good sync, and a failure
  /// after it if any (after a failure the thread stops).
  struct Outcome {
    var synced: Target?
    var failure: (target: Target, errno: Int32)?
  }

  private let condition = NSCondition()
  private var wanted: Target?
  /// The newest target asked for: asking again for what a sync in flight
  /// already covers must not cost a second sync.
  private var newest: (count: UInt64, generation: Int)?
  private var busy = false
  private var halted = false
  private var stopped = false
  private var delivery = Outcome()
  private var deliveryPosted = false
  /// Descriptors of files compaction replaced, closed once no sync uses them.
  private var retired: [Int32] = []
  /// `fdatasync` calls made: with group commit, far fewer than records.
  private var syncs = 0
  /// Whether the last sync took longer than ``inlineLimit``: then none is
  /// made on the engine's queue, where it would hold up everyone.
  private var lastSyncWasSlow = false
  /// The longest sync that may still be made inline next time: a slow or
  /// stalling disk costs the engine's queue at most one such wait.
  static let inlineLimit = DispatchTimeInterval.milliseconds(1)

  private let synchronize: @Sendable (Int32) -> Int32
  /// Set by ``start(post:deliver:)``, before the thread starts.
  private var post: JournalCommitter.Post = { _ in }
  private var deliver: (Outcome) -> Void = { _ in }

  init(synchronize: @escaping @Sendable (Int32) -> Int32) {
    self.synchronize = synchronize
  }

  /// Starts the thread; `deliver` runs in a pass of the engine's loop,
  /// where `post` runs what it is given (``ReadinessPoll/post(_:)``).
  func start(post: @escaping JournalCommitter.Post, deliver: @escaping (Outcome) -> Void) {
    self.post = post
    self.deliver = deliver
    let thread = Thread { [self] in
      // Named from inside: `top -H` and `perf` show it (Foundation on Linux
      // names only the current thread; the kernel keeps 15 bytes).
      Thread.current.name = "chatbroker-sync"
      run()
    }
    thread.stackSize = 256 << 10
    thread.start()
  }

  /// Ends the thread once its sync in flight returns.
  func stop() {
    condition.withLock {
      stopped = true
      condition.signal()
    }
  }

  /// Records up to `target` are in the file: sync them as soon as possible.
  func request(_ target: Target) {
    condition.withLock {
      if let newest, newest.generation == target.generation, newest.count >= target.count {
        return
      }
      newest = (target.count, target.generation)
      wanted = target
      if !busy { condition.signal() }
    }
  }

  /// Syncs `target` on the calling thread (the engine's queue) and returns
  /// the outcome, if the thread is idle with nothing asked of it; nil
  /// otherwise, and the caller asks with ``request(_:)`` as usual. With one
  /// client waiting, handing the sync to the thread and its outcome back
  /// cost two wake-ups per round trip, a tenth of it on this machine's disk
  /// (`perf trace`: 250 µs per fdatasync, 330 µs per round trip); Redis
  /// syncs in its event loop likewise. Not after a sync that took longer
  /// than ``inlineLimit``: on a slow disk the thread syncs, and the engine
  /// goes on answering everyone else meanwhile.
  func syncNow(_ target: Target) -> Outcome? {
    let claimed = condition.withLock {
      guard !busy, !halted, !stopped, !deliveryPosted, wanted == nil, !lastSyncWasSlow else {
        return false
      }
      busy = true
      newest = (target.count, target.generation)
      return true
    }
    guard claimed else { return nil }
    let (failure, slow) = timedSync(target.fd)
    return condition.withLock {
      busy = false
      syncs += 1
      lastSyncWasSlow = slow
      // No need to wake the thread: nothing can have been asked of it
      // meanwhile, since its callers run on this queue, which was here.
      guard failure != 0 else { return Outcome(synced: target, failure: nil) }
      halted = true
      wanted = nil
      newest = nil
      return Outcome(synced: nil, failure: (target, failure))
    }
  }

  /// Whether no sync is running or waiting to be delivered.
  var isIdle: Bool {
    condition.withLock { !busy && !deliveryPosted }
  }

  /// Stops starting syncs (a write failed: what it covered is being cut).
  func halt() {
    condition.withLock {
      halted = true
      wanted = nil
      newest = nil
    }
  }

  /// Syncs may start again (after a failure was handled).
  func resume() {
    condition.withLock {
      halted = false
      newest = nil
      condition.signal()
    }
  }

  /// `fdatasync` calls so far.
  var syncCount: Int { condition.withLock { syncs } }

  /// A file compaction replaced: closed as soon as no sync is using it.
  func retire(_ fd: Int32) {
    condition.withLock {
      if wanted?.fd == fd { wanted = nil }
      retired.append(fd)
      if !busy { condition.signal() }
    }
  }

  /// Syncs `fd`: the errno of a failure (0 for none), and whether it took
  /// longer than ``inlineLimit``.
  private func timedSync(_ fd: Int32) -> (failure: Int32, slow: Bool) {
    let started = DispatchTime.now()
    let failure = synchronize(fd) == 0 ? 0 : errno
    return (failure, DispatchTime.now() > started + Self.inlineLimit)
  }

  private func run() {
    condition.lock()
    while true {
      for fd in retired { Glibc.close(fd) }
      retired.removeAll()
      if stopped { break }
      guard !halted, let target = wanted else {
        condition.wait()
        continue
      }
      wanted = nil
      busy = true
      condition.unlock()
      let (failure, slow) = timedSync(target.fd)
      condition.lock()
      busy = false
      syncs += 1
      lastSyncWasSlow = slow
      if failure == 0 {
        delivery.synced = target
      } else {
        delivery.failure = (target, failure)
        halted = true
        wanted = nil
        newest = nil
      }
      if !deliveryPosted {
        deliveryPosted = true
        post { [self] in
          let outcome = condition.withLock {
            deliveryPosted = false
            let outcome = delivery
            delivery = Outcome()
            return outcome
          }
          deliver(outcome)
        }
      }
    }
    condition.unlock()
  }
}

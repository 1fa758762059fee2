import CShims
import Dispatch
import Foundation
import Glibc

/// The readiness of every connection, through one epoll instance of the
/// server's own, waited on by a thread of its own that serves each pass on
/// the engine's queue.
///
/// A dispatch source per connection cost, for every event, a wake-up of
/// libdispatch's manager thread, a `FIONREAD` ioctl, a hop to the queue's
/// thread, and after the handler an `eventfd` write to wake the manager
/// again to re-arm the one-shot registration: under `chatbench durable` at
/// 100 clients, `perf record -g` put a third of the broker's CPU in the
/// scheduler and wake-up paths. Here the kernel wakes this thread straight
/// from `epoll_wait`, it takes the queue with `sync` (run on this thread
/// when the queue is idle: no hop), hands over every ready connection, and
/// the server ends the pass as it ends any event (``Server/afterEvent()``):
/// one journal write, one sync request and one flush for all the requests
/// of the pass, as Redis writes its AOF once per turn of its event loop.
///
/// Registrations are level-triggered. A connection watched for nothing is
/// registered one-shot: epoll reports a hang-up even to a registration that
/// asked for nothing, and reporting it on every pass would spin.
final class ReadinessPoll: @unchecked Sendable {
  /// What a connection waits for.
  struct Interest: OptionSet {
    let rawValue: UInt32
    static let readable = Interest(rawValue: EPOLLIN.rawValue)
    static let writable = Interest(rawValue: EPOLLOUT.rawValue)
  }

  /// One ready registration: its token and what epoll reported.
  struct Event {
    let token: UInt64
    let events: UInt32

    /// Reading would not block: bytes, end of input or an error to read.
    var isReadable: Bool {
      events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
    }
    /// Writing would not block, or would fail at once.
    var isWritable: Bool {
      events & (EPOLLOUT.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
    }
  }

  /// The most registrations one pass hands over; more wait for the next.
  static let eventsPerPass = 256
  /// The token of the ``Mailbox``'s eventfd, which no connection has (its
  /// slot would be 2³² − 1).
  private static let mailboxToken = UInt64.max

  private let queue: DispatchQueue
  private let descriptor: Int32
  private let mailbox: Mailbox

  /// Creates the epoll instance, idle until ``start(ready:endOfPass:)``.
  init(queue: DispatchQueue) throws(SystemError) {
    self.queue = queue
    descriptor = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    do throws(SystemError) {
      mailbox = try Mailbox()
      var event = Self.event(token: Self.mailboxToken, interest: .readable)
      _ = try systemCall("epoll_ctl") {
        epoll_ctl(descriptor, EPOLL_CTL_ADD, mailbox.descriptor, &event)
      }
    } catch {
      Glibc.close(descriptor)
      throw error
    }
  }

  /// From now on `ready` is called on the queue for each ready
  /// registration of a pass, then `endOfPass` once (Sendable because the
  /// waiting thread holds them; they only ever run on the queue).
  func start(
    ready: @escaping @Sendable (Event) -> Void, endOfPass: @escaping @Sendable () -> Void
  ) {
    let thread = Thread { [queue, descriptor, mailbox] in
      Thread.current.name = "chatbroker-poll"  // see GroupCommit.start()
      Self.wait(on: descriptor, mailbox: mailbox, queue: queue, ready: ready, endOfPass: endOfPass)
    }
    thread.start()
  }

  deinit {
    mailbox.stop()
  }

  /// Runs `block` on the queue as part of the next pass, from any thread.
  /// The journal's sync thread delivers through here rather than with
  /// `queue.async`: the queue would otherwise pass between this thread and
  /// a libdispatch worker on every sync, a futex wake-up each way (measured
  /// with `chatbench durable` at 10 clients: 90–104k acknowledgements a
  /// second with `queue.async`, 115–119k through here).
  func post(_ block: @escaping @Sendable () -> Void) {
    mailbox.post(block)
  }

  /// The waiting thread: every pass is served on `queue`, in one block.
  private static func wait(
    on descriptor: Int32, mailbox: Mailbox, queue: DispatchQueue,
    ready: (Event) -> Void, endOfPass: () -> Void
  ) {
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: eventsPerPass)
    defer {
      events.deallocate()
      Glibc.close(descriptor)
    }
    while true {
      let count = epoll_wait(descriptor, events.baseAddress, Int32(eventsPerPass), -1)
      guard count > 0 else {
        // EBADF or EINVAL: a bug, and a broker that stopped serving must
        // not go on looking alive.
        if count < 0 && errno != EINTR { fatalError(SystemError("epoll_wait").description) }
        continue
      }
      let pass = events[0..<Int(count)]
      var posted: [@Sendable () -> Void] = []
      if pass.contains(where: { $0.data.u64 == mailboxToken }) {
        guard let blocks = mailbox.take() else { return }
        posted = blocks
      }
      queue.sync {
        for block in posted { block() }
        for event in pass where event.data.u64 != mailboxToken {
          ready(Event(token: event.data.u64, events: event.events))
        }
        endOfPass()
      }
    }
  }

  /// Blocks posted from other threads, and the eventfd that wakes the
  /// waiting thread for them or to stop it.
  private final class Mailbox: @unchecked Sendable {
    let descriptor: Int32
    private let lock = NSLock()
    private var blocks: [@Sendable () -> Void] = []
    private var signalled = false
    private var stopped = false

    init() throws(SystemError) {
      descriptor = try systemCall("eventfd") {
        eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
      }
    }

    deinit {
      Glibc.close(descriptor)
    }

    func post(_ block: @escaping @Sendable () -> Void) {
      let wake = lock.withLock {
        blocks.append(block)
        defer { signalled = true }
        return !signalled
      }
      if wake { signal() }
    }

    func stop() {
      lock.withLock { stopped = true }
      signal()
    }

    /// What was posted since the last call, or nil once stopped.
    func take() -> [@Sendable () -> Void]? {
      var count: UInt64 = 0
      _ = Glibc.read(descriptor, &count, MemoryLayout<UInt64>.size)
      return lock.withLock {
        signalled = false
        defer { blocks.removeAll() }
        return stopped ? nil : blocks
      }
    }

    private func signal() {
      var one: UInt64 = 1
      _ = Glibc.write(descriptor, &one, MemoryLayout<UInt64>.size)
    }
  }

  /// Registers `fd`, watched for nothing until ``watch(_:token:for:)``.
  /// Fails only when the kernel has no room for another registration
  /// (`ENOMEM`, or `ENOSPC` at `max_user_watches`).
  func register(_ fd: Int32, token: UInt64) throws(SystemError) {
    var event = Self.event(token: token, interest: [])
    _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor, EPOLL_CTL_ADD, fd, &event) }
  }

  /// Changes what a registered `fd` is watched for. It cannot fail for a
  /// registered descriptor, which is the caller's to ensure.
  func watch(_ fd: Int32, token: UInt64, for interest: Interest) {
    var event = Self.event(token: token, interest: interest)
    let result = epoll_ctl(descriptor, EPOLL_CTL_MOD, fd, &event)
    assert(result == 0, "epoll_ctl(MOD) of a registered descriptor: errno \(errno)")
  }

  /// Forgets `fd`, before it is closed.
  func unregister(_ fd: Int32) {
    epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, nil)
  }

  private static func event(token: UInt64, interest: Interest) -> epoll_event {
    let events = interest.isEmpty ? EPOLLONESHOT.rawValue : interest.rawValue
    return epoll_event(events: events, data: epoll_data_t(u64: token))
  }
}

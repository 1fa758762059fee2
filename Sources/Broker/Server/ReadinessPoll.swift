import CShims
import Dispatch
import Foundation
import Glibc

/// The engine's event loop: one epoll instance of the server's own, waited
/// on by a thread of its own that serves each pass on the engine's queue.
/// Everything the broker does happens in a pass: connections' readiness,
/// the listeners', the schedule timer (a `CLOCK_REALTIME` timerfd), the
/// loop's own deadlines (a `CLOCK_MONOTONIC` timerfd), and what other
/// threads hand in through the mailbox (``post(_:)``): the journal's sync
/// results and zero-filling, compaction steps, NATS deliveries and link
/// states. The README ("How it is built") lists them.
///
/// A dispatch source per connection cost, for every event, a wake-up of
/// libdispatch's manager thread, a `FIONREAD` ioctl, a hop to the queue's
/// thread, and after the handler an `eventfd` write to wake the manager
/// again to re-arm the one-shot registration: under `chatbench durable` at
/// 100 clients, `perf record -g` put a third of the broker's CPU in the
/// scheduler and wake-up paths. Here the kernel wakes this thread straight
/// from `epoll_wait`, it takes the queue with `sync` (run on this thread
/// when the queue is idle: no hop), hands over every ready registration,
/// and the server ends the pass (``Server/endOfPass()``): one journal
/// write, one sync request and one flush for all the requests of the
/// pass, as Redis writes its AOF once per turn of its event loop.
///
/// Registrations are level-triggered. A connection watched for nothing is
/// registered one-shot: epoll reports a hang-up even to a registration that
/// asked for nothing, and reporting it on every pass would spin.
final class ReadinessPoll: JournalLoop, @unchecked Sendable {
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

  /// What a pass hands to the server, in this order: blocks posted and
  /// deadlines due, the schedule timer, then each ready registration,
  /// then the end of the pass.
  struct Handlers {
    var timerFired: () -> Void
    var ready: (Event) -> Void
    var endOfPass: () -> Void
  }

  /// The most registrations one pass hands over; more wait for the next.
  static let eventsPerPass = 256
  /// Tokens of registrations that are no connection: their low half has
  /// its top bit set, which no connection's slot has (see
  /// ``ConnectionID/pollToken``).
  private static let mailboxToken = UInt64.max
  private static let deadlineToken = UInt64.max - 1
  private static let wallTimerToken = UInt64.max - 2
  /// The token of the server's `index`th listener.
  static func listenerToken(_ index: Int) -> UInt64 { 0x8000_0000 | UInt64(index) }
  /// The listener a token names, if it names one.
  static func listenerIndex(_ token: UInt64) -> Int? {
    token >> 31 == 1 ? Int(token & 0x7FFF_FFFF) : nil
  }

  private let queue: DispatchQueue
  private let descriptor: Int32
  private let mailbox: Mailbox
  private let timers: Timers

  /// Creates the epoll instance, idle until ``start(_:)``.
  init(queue: DispatchQueue) throws(SystemError) {
    self.queue = queue
    descriptor = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    do throws(SystemError) {
      mailbox = try Mailbox()
      timers = try Timers()
      for (fd, token) in [
        (mailbox.descriptor, Self.mailboxToken), (timers.deadlineDescriptor, Self.deadlineToken),
        (timers.wallDescriptor, Self.wallTimerToken),
      ] {
        var event = Self.event(token: token, interest: .readable)
        _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor, EPOLL_CTL_ADD, fd, &event) }
      }
    } catch {
      Glibc.close(descriptor)
      throw error
    }
  }

  /// From now on every pass runs `handlers` on the queue (Sendable because
  /// the waiting thread holds them; they only ever run on the queue).
  func start(_ handlers: Handlers) {
    let handlers = UncheckedHandlers(handlers)
    let thread = Thread { [queue, descriptor, mailbox, timers] in
      Thread.current.name = "chatbroker-poll"  // see GroupCommit.start()
      Self.wait(
        on: descriptor, mailbox: mailbox, timers: timers, queue: queue,
        handlers: handlers.handlers)
    }
    thread.start()
  }

  private struct UncheckedHandlers: @unchecked Sendable {
    let handlers: Handlers
    init(_ handlers: Handlers) { self.handlers = handlers }
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

  /// Runs `block` in the first pass after `milliseconds` have passed on
  /// the monotonic clock. Called on the queue.
  func after(milliseconds: Int, _ block: @escaping @Sendable () -> Void) {
    timers.add(due: Timers.now() + UInt64(max(0, milliseconds)) * 1_000_000, block)
  }

  /// Arms the schedule timer for the wall clock's `milliseconds` since
  /// the epoch, or disarms it (`nil`); it replaces any earlier arming. An
  /// absolute `CLOCK_REALTIME` timer: when the clock is set forward or
  /// back, it fires when the clock shows its time.
  func armWallClockTimer(at milliseconds: Int64?) {
    timers.armWall(at: milliseconds)
  }

  /// The waiting thread: every pass is served on `queue`, in one block.
  private static func wait(
    on descriptor: Int32, mailbox: Mailbox, timers: Timers, queue: DispatchQueue,
    handlers: Handlers
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
      var deadlines = false
      var wallTimer = false
      for event in pass {
        switch event.data.u64 {
        case mailboxToken:
          guard let blocks = mailbox.take() else { return }
          posted = blocks
        case deadlineToken: deadlines = true
        case wallTimerToken: wallTimer = true
        default: break
        }
      }
      queue.sync {
        for block in posted { block() }
        if deadlines { timers.runDue() }
        if wallTimer && timers.wallTimerExpired() { handlers.timerFired() }
        for event in pass where event.data.u64 < wallTimerToken {
          handlers.ready(Event(token: event.data.u64, events: event.events))
        }
        handlers.endOfPass()
      }
    }
  }

  /// The loop's two timerfds: the deadlines of ``after(milliseconds:_:)``
  /// on the monotonic clock, armed for the earliest, and the schedule
  /// timer on the wall clock. The deadlines are the queue's.
  private final class Timers: @unchecked Sendable {
    let deadlineDescriptor: Int32
    let wallDescriptor: Int32
    /// Pending deadlines, latest first, so the due ones pop off the end;
    /// the sequence number keeps blocks due at the same instant in order.
    private var pending: [(due: UInt64, sequence: Int, block: () -> Void)] = []
    private var sequence = 0
    private var armedFor: UInt64?

    init() throws(SystemError) {
      let flags = Int32(TFD_CLOEXEC) | Int32(TFD_NONBLOCK)
      deadlineDescriptor = try systemCall("timerfd_create") {
        timerfd_create(CLOCK_MONOTONIC, flags)
      }
      do throws(SystemError) {
        wallDescriptor = try systemCall("timerfd_create") { timerfd_create(CLOCK_REALTIME, flags) }
      } catch {
        Glibc.close(deadlineDescriptor)
        throw error
      }
    }

    deinit {
      Glibc.close(deadlineDescriptor)
      Glibc.close(wallDescriptor)
    }

    func add(due: UInt64, _ block: @escaping () -> Void) {
      sequence += 1
      let index = pending.firstIndex { $0.due < due || ($0.due == due && $0.sequence < sequence) }
      pending.insert((due, sequence, block), at: index ?? pending.count)
      armDeadline()
    }

    /// In a pass whose deadline timer fired: runs every block now due.
    func runDue() {
      drain(deadlineDescriptor)
      armedFor = nil
      let now = Self.now()
      while let last = pending.last, last.due <= now {
        pending.removeLast()
        last.block()
      }
      armDeadline()
    }

    private func armDeadline() {
      guard let earliest = pending.last?.due else { return }
      guard armedFor.map({ earliest < $0 }) ?? true else { return }
      armedFor = earliest
      // 0 would disarm: at least 1 ns.
      Self.arm(deadlineDescriptor, nanoseconds: max(earliest, 1))
    }

    /// `CLOCK_MONOTONIC`, the deadline timer's clock, in nanoseconds.
    static func now() -> UInt64 {
      var time = timespec()
      clock_gettime(CLOCK_MONOTONIC, &time)
      return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    func armWall(at milliseconds: Int64?) {
      guard let milliseconds else {
        var off = itimerspec()
        timerfd_settime(wallDescriptor, 0, &off, nil)
        return
      }
      Self.arm(wallDescriptor, nanoseconds: UInt64(max(milliseconds, 1)) * 1_000_000)
    }

    /// Whether the schedule timer really expired (a re-arming since epoll
    /// reported it may have cleared it).
    func wallTimerExpired() -> Bool { drain(wallDescriptor) }

    private static func arm(_ fd: Int32, nanoseconds: UInt64) {
      var spec = itimerspec()
      spec.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
      spec.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
      let result = timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
      assert(result == 0, "timerfd_settime: errno \(errno)")
    }

    /// Reads a timerfd's expirations: whether there were any.
    @discardableResult
    private func drain(_ fd: Int32) -> Bool {
      var expirations: UInt64 = 0
      return Glibc.read(fd, &expirations, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size
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

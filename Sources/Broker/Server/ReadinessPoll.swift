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
  /// The token of ``stopSignal``, which no connection has (its slot would
  /// be 2³² − 1).
  private static let stopToken = UInt64.max

  private let queue: DispatchQueue
  private let descriptor: Int32
  /// An eventfd the waiting thread watches too: written once, it ends the
  /// thread, which then closes both descriptors.
  private let stopSignal: Int32

  /// Creates the epoll instance, idle until ``start(ready:endOfPass:)``.
  init(queue: DispatchQueue) throws(SystemError) {
    self.queue = queue
    descriptor = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    do throws(SystemError) {
      stopSignal = try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC)) }
      var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: Self.stopToken))
      _ = try systemCall("epoll_ctl") { epoll_ctl(descriptor, EPOLL_CTL_ADD, stopSignal, &event) }
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
    let thread = Thread { [queue, descriptor, stopSignal] in
      Self.wait(
        on: descriptor, until: stopSignal, queue: queue, ready: ready, endOfPass: endOfPass)
    }
    thread.name = "chatbroker.poll"
    thread.start()
  }

  deinit {
    var one: UInt64 = 1
    _ = Glibc.write(stopSignal, &one, MemoryLayout<UInt64>.size)
  }

  /// The waiting thread: every pass is served on `queue`, in one block.
  private static func wait(
    on descriptor: Int32, until stopSignal: Int32, queue: DispatchQueue,
    ready: (Event) -> Void, endOfPass: () -> Void
  ) {
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: eventsPerPass)
    defer {
      events.deallocate()
      Glibc.close(stopSignal)
      Glibc.close(descriptor)
    }
    while true {
      let count = epoll_wait(descriptor, events.baseAddress, Int32(eventsPerPass), -1)
      guard count > 0 else {
        if count < 0 && errno != EINTR { return }  // EBADF, EINVAL: nothing to wait on
        continue
      }
      let pass = events[0..<Int(count)]
      if pass.contains(where: { $0.data.u64 == stopToken }) { return }
      queue.sync {
        for event in pass { ready(Event(token: event.data.u64, events: event.events)) }
        endOfPass()
      }
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

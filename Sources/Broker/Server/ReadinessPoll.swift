import CShims
import Dispatch
import Glibc

/// The readiness of every connection, through one epoll instance of the
/// server's own that a single dispatch source watches.
///
/// A dispatch source per connection cost, for every event, a wake-up of
/// libdispatch's manager thread, a `FIONREAD` ioctl, a hop to the queue's
/// thread and an `epoll_ctl` to re-arm the one-shot registration: under
/// `chatbench durable` at 100 clients, `perf record -g` put a third of the
/// broker's CPU in the scheduler and wake-up paths. Here one source event
/// hands over every ready connection at once, and the server ends the pass
/// as it ends any event (``Server/afterEvent()``): one journal write, one
/// sync request and one flush for all the requests of the pass, as Redis
/// writes its AOF once per turn of its event loop.
///
/// Registrations are level-triggered. A connection watched for nothing is
/// registered one-shot: epoll reports a hang-up even to a registration that
/// asked for nothing, and reporting it on every pass would spin.
final class ReadinessPoll {
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

  private let descriptor: Int32
  private let source: DispatchSourceRead
  private let events: UnsafeMutableBufferPointer<epoll_event>

  /// Creates the epoll instance, idle until ``start(ready:endOfPass:)``.
  init(queue: DispatchQueue) throws(SystemError) {
    descriptor = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    events = .allocate(capacity: Self.eventsPerPass)
    source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
    let descriptor = descriptor
    let events = events
    source.setCancelHandler {
      Glibc.close(descriptor)
      events.deallocate()
    }
  }

  /// From now on `ready` is called on the queue for each ready
  /// registration of a pass, then `endOfPass` once.
  func start(ready: @escaping (Event) -> Void, endOfPass: @escaping () -> Void) {
    let descriptor = descriptor
    let events = events
    source.setEventHandler {
      // Level-triggered on libdispatch's side too: registrations left
      // ready after this pass make the source fire again.
      let count = epoll_wait(descriptor, events.baseAddress, Int32(Self.eventsPerPass), 0)
      guard count > 0 else { return }
      for event in events[0..<Int(count)] {
        ready(Event(token: event.data.u64, events: event.events))
      }
      endOfPass()
    }
    source.resume()
  }

  deinit {
    source.cancel()
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

import Broker
import CSystemd
import Dispatch
import Glibc

/// What chatbroker uses of systemd, through libsystemd itself: sockets passed
/// by socket activation, and `sd_notify` for readiness, status and watchdog.
/// Without systemd every call here is a cheap no-op.
enum Systemd {
  struct PassedSocketError: Error, CustomStringConvertible {
    let description: String
  }

  /// The listening sockets systemd passed (`LISTEN_FDS`), checked to be
  /// listening `AF_UNIX` stream sockets, but for those named "web"
  /// (chatbroker-web.socket): listening TCP sockets on a loopback address;
  /// empty when not socket-activated.
  static func passedSockets() throws(PassedSocketError) -> [(fd: Int32, name: String)] {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let count = sd_listen_fds_with_names(1, &names)
    guard count > 0 else {
      if count < 0 {
        throw PassedSocketError(
          description:
            "cannot read the sockets systemd passed: \(String(cString: strerror(-count)))")
      }
      return []
    }
    defer {
      for index in 0..<Int(count) { free(names?[index]) }
      free(names)
    }
    var sockets: [(Int32, String)] = []
    for index in 0..<count {
      let fd = SD_LISTEN_FDS_START + index
      let name = names?[Int(index)].map { String(cString: $0) } ?? "unknown"
      if name == webName {
        guard sd_is_socket_inet(fd, Int32(AF_UNSPEC), Int32(SOCK_STREAM.rawValue), 1, 0) > 0,
          LoopbackTCP.Endpoint(of: fd, peer: false)?.isLoopback == true
        else {
          throw PassedSocketError(
            description:
              "the socket systemd passed as web (fd \(fd)) is \(describe(fd)), not a listening TCP socket on a loopback address; use ListenStream=127.0.0.1:8080 in chatbroker-web.socket"
          )
        }
      } else if sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) <= 0 {
        throw PassedSocketError(
          description:
            "the socket systemd passed as \(name) (fd \(fd)) is \(describe(fd)), not a listening AF_UNIX stream socket; use ListenStream=/run/chatbroker/chatbroker.sock in chatbroker.socket"
        )
      }
      let flags = fcntl(fd, F_GETFL)
      _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      sockets.append((fd, name))
    }
    return sockets
  }

  /// What a descriptor is, in words, for the error about a wrong socket.
  static func describe(_ fd: Int32) -> String {
    func option(_ name: Int32) -> Int32? {
      var value: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
    }
    guard let family = option(SO_DOMAIN), let type = option(SO_TYPE) else {
      return fcntl(fd, F_GETFD) < 0 ? "not open" : "not a socket"
    }
    let familyName =
      switch family {
      case AF_UNIX: "an AF_UNIX"
      case AF_INET: "an AF_INET"
      case AF_INET6: "an AF_INET6"
      case AF_NETLINK: "an AF_NETLINK"
      default: "a family \(family)"
      }
    let typeName =
      switch type {
      case Int32(SOCK_STREAM.rawValue): "stream"
      case Int32(SOCK_DGRAM.rawValue): "datagram"
      case Int32(SOCK_SEQPACKET.rawValue): "seqpacket"
      default: "type \(type)"
      }
    let listening = option(SO_ACCEPTCONN) == 1 ? "listening" : "non-listening"
    return "\(familyName) \(typeName) socket (\(listening))"
  }

  /// The name of the browser door's sockets (FileDescriptorName=web).
  static let webName = "web"

  static func notify(_ state: String) {
    _ = sd_notify(0, state)
  }

  /// Waits (bounded) until systemd has processed what was sent before.
  static func barrier(timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    _ = sd_notify_barrier(0, UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000))
  }

  /// The watchdog interval systemd expects pings within, if it set one.
  static func watchdogInterval() -> DispatchTimeInterval? {
    var microseconds: UInt64 = 0
    guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
    return .microseconds(Int(microseconds))
  }
}

/// Sends `STATUS=` to systemd when the counts change, at most once a second.
///
/// `changed()` is called at the end of every pass of the engine, so it must be
/// cheap: it reads the clock, and the status text is built at most once a
/// second (when a check is due), not once per event. Without systemd
/// (no `NOTIFY_SOCKET`) it does nothing at all. Confined to `queue`.
final class StatusReporter {
  private let queue: DispatchQueue
  private let enabled: Bool
  private let status: () -> String
  private let interval: UInt64 = 1_000_000_000
  private var lastSent = ""
  /// When the text was last built (uptime ns); nil before the first time.
  private var lastCheck: UInt64?
  private var checkScheduled = false

  init(queue: DispatchQueue, enabled: Bool, status: @escaping () -> String) {
    self.queue = queue
    self.enabled = enabled
    self.status = status
  }

  func changed() {
    guard enabled, !checkScheduled else { return }
    let now = DispatchTime.now().uptimeNanoseconds
    guard let last = lastCheck, now &- last < interval else {
      check()
      return
    }
    checkScheduled = true
    let reporter = UncheckedBox(self)
    queue.asyncAfter(deadline: .now() + .nanoseconds(Int(interval - (now - last)))) {
      reporter.value.checkScheduled = false
      reporter.value.check()
    }
  }

  private func check() {
    lastCheck = DispatchTime.now().uptimeNanoseconds
    let text = status()
    guard text != lastSent else { return }
    lastSent = text
    Systemd.notify("STATUS=\(text)")
  }
}

/// Carries a queue-confined object into a Dispatch closure on that queue.
struct UncheckedBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

#if canImport(Glibc)
  import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP as a descriptor that poll(2) can wait on, by
/// the self-pipe trick: the handler only writes the signal's number into a
/// pipe. `chatsh tail` waits on it beside the broker's socket, so that an
/// interrupted tail can leave the rooms it joined before it ends
/// (chatsh(1), tail), then ends by the signal as before.
enum Interrupt {
  /// Read end and write end, both non-blocking and close-on-exec.
  static let pipe: (read: Int32, write: Int32) = {
    var ends: [Int32] = [-1, -1]
    guard Glibc.pipe(&ends) == 0 else { return (-1, -1) }
    for end in ends {
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
    }
    return (ends[0], ends[1])
  }()

  static let signals = [SIGINT, SIGTERM, SIGHUP]

  /// Installs the handlers (the pipe is made first: a handler must not be
  /// the one to create it).
  static func catchSignals() {
    guard pipe.write >= 0 else { return }
    for number in signals {
      signal(number) { number in
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(Interrupt.pipe.write, &byte, 1)
      }
    }
  }

  /// The signal that arrived, if one did.
  static func received() -> Int32? {
    var byte: UInt8 = 0
    return read(pipe.read, &byte, 1) == 1 ? Int32(byte) : nil
  }

  /// Waits up to `seconds` for a signal; the one that came, or nil.
  static func wait(seconds: Int) -> Int32? {
    var ready = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
    _ = poll(&ready, 1, Int32(seconds * 1000))
    return received()
  }

  /// Ends the process by `number`, as the signal itself would have.
  static func end(by number: Int32) -> Never {
    signal(number, SIG_DFL)
    raise(number)
    exit(128 + number)
  }
}

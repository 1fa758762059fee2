#if canImport(Glibc)
  import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP as a descriptor that poll(2) can wait on, by
/// the self-pipe trick: the handler only writes the signal's number into a
/// pipe. `chatsh tail` and the chat screen wait on it beside the broker's
/// socket, so that an interrupted tail can leave the rooms it joined before
/// it ends (chatsh(1), tail) and the screen can give the terminal back,
/// then end by the signal as before.
///
/// A terminal that hangs up without a SIGHUP reaching chatsh (its session
/// leader, such as su(1), went first) counts as SIGHUP: poll(2) reports
/// POLLHUP or POLLERR on it for ever after, and a loop that only reads
/// would spin on it (chatsh(1), "SIGNALS").
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

  /// Standard input and output, those of them that are terminals: watched
  /// for hang-up.
  static let terminals: [Int32] = [0, 1].filter { isatty($0) == 1 }

  /// Whether `revents` of a terminal say it is gone: hung up, or in error
  /// (POLLNVAL: the descriptor was closed under chatsh).
  static func isHangUp(_ revents: Int16) -> Bool {
    revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
  }

  /// SIGHUP when one of `revents` (of ``terminals``) says its terminal is
  /// gone, else the signal that arrived, if one did.
  static func received(terminals revents: some Sequence<Int16>) -> Int32? {
    revents.contains(where: isHangUp) ? SIGHUP : received()
  }

  /// Waits up to `seconds` for a signal or a terminal's hang-up; the signal
  /// (SIGHUP for the hang-up), or nil.
  static func wait(seconds: Int) -> Int32? {
    var ready = [pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)]
    for terminal in terminals { ready.append(pollfd(fd: terminal, events: 0, revents: 0)) }
    _ = poll(&ready, nfds_t(ready.count), Int32(seconds * 1000))
    return received(terminals: ready.dropFirst().map(\.revents))
  }

  /// Ends the process by `number`, as the signal itself would have.
  static func end(by number: Int32) -> Never {
    signal(number, SIG_DFL)
    raise(number)
    exit(128 + number)
  }
}

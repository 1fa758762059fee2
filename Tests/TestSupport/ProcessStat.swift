import Glibc

/// What proc(5) says of a process in /proc/PID/stat: its state and the
/// processor time it has used. Read with read(2) to the end, as procfs
/// files must be (their size is 0; Foundation's String(contentsOfFile:)
/// may stop short).
public struct ProcessStat: Sendable {
  /// The state letter: R running, S sleeping, Z zombie, ...
  public let state: Character
  /// User plus system time, in seconds.
  public let cpuSeconds: Double

  /// The process's stat now; nil when there is no such process.
  public init?(pid: pid_t) {
    let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    // The command name is in parentheses and may hold spaces: the fields
    // are counted after the last ')'.
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = String(decoding: bytes[(close + 1)...], as: UTF8.self)
      .split(separator: " ")
    // After ')': state is field 3 of proc(5), utime 14 and stime 15.
    guard fields.count > 12, let state = fields[0].first, let user = Double(fields[11]),
      let system = Double(fields[12])
    else { return nil }
    self.state = state
    cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  /// Whether the process has ended (gone, or a zombie not yet reaped).
  public static func hasEnded(_ pid: pid_t) -> Bool {
    guard let stat = ProcessStat(pid: pid) else { return true }
    return stat.state == "Z" || stat.state == "X"
  }
}

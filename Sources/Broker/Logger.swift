import Foundation
import LineProtocol

/// One line per event: a constant message plus `key=value` fields, as
/// swift-log recommends, so logs can be grepped and parsed. Passed in, not
/// global. Under systemd (stderr connected to the journal) each line carries
/// an `sd-daemon` priority prefix such as `<4>` so `journalctl -p` works.
public struct Logger: Sendable {
  public enum Level: Int, Sendable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    var name: String {
      switch self {
      case .error: "error"
      case .warning: "warning"
      case .notice: "notice"
      case .info: "info"
      case .debug: "debug"
      }
    }
  }

  /// Receives finished lines, LF included; `nil` discards them (tests).
  let sink: (@Sendable (String) -> Void)?
  let priorityPrefix: Bool
  let minimumLevel: Level

  public init(
    sink: (@Sendable (String) -> Void)?, priorityPrefix: Bool = false,
    minimumLevel: Level = .info
  ) {
    self.sink = sink
    self.priorityPrefix = priorityPrefix
    self.minimumLevel = minimumLevel
  }

  /// Writes to standard error, with priority prefixes when stderr is the
  /// stream systemd's `JOURNAL_STREAM` names.
  public static func standardError(minimumLevel: Level = .info) -> Logger {
    Logger(
      sink: { line in
        // One write(2) per line, so lines from threads never interleave.
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
      }, priorityPrefix: stderrIsJournal(), minimumLevel: minimumLevel)
  }

  public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.error, message, fields)
  }

  public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.warning, message, fields)
  }

  public func notice(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.notice, message, fields)
  }

  public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.info, message, fields)
  }

  public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
    log(.debug, message, fields)
  }

  /// Whether lines of `level` are written: callers on a hot path ask before
  /// they build the fields of a debug line.
  public func isLogging(_ level: Level) -> Bool {
    sink != nil && level.rawValue <= minimumLevel.rawValue
  }

  public func log(_ level: Level, _ message: String, _ fields: KeyValuePairs<String, String>) {
    log(level, message, fields: fields.map { ($0.key, $0.value) })
  }

  /// The same, with fields put together at run time.
  public func log(_ level: Level, _ message: String, fields: [(key: String, value: String)]) {
    guard let sink, level.rawValue <= minimumLevel.rawValue else { return }
    var line = priorityPrefix ? "<\(level.rawValue)>" : ""
    line += "level=\(level.name) msg=\(Self.quote(message))"
    for (key, value) in fields {
      line += " \(key)=\(Self.quote(value))"
    }
    sink(line + "\n")
  }

  /// Quotes a value, as a JSON string, when it is empty or holds a space,
  /// quote, `=` or control character.
  static func quote(_ value: String) -> String {
    let needsQuotes =
      value.isEmpty
      || value.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
    return needsQuotes ? JSONString.quoted(value) : value
  }

  /// `JOURNAL_STREAM` is `device:inode` of the stream systemd connected;
  /// it counts only if stderr is still that stream. Public for the few lines
  /// the daemon writes before or without a logger.
  public static func stderrIsJournal() -> Bool {
    guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
    let parts = stream.split(separator: ":")
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
      return false
    }
    var status = stat()
    guard fstat(STDERR_FILENO, &status) == 0 else { return false }
    return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
  }
}

import LineProtocol

/// Says in the log what a user keeps doing at most `perMinute` times a
/// minute per user and kind: a client that reaches a limit, or connects,
/// thousands of times a second must not flood the log (chatbroker(8),
/// "LOGGING" and "SECURITY CONSIDERATIONS"). The next line after the minute
/// counts the ones left out.
struct LimitLog {
  private struct Key: Hashable {
    let kind: String
    let user: String
  }

  private struct Window {
    var start: Timestamp
    var logged: Int
    var suppressed: Int
  }

  private var windows: [Key: Window] = [:]
  static let interval: Int64 = 60_000
  /// Lines per user and kind within a minute.
  let perMinute: Int

  init(perMinute: Int = 1) {
    self.perMinute = max(1, perMinute)
  }

  /// Whether to log this one: nil when it stays out of the log, otherwise
  /// how many were left out since the last one logged.
  mutating func admit(_ kind: String, user: String, now: Timestamp) -> Int? {
    let key = Key(kind: kind, user: user)
    if var window = windows[key], now.milliseconds - window.start.milliseconds < Self.interval,
      now >= window.start
    {
      guard window.logged < perMinute else {
        windows[key]?.suppressed += 1
        return nil
      }
      window.logged += 1
      windows[key] = window
      return 0
    }
    let suppressed = windows[key]?.suppressed ?? 0
    // Only users seen within the interval stay: the table stays small.
    if windows.count > 4096 {
      windows = windows.filter { now.milliseconds - $0.value.start.milliseconds < Self.interval }
    }
    windows[key] = Window(start: now, logged: 1, suppressed: 0)
    return suppressed
  }

  /// The fields of a `limit reached` line to log now, with `suppressed=`
  /// when some were left out; nil when this refusal stays out of the log.
  mutating func admit(
    _ limit: String, user: String, now: Timestamp, _ fields: [(key: String, value: String)]
  ) -> [(key: String, value: String)]? {
    guard let suppressed = admit(limit, user: user, now: now) else { return nil }
    var admitted = [(key: "limit", value: limit), (key: "user", value: user)] + fields
    if suppressed > 0 { admitted.append((key: "suppressed", value: "\(suppressed)")) }
    return admitted
  }
}

extension Engine {
  /// Logs that `user` reached `limit`, rate-limited by ``LimitLog``.
  func logLimit(_ limit: String, user: String, _ fields: [(key: String, value: String)] = []) {
    guard let admitted = limitLog.admit(limit, user: user, now: clock.now, fields) else { return }
    log.log(.warning, "limit reached", fields: admitted)
  }
}

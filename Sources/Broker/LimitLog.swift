import LineProtocol

/// Says in the log when a user reaches a limit, at most once a minute per
/// user and limit: a client that keeps hitting a limit thousands of times a
/// second must not flood the log (chatbroker(8), "SECURITY CONSIDERATIONS").
/// The next line after a quiet minute counts the refusals left unlogged.
struct LimitLog {
  private struct Key: Hashable {
    let limit: String
    let user: String
  }

  private var lastLogged: [Key: (at: Timestamp, suppressed: Int)] = [:]
  static let interval: Int64 = 60_000

  /// The fields to log now, with `suppressed=` when some were left out; nil
  /// when this refusal stays out of the log.
  mutating func admit(
    _ limit: String, user: String, now: Timestamp, _ fields: [(key: String, value: String)]
  ) -> [(key: String, value: String)]? {
    let key = Key(limit: limit, user: user)
    if let last = lastLogged[key], now.milliseconds - last.at.milliseconds < Self.interval,
      now >= last.at
    {
      lastLogged[key]?.suppressed += 1
      return nil
    }
    let suppressed = lastLogged[key]?.suppressed ?? 0
    // Only users seen within the interval stay: the table stays small.
    if lastLogged.count > 4096 {
      lastLogged = lastLogged.filter { now.milliseconds - $0.value.at.milliseconds < Self.interval }
    }
    lastLogged[key] = (now, 0)
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

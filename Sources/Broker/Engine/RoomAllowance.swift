import LineProtocol

/// One user's allowance of new rooms, a token bucket: it holds a minute's
/// worth, so a user may create that many rooms at once, and refills
/// steadily. Counted in rooms × 60000 so that refilling by `perMinute`
/// units per millisecond stays exact in integers.
struct RoomAllowance {
  private static let perRoom: Int64 = 60_000
  private var units: Int64
  private var updated: Int64

  init(perMinute: Int, now: Timestamp) {
    units = Self.perRoom * Int64(Self.clamped(perMinute))
    updated = now.milliseconds
  }

  /// Takes one room; or, when none is left, how many milliseconds until one
  /// will be.
  mutating func take(perMinute: Int, now: Timestamp) -> Int64? {
    let rate = Int64(Self.clamped(perMinute))
    // A full refill takes a minute; a clock set back refills nothing.
    let elapsed = min(max(0, now.milliseconds - updated), Self.perRoom)
    units = min(Self.perRoom * rate, units + elapsed * rate)
    updated = now.milliseconds
    guard units >= Self.perRoom else { return (Self.perRoom - units + rate - 1) / rate }
    units -= Self.perRoom
    return nil
  }

  private static func clamped(_ perMinute: Int) -> Int { min(max(perMinute, 1), 1 << 30) }
}

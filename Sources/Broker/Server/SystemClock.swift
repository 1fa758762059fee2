import Foundation
import Glibc
import LineProtocol

/// The real wall clock (`CLOCK_REALTIME`) and the broker's local time zone.
public final class SystemClock: WallClock {
  public let timeZone: TimeZone
  public let timeZoneName: String

  public init(zone: LocalZone = LocalZone(environment: ProcessInfo.processInfo.environment)) {
    timeZone = zone.timeZone
    timeZoneName = zone.name
  }

  public var now: Timestamp {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Timestamp(milliseconds: Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
  }
}

import Foundation
import Glibc

/// The local time zone and its name, as the broker (chatbroker(8),
/// ENVIRONMENT, `TZ`) and chatsh(1) (ENVIRONMENT) both read it: what
/// `SAYAT 09:00` and a rule without `/zone` are read in, and what chatsh
/// shows times in. Here, in the module both link, so that the two never
/// read one `TZ` two ways.
///
/// Foundation's `TimeZone.current` reads `TZ=:Europe/Berlin` (the form
/// glibc documents) as UTC and names `TZ=UTC` `GMT`; rules keep their
/// zone by name, so the broker finds the name itself, as glibc would:
/// `TZ` without its leading colon, a path under a `zoneinfo` directory as
/// the name after it, and without `TZ` the zone `/etc/localtime` links to,
/// else `/etc/timezone`, else UTC.
public struct LocalZone: Sendable {
  public let timeZone: TimeZone
  public let name: String
  /// Why `TZ` was not used, for the log; nil when it was, or is unset.
  public let problem: String?

  /// The zone this process's environment names.
  public static var current: LocalZone {
    LocalZone(environment: ProcessInfo.processInfo.environment)
  }

  public init(
    environment: [String: String], localtime: String = "/etc/localtime",
    timezoneFile: String = "/etc/timezone"
  ) {
    var problem: String?
    if var value = environment["TZ"] {
      if value.hasPrefix(":") { value.removeFirst() }
      if value.isEmpty { value = "UTC" }  // POSIX: an empty TZ is UTC
      if let found = Self.zone(named: Self.nameInZoneinfo(value) ?? value) {
        (timeZone, name, self.problem) = (found.0, found.1, nil)
        return
      }
      problem = "TZ=\(environment["TZ"] ?? "") is not a zone of the time zone database"
    }
    var path = [CChar](repeating: 0, count: 4096)
    let length = readlink(localtime, &path, path.count - 1)
    let linked =
      length > 0
      ? Self.nameInZoneinfo(
        String(decoding: path[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
      : nil
    let written = (try? String(contentsOfFile: timezoneFile, encoding: .utf8))?
      .trimmingCharacters(in: .whitespacesAndNewlines)
    for candidate in [linked, written].compactMap({ $0 }) {
      if let found = Self.zone(named: candidate) {
        (timeZone, name, self.problem) = (found.0, found.1, problem)
        return
      }
    }
    (timeZone, name, self.problem) = (TimeZone(identifier: "UTC")!, "UTC", problem)
  }

  /// `Europe/Berlin` from `/usr/share/zoneinfo/Europe/Berlin`; nil when
  /// `path` is not under a `zoneinfo` directory.
  static func nameInZoneinfo(_ path: String) -> String? {
    guard path.hasPrefix("/") || path.hasPrefix("."),
      let range = path.range(of: "zoneinfo/", options: .backwards)
    else { return nil }
    let name = String(path[range.upperBound...])
    // zoneinfo/posix/Europe/Berlin and zoneinfo/right/... name the same zone.
    for prefix in ["posix/", "right/"] where name.hasPrefix(prefix) {
      return String(name.dropFirst(prefix.count))
    }
    return name
  }

  /// The zone named `name` and how rules spell it, for names of the time
  /// zone database only (POSIX rule strings such as `CET-1CEST` are not).
  static func zone(named name: String) -> (TimeZone, String)? {
    guard !name.isEmpty, !name.hasPrefix("/"), !name.contains(".."),
      name.utf8.allSatisfy({ $0 > 32 && $0 < 127 }),
      FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + name)
        || ["UTC", "GMT"].contains(name),
      let zone = TimeZone(identifier: name)
    else { return nil }
    return (zone, name)
  }
}

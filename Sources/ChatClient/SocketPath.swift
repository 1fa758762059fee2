import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// Where chatsh looks for the broker: `--socket`, else `$CHATBROKER_SOCKET`,
/// else the first that applies of (chatsh(1), "ENVIRONMENT"):
/// 1. the system socket, when it exists;
/// 2. the per-user socket that `chatbroker` binds when a user starts it,
///    when it exists;
/// 3. the system socket when its directory exists, or for root: the
///    directory stays while the system broker is stopped or restarting,
///    and root's `chatbroker` binds there, so that is where to wait;
/// 4. the per-user socket, where a broker the user starts would bind.
public struct SocketPath: Equatable, Sendable {
  public static let system = DefaultPaths.systemSocket
  /// The system socket's directory, /run/chatbroker.
  public static let systemDirectory = String(system[..<system.lastIndex(of: "/")!])

  /// The socket to connect to.
  public let path: String
  /// The sockets looked for, in order, when none was named; empty when
  /// `--socket` or `CHATBROKER_SOCKET` named it.
  public let searched: [String]
  /// Why `path` was chosen among `searched`, for ``searchNote``.
  let reason: String

  public static func resolve(
    option: String?, environment: [String: String], uid: UInt32 = getuid(),
    exists: (String) -> Bool = { access($0, F_OK) == 0 }
  ) -> SocketPath {
    if let option, !option.isEmpty { return SocketPath(path: option, searched: [], reason: "") }
    if let fromEnvironment = environment["CHATBROKER_SOCKET"], !fromEnvironment.isEmpty {
      return SocketPath(path: fromEnvironment, searched: [], reason: "")
    }
    let perUser = DefaultPaths.perUserSocket(environment: environment, uid: uid)
    let searched = [system, perUser]
    func chosen(_ path: String, _ reason: String) -> SocketPath {
      SocketPath(path: path, searched: searched, reason: reason)
    }
    if exists(system) { return chosen(system, "the first is there") }
    if exists(perUser) { return chosen(perUser, "only the second is there") }
    if uid == 0 { return chosen(system, "neither is there; root's broker binds the first") }
    if exists(systemDirectory) {
      return chosen(
        system,
        "neither is there, but \(systemDirectory) is: the system broker is stopped or restarting")
    }
    return chosen(perUser, "neither is there, nor \(systemDirectory)")
  }

  /// Where chatsh looked, for the message when no broker answers: nil when
  /// the socket was named.
  public var searchNote: String? {
    guard !searched.isEmpty else { return nil }
    return "(chatsh looked for \(searched.joined(separator: ", then ")); \(reason))"
  }
}

import Posix

#if canImport(Glibc)
  import Glibc
#endif

/// Where chatsh looks for the broker: `--socket`, else `$CHATBROKER_SOCKET`,
/// else the system socket when it exists or for root (where `chatbroker`
/// binds when root starts it, so that is where to start one), else the
/// per-user default that `chatbroker` itself binds when started by a user.
public enum SocketPath {
  public static let system = DefaultPaths.systemSocket

  public static func resolve(
    option: String?, environment: [String: String], uid: UInt32 = getuid(),
    exists: (String) -> Bool = { access($0, F_OK) == 0 }
  ) -> String {
    if let option, !option.isEmpty { return option }
    if let fromEnvironment = environment["CHATBROKER_SOCKET"], !fromEnvironment.isEmpty {
      return fromEnvironment
    }
    if uid == 0 || exists(system) { return system }
    return perUser(environment: environment, uid: uid)
  }

  /// The socket `chatbroker` binds when a user starts it (``DefaultPaths``).
  public static func perUser(environment: [String: String], uid: UInt32) -> String {
    DefaultPaths.perUserSocket(environment: environment, uid: uid)
  }
}

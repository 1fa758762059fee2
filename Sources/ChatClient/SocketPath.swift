#if canImport(Glibc)
  import Glibc
#endif

/// Where chatsh looks for the broker: `--socket`, else `$CHATBROKER_SOCKET`,
/// else the system socket when it exists, else the per-user default that
/// `chatbroker` itself binds when started by a user.
public enum SocketPath {
  public static let system = "/run/chatbroker/chatbroker.sock"

  public static func resolve(
    option: String?, environment: [String: String], uid: UInt32 = getuid(),
    exists: (String) -> Bool = { access($0, F_OK) == 0 }
  ) -> String {
    if let option, !option.isEmpty { return option }
    if let fromEnvironment = environment["CHATBROKER_SOCKET"], !fromEnvironment.isEmpty {
      return fromEnvironment
    }
    if exists(system) { return system }
    return perUser(environment: environment, uid: uid)
  }

  /// `$XDG_RUNTIME_DIR/chatbroker/chatbroker.sock`, or
  /// `/tmp/chatbroker-$UID/chatbroker.sock` without XDG_RUNTIME_DIR.
  public static func perUser(environment: [String: String], uid: UInt32) -> String {
    if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
      return runtime + "/chatbroker/chatbroker.sock"
    }
    return "/tmp/chatbroker-\(uid)/chatbroker.sock"
  }
}
